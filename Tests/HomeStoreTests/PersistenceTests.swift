import Foundation
import GRDB
import HomeModel
import Testing
@testable import HomeStore

@Suite("Files and reopening")
struct PersistenceTests {
    @Test("what was saved is there after reopening")
    func reopen() throws {
        try withTemporaryDirectory { directory in
            do {
                let store = try HomeStore(directory: directory)
                try store.saveHomes(Fixtures.homes)
                try store.saveLastAppliedConfiguration(Data("mqtt: {}".utf8))
                try store.recordRetained(["homegate/$layout"])
            }
            let store = try HomeStore(directory: directory)
            #expect(try store.hasLayout())
            #expect(try store.loadHomes() == Fixtures.homes)
            #expect(try store.lastAppliedConfiguration() == Data("mqtt: {}".utf8))
            #expect(try store.retainedTopics() == ["homegate/$layout"])
            #expect(try store.appliedMigrations() == ["v1-layout", "v2-ledger", "v3-pairings", "v4-trigger-last-fire", "v5-history", "v6-pairing-transport"])
        }
    }

    @Test("a trigger's last fire date is there after reopening; a trigger that never fired has none")
    func lastFireDate() throws {
        try withTemporaryDirectory { directory in
            var home = Fixtures.main
            home.triggers[0].lastFireDate = Date(timeIntervalSince1970: 1_790_172_800)
            do {
                try HomeStore(directory: directory).saveHomes([home])
            }
            let loaded = try HomeStore(directory: directory).loadHomes()
            #expect(loaded == [home])
            #expect(loaded.first?.triggers.map(\.lastFireDate) == [Date(timeIntervalSince1970: 1_790_172_800), nil])
            let columns = try DatabaseQueue(path: databasePath(in: directory)).read { db in
                try Row.fetchAll(db, sql: "SELECT id, last_fire_date FROM timer_trigger ORDER BY position")
            }
            #expect(columns.map { $0["last_fire_date"] as Double? } == [1_790_172_800, nil])
        }
    }

    @Test("missing directories are created with mode 0700, the database and its WAL files with 0600")
    func modes() throws {
        try withTemporaryDirectory { scratch in
            let directory = scratch + "/var/lib/homegate"
            let store = try HomeStore(directory: directory)
            try store.saveHomes(Fixtures.homes)
            for created in [scratch + "/var", scratch + "/var/lib", directory] {
                #expect(try mode(of: created) == 0o700, "\(created)")
            }
            let database = databasePath(in: directory)
            for file in [database, database + "-wal", database + "-shm"] {
                #expect(try mode(of: file) == 0o600, "\(file)")
            }
        }
    }

    @Test("an existing directory keeps its mode; an existing database is tightened to 0600")
    func existingFiles() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
            let database = databasePath(in: directory)
            try DatabaseQueue(path: database).write { db in try db.execute(sql: "CREATE TABLE other (x)") }
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: database)
            let store = try HomeStore(directory: directory)
            try store.saveHomes([])
            #expect(try mode(of: directory) == 0o755)
            #expect(try mode(of: database) == 0o600)
            #expect(try mode(of: database + "-wal") == 0o600)
        }
    }

    @Test("the stored layout is plain tables a person can query")
    func schema() throws {
        try withTemporaryDirectory { directory in
            let store = try HomeStore(directory: directory)
            try store.saveHomes(Fixtures.homes)
            try DatabaseQueue(path: databasePath(in: directory)).read { db in
                let lamp = try Row.fetchOne(db, sql: "SELECT * FROM accessory WHERE home_id = 'home-main' AND id = 'lamp'")
                #expect(lamp?["name"] == "Floor Lamp")
                #expect(lamp?["category"] == 5)
                #expect(lamp?["room_id"] == "living")
                #expect(lamp?["bridge_id"] == "bridge")
                #expect(lamp?["position"] == 1)
                let zoneRooms = try String.fetchAll(db, sql: "SELECT room_id FROM zone_room WHERE zone_id = 'downstairs' ORDER BY position")
                #expect(zoneRooms == ["living", "kitchen"])
                let fireDate = try Double.fetchOne(db, sql: "SELECT fire_date FROM timer_trigger WHERE id = 'nightly'")
                #expect(fireDate == 1_790_000_000)
                for table in ["room", "zone", "accessory", "service_group", "action_set", "timer_trigger"] {
                    let parents = try String.fetchAll(db, sql: "SELECT \"table\" || ':' || on_delete FROM pragma_foreign_key_list(?)", arguments: [table])
                    #expect(parents == ["home:CASCADE"], "\(table)")
                }
            }
        }
    }
}

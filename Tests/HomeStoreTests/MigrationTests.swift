import Foundation
import GRDB
import HomeModel
import Testing
@testable import HomeStore

@Suite("Migrations")
struct MigrationTests {
    @Test("a new database gets every migration, in order")
    func fresh() throws {
        let store = try HomeStore.inMemory()
        #expect(try store.appliedMigrations() == ["v1-layout", "v2-ledger", "v3-pairings", "v4-trigger-last-fire", "v5-history", "v6-pairing-transport"])
        #expect(HomeStore.migrator().migrations == ["v1-layout", "v2-ledger", "v3-pairings", "v4-trigger-last-fire", "v5-history", "v6-pairing-transport"])
    }

    @Test("a database of the first release is migrated, its layout kept")
    func fromFirstRelease() throws {
        try withTemporaryDirectory { directory in
            let database = databasePath(in: directory)
            do {
                let queue = try DatabaseQueue(path: database)
                try HomeStore.migrator().migrate(queue, upTo: "v1-layout")
                try queue.write { db in
                    try db.execute(sql: "INSERT INTO home (id, name, is_primary, position) VALUES ('old', 'Old Home', 1, 0)")
                    try db.execute(sql: "INSERT INTO room (home_id, id, name, position) VALUES ('old', 'hall', 'Hall', 0)")
                    try db.execute(sql: """
                        INSERT INTO accessory (home_id, id, name, manufacturer, model, serial_number, firmware_revision, category,
                                               room_id, is_reachable, bridge_id, position, services)
                        VALUES ('old', 'fan', 'Fan', 'Acme', 'F1', '42', '1.0', 3, 'hall', 1, NULL, 0, '[]')
                        """)
                }
                #expect(try queue.read(HomeStore.migrator().appliedMigrations) == ["v1-layout"])
            }
            let store = try HomeStore(directory: directory)
            #expect(try store.appliedMigrations() == ["v1-layout", "v2-ledger", "v3-pairings", "v4-trigger-last-fire", "v5-history", "v6-pairing-transport"])
            let fan = Accessory(id: "fan", name: "Fan", manufacturer: "Acme", model: "F1", serialNumber: "42", firmwareRevision: "1.0",
                                category: .fan, roomID: "hall")
            #expect(try store.loadHomes() == [Home(id: "old", name: "Old Home", isPrimary: true, rooms: [Room(id: "hall", name: "Hall")],
                                                   accessories: [fan])])
            #expect(try store.hasLayout(), "a database that holds homes has a layout")
            try store.recordRetained(["homegate/main-house/hall/fan/fan/on"])
            #expect(try store.retainedTopics() == ["homegate/main-house/hall/fan/fan/on"])
            #expect(try store.lastAppliedConfiguration() == nil)
        }
    }

    @Test("a database from before v4-trigger-last-fire keeps its triggers, none of them fired; a fire date is then stored")
    func triggersBeforeLastFire() throws {
        try withTemporaryDirectory { directory in
            do {
                let queue = try DatabaseQueue(path: databasePath(in: directory))
                try HomeStore.migrator().migrate(queue, upTo: "v3-pairings")
                try queue.write { db in
                    try db.execute(sql: "INSERT INTO home (id, name, is_primary, position) VALUES ('h', 'Home', 1, 0)")
                    try db.execute(sql: """
                        INSERT INTO timer_trigger (home_id, id, name, fire_date, recurrence, action_set_ids, is_enabled, position)
                        VALUES ('h', 'wake', 'Wake Up', 1790000000, '{"unit":"day","every":1}', '["morning"]', 1, 0)
                        """)
                }
            }
            let store = try HomeStore(directory: directory)
            #expect(try store.appliedMigrations().last == "v6-pairing-transport")
            var homes = try store.loadHomes()
            let wake = TimerTrigger(id: "wake", name: "Wake Up", fireDate: Date(timeIntervalSince1970: 1_790_000_000),
                                    recurrence: .init(unit: .day, every: 1), actionSetIDs: ["morning"])
            #expect(homes.first?.triggers == [wake])
            #expect(wake.lastFireDate == nil)
            homes[0].triggers[0].lastFireDate = Date(timeIntervalSince1970: 1_790_086_400)
            try store.saveHomes(homes)
            #expect(try store.loadHomes().first?.triggers.first?.lastFireDate == Date(timeIntervalSince1970: 1_790_086_400))
            let column = try DatabaseQueue(path: databasePath(in: directory)).read { db in
                try Double.fetchOne(db, sql: "SELECT last_fire_date FROM timer_trigger WHERE id = 'wake'")
            }
            #expect(column == 1_790_086_400)
        }
    }

    @Test("an empty database of the first release has no layout after migrating")
    func emptyFirstRelease() throws {
        try withTemporaryDirectory { directory in
            try HomeStore.migrator().migrate(DatabaseQueue(path: databasePath(in: directory)), upTo: "v1-layout")
            let store = try HomeStore(directory: directory)
            #expect(try store.hasLayout() == false)
        }
    }

    @Test("a database a newer HomeGate migrated is refused, untouched")
    func newerSchema() throws {
        try withTemporaryDirectory { directory in
            try HomeStore(directory: directory).saveHomes(Fixtures.homes)
            let queue = try DatabaseQueue(path: databasePath(in: directory))
            try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9-future')") }
            let error = #expect(throws: StoreError.self) { _ = try HomeStore(directory: directory) }
            #expect(error?.kind == .newerSchema)
            #expect(error?.description.contains("v9-future") == true)
            #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM home") } == 2)
        }
    }
}

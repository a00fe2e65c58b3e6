import Foundation
import GRDB
import HomeModel
import Testing
@testable import HomeStore

/// Saving only what changed: the rows a change touches are written, the others left alone, and
/// what loads back is always the whole new layout.
@Suite("Incremental saves")
struct IncrementalSaveTests {
    /// Rows of `accessory` (home, id, name) and how many times SQLite changed rows in the save.
    static func save(_ homes: [Home], after previous: [Home], in directory: String) throws -> Int {
        let store = try HomeStore(directory: directory)
        let before = try store.totalChanges()
        try store.saveHomes(homes, previous: LayoutDigest(previous))
        return try store.totalChanges() - before
    }

    @Test("a rename of one accessory updates one row; a room rename rewrites only the home's small tables; the load is the new layout")
    func onlyWhatChanged() throws {
        try withTemporaryDirectory { directory in
            try HomeStore(directory: directory).saveHomes(Fixtures.homes)
            var renamed = Fixtures.homes
            renamed[0].accessories[1].name = "Renamed"
            #expect(try Self.save(renamed, after: Fixtures.homes, in: directory) == 1 + 1, "one accessory row, and the layout-saved setting")
            #expect(try HomeStore(directory: directory).loadHomes() == renamed)

            var moved = renamed
            moved[0].rooms[0].name = "Den"
            let changes = try Self.save(moved, after: renamed, in: directory)
            #expect(changes < 40, "rooms, zones, groups, action sets and triggers of one home, no accessory: \(changes)")
            #expect(try HomeStore(directory: directory).loadHomes() == moved)

            var fewer = moved
            fewer[0].accessories.removeFirst()
            fewer.append(Home(id: "new-home", name: "New Home"))
            _ = try Self.save(fewer, after: moved, in: directory)
            #expect(try HomeStore(directory: directory).loadHomes() == fewer)

            _ = try Self.save(Array(fewer.dropFirst()), after: fewer, in: directory)
            #expect(try HomeStore(directory: directory).loadHomes() == Array(fewer.dropFirst()), "a removed home takes its rows with it")
        }
    }

    @Test("an unchanged layout writes nothing but the setting")
    func unchanged() throws {
        try withTemporaryDirectory { directory in
            try HomeStore(directory: directory).saveHomes(Fixtures.homes)
            #expect(try Self.save(Fixtures.homes, after: Fixtures.homes, in: directory) == 1)
        }
    }
}

extension HomeStore {
    /// SQLite's count of rows changed on this connection.
    func totalChanges() throws -> Int {
        try read("count changes") { db in db.totalChangesCount }
    }
}

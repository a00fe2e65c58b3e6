import Foundation
import GRDB
import Testing
@testable import HomeStore

@Suite("Errors")
struct ErrorTests {
    @Test("a file that is not a database is refused, and the error names the file")
    func corruptDatabase() throws {
        try withTemporaryDirectory { directory in
            let database = databasePath(in: directory)
            let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) })
            try garbage.write(to: URL(fileURLWithPath: database))
            let error = #expect(throws: StoreError.self) { _ = try HomeStore(directory: directory) }
            #expect(error?.kind == .corruptDatabase)
            #expect(error?.path == database)
            #expect(error?.description.contains(database) == true)
            #expect(error?.description.contains("not an SQLite database") == true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == garbage, "the file is left as it was")
        }
    }

    @Test("a file where the directory should be is refused")
    func notADirectory() throws {
        try withTemporaryDirectory { scratch in
            let path = scratch + "/state"
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: StoreError.self) { _ = try HomeStore(directory: path + "/inner") }
            #expect(error?.kind == .directory)
            #expect(error?.description.hasPrefix(path) == true)
        }
    }

    @Test("a stored value that does not decode names its row and column")
    func invalidData() throws {
        try withTemporaryDirectory { directory in
            let store = try HomeStore(directory: directory)
            try store.saveHomes(Fixtures.homes)
            try DatabaseQueue(path: databasePath(in: directory)).write { db in
                try db.execute(sql: "UPDATE accessory SET services = '[{\"iid\": \"one\"}]' WHERE id = 'lamp'")
            }
            let error = #expect(throws: StoreError.self) { _ = try store.loadHomes() }
            #expect(error?.kind == .invalidData)
            #expect(error?.description.contains("accessory \"lamp\" of home \"home-main\", column services") == true)
            #expect(error?.description.contains("load the layout") == true)
        }
    }
}

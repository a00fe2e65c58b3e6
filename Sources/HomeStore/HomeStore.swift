import Foundation
import GRDB

/// The gateway's state, kept in SQLite between runs: the layout of the homes (with each
/// accessory's structure and last known values), the configuration last applied, and the ledger
/// of retained topics the gateway has published.
///
/// Every call is synchronous and safe from any thread or task; each change is one transaction,
/// so a crash leaves either the old state or the new one. The schema is brought up to date when
/// the store opens (see ``appliedMigrations()``); data is never erased to do it.
public final class HomeStore: Sendable {
    /// The database file's name in the store's directory.
    static let fileName = "homegate.sqlite"

    private let database: DatabaseQueue
    /// The database file (`:memory:` for an in-memory store); errors name it.
    let path: String

    /// Opens the store in `directory`, creating it if needed.
    ///
    /// A missing directory (and any missing parent) is created with mode 0700; an existing one
    /// is left as it is. The database, `<directory>/homegate.sqlite`, is created with mode 0600;
    /// an existing one that group or others may read or write is tightened (0644 becomes 0600).
    /// Its `-wal` and `-shm` files get the same mode. The schema is migrated to the current
    /// version; nothing stored is lost doing it.
    ///
    /// - Throws: ``StoreError`` if the directory or the file cannot be created or opened, if the
    ///   file is not a database, or if a newer HomeGate has migrated it further.
    public convenience init(directory: String) throws(StoreError) {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName).path
        try Self.createDirectory(directory)
        try Self.prepareDatabaseFile(path)
        try self.init(database: Self.openDatabase(path), path: path)
    }

    /// An in-memory store, empty and migrated: for tests. It is gone when released.
    public static func inMemory() throws(StoreError) -> HomeStore {
        let path = ":memory:"
        do {
            return try HomeStore(database: DatabaseQueue(configuration: configuration(wal: false)), path: path)
        } catch {
            throw StoreError.wrapping(error, as: .open, path: path, operation: "open the database")
        }
    }

    private init(database: DatabaseQueue, path: String) throws(StoreError) {
        self.database = database
        self.path = path
        try migrate()
    }

    /// The names of the schema versions applied to the database, in order
    /// (`["v1-layout", "v2-ledger"]`), for diagnostics.
    public func appliedMigrations() throws(StoreError) -> [String] {
        try read("list the schema versions") { db in try Self.migrator().appliedMigrations(db) }
    }

    /// Applies the migrations the database lacks; refuses a database a newer version migrated.
    private func migrate() throws(StoreError) {
        let migrator = Self.migrator()
        let unknown = try read("open the database") { db in
            try migrator.appliedIdentifiers(db).subtracting(migrator.migrations)
        }
        guard unknown.isEmpty else {
            let failure = StoreFailure("unknown schema versions: \(unknown.sorted().joined(separator: ", "))")
            throw StoreError(.newerSchema, path: path, operation: "open the database", underlyingError: failure)
        }
        do {
            try migrator.migrate(database)
        } catch {
            throw StoreError.wrapping(error, as: .migration, path: path, operation: "migrate the schema")
        }
    }

    private static func openDatabase(_ path: String) throws(StoreError) -> DatabaseQueue {
        do {
            return try DatabaseQueue(path: path, configuration: configuration(wal: true))
        } catch {
            throw StoreError.wrapping(error, as: .open, path: path, operation: "open the database")
        }
    }

    private static func configuration(wal: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.label = "HomeStore"
        configuration.foreignKeysEnabled = true
        // Another process (`homegate topics`) may hold the file for a moment.
        configuration.busyMode = .timeout(5)
        if wal { configuration.journalMode = .wal }
        return configuration
    }
}

extension HomeStore {
    /// Runs `body` in a read transaction; an error becomes a ``StoreError`` naming `operation`.
    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw StoreError.wrapping(error, as: .read, path: path, operation: operation)
        }
    }

    /// Runs `body` in a write transaction, all or nothing; an error becomes a ``StoreError``
    /// naming `operation`.
    func write<T>(_ operation: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try database.write(body)
        } catch {
            throw StoreError.wrapping(error, as: .write, path: path, operation: operation)
        }
    }
}

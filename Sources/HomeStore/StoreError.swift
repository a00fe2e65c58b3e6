import Foundation
import GRDB

/// Why the store could not do what was asked. Its description names the file, what was being
/// done and the cause, in words meant for a person reading the log:
/// `/var/lib/homegate/homegate.sqlite: cannot save the layout: SQLite error 13: database or disk is full`.
public struct StoreError: Error, CustomStringConvertible {
    /// The kind of failure, to decide what to do about it (`error.kind == .corruptDatabase`).
    public let kind: Kind
    /// The database file (or, for ``Kind/directory``, the directory); `:memory:` for an
    /// in-memory store.
    public let path: String
    /// What was being done, in words: `open the database`, `load the layout`.
    public let operation: String
    /// What went wrong underneath: an SQLite error, a file-system error, a decoding error.
    public let underlyingError: any Error

    init(_ kind: Kind, path: String, operation: String, underlyingError: any Error) {
        self.kind = kind
        self.path = path
        self.operation = operation
        self.underlyingError = underlyingError
    }

    /// Wraps an error thrown while doing `operation`, recognising a damaged database file
    /// whatever was being done.
    static func wrapping(_ error: any Error, as kind: Kind, path: String, operation: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if error is InvalidColumn {
            return StoreError(.invalidData, path: path, operation: operation, underlyingError: error)
        }
        if let error = error as? DatabaseError, [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return StoreError(.corruptDatabase, path: path, operation: operation, underlyingError: error)
        }
        return StoreError(kind, path: path, operation: operation, underlyingError: error)
    }

    /// The file, what was being done, and the cause, on one line.
    public var description: String {
        let cause = String(describing: underlyingError)
        let path = path == ":memory:" ? "in-memory database" : path
        switch kind.base {
        case .corruptDatabase:
            return "\(path): cannot \(operation): the file is damaged or is not an SQLite database (\(cause))"
        case .newerSchema:
            return "\(path): cannot \(operation): a newer HomeGate has changed the database (\(cause)); run that version or a later one"
        case .directory, .open, .migration, .write:
            return "\(path): cannot \(operation): \(cause)\(Self.fileSystemHint(for: self.path))"
        case .read, .invalidData:
            return "\(path): cannot \(operation): \(cause)"
        }
    }

    /// What the file system says about a failed write, in words SQLite's errors do not have:
    /// `; the file system is read-only`, `; the file system is full (12 KiB free)`. Empty when
    /// it says nothing of note.
    static func fileSystemHint(for path: String) -> String {
        guard path != ":memory:" else { return "" }
        var isDirectory: ObjCBool = false
        let directory = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            ? path : (path as NSString).deletingLastPathComponent
        var stats = statvfs()
        guard statvfs(directory, &stats) == 0 else { return "" }
        if stats.f_flag & UInt(ST_RDONLY) != 0 { return "; the file system of \(directory) is read-only" }
        if access(directory, W_OK) != 0 { return "; \(directory) is not writable (\(String(cString: strerror(errno))))" }
        let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        if free < 256 * 1024 { return "; the file system of \(directory) is full (\(free / 1024) KiB free)" }
        return ""
    }
}

/// A cause told in words, where there is no error from below to carry it
/// (`mkdir: Permission denied`, `unknown schema versions v3-pairings`).
struct StoreFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension StoreError {
    /// The kind of a ``StoreError``.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable, Hashable {
            case directory, open, corruptDatabase, migration, newerSchema, read, write, invalidData
        }

        fileprivate let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The directory cannot be created, or is not a directory.
        public static let directory = Kind(.directory)
        /// The database file cannot be created or opened.
        public static let open = Kind(.open)
        /// The file is damaged or is not an SQLite database.
        public static let corruptDatabase = Kind(.corruptDatabase)
        /// Bringing the schema up to date failed.
        public static let migration = Kind(.migration)
        /// The database has migrations this version does not know: a newer HomeGate wrote it.
        public static let newerSchema = Kind(.newerSchema)
        /// A query failed.
        public static let read = Kind(.read)
        /// A change failed; nothing of it was kept.
        public static let write = Kind(.write)
        /// Stored data cannot be turned back into the model (a JSON column that does not decode).
        public static let invalidData = Kind(.invalidData)

        /// The kind's name: `corruptDatabase`.
        public var description: String { base.rawValue }
    }
}

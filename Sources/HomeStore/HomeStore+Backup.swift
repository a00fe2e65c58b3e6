#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB

// Taking a backup of a data directory while the gateway may be writing to it, and putting one
// back. The pairing keys (the controller's identity and each paired device's public key) are
// in the database; the database is copied with SQLite's online backup, in one read
// transaction, so the copy is one consistent state whatever the gateway does meanwhile.

extension HomeStore {
    /// The names beside the database that are SQLite's working files, never backed up.
    static let workingFiles: Set<String> = [fileName + "-wal", fileName + "-shm", fileName + "-journal"]

    /// Takes a backup of the data directory `directory`: the database (online backup), every
    /// other regular file in it (sockets, links, locks and SQLite's working files are left
    /// out), and `configuration` (a file path) if given. Nothing in `directory` changes.
    ///
    /// - Parameter scratch: a private directory (mode 0700) for the database's copy while it
    ///   is read; it is left empty.
    public static func backup(directory: String, configuration: String?, homegateVersion: String,
                              scratch: String) throws(BackupError) -> Backup {
        let database = URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BackupError(.missing, file: directory, "no such data directory")
        }
        guard FileManager.default.fileExists(atPath: database) else {
            throw BackupError(.missing, file: directory, "no HomeGate store in it (no \(fileName))")
        }
        var entries = [Backup.Entry(kind: .database, name: fileName, mode: 0o600,
                                    contents: try copyDatabase(database, scratch: scratch))]
        for name in try otherFiles(in: directory) {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            let (contents, mode) = try readFile(path)
            entries.append(Backup.Entry(kind: .file, name: name, mode: mode, contents: contents))
        }
        if let configuration {
            let (contents, mode) = try readFile(configuration)
            entries.append(Backup.Entry(kind: .configuration, name: URL(fileURLWithPath: configuration).lastPathComponent,
                                        mode: mode, contents: contents))
        }
        return Backup(entries: entries, homegateVersion: homegateVersion, source: directory)
    }

    /// The database's bytes, one consistent state: SQLite's online backup into a file in
    /// `scratch`, read and removed.
    private static func copyDatabase(_ path: String, scratch: String) throws(BackupError) -> [UInt8] {
        let copy = URL(fileURLWithPath: scratch).appendingPathComponent(fileName).path
        defer {
            for file in [copy] + workingFiles.map({ URL(fileURLWithPath: scratch).appendingPathComponent($0).path }) { unlink(file) }
        }
        do {
            var configuration = Configuration()
            configuration.label = "HomeStore backup source"
            configuration.busyMode = .timeout(10)
            let source = try DatabaseQueue(path: path, configuration: configuration)
            let descriptor = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw BackupError(.io, file: copy, "cannot create it: \(String(cString: strerror(errno)))") }
            close(descriptor)
            let destination = try DatabaseQueue(path: copy)
            try source.backup(to: destination)
            try destination.close()
            try source.close()
        } catch let error as BackupError {
            throw error
        } catch {
            throw BackupError(.io, file: path, "the online backup of the database failed: \(error)")
        }
        return try readFile(copy).contents
    }

    /// The regular files of `directory` and its subdirectories other than the database and
    /// SQLite's working files, as paths relative to it, sorted.
    private static func otherFiles(in directory: String) throws(BackupError) -> [String] {
        guard let names = FileManager.default.subpaths(atPath: directory) else {
            throw BackupError(.io, file: directory, "cannot list it")
        }
        return names.filter { name in
            guard name != fileName, !workingFiles.contains(name), !name.hasSuffix(".lock") else { return false }
            var status = stat()
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        }.sorted()
    }

    /// A file's bytes and permission bits.
    private static func readFile(_ path: String) throws(BackupError) -> (contents: [UInt8], mode: UInt32) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw BackupError(.missing, file: path, String(cString: strerror(errno))) }
        guard let data = FileManager.default.contents(atPath: path) else { throw BackupError(.io, file: path, "cannot read it") }
        return ([UInt8](data), UInt32(status.st_mode) & 0o777)
    }
}

extension Backup {
    /// Whether `directory` exists and has anything in it but its lock file.
    public static func isNonEmptyDirectory(_ directory: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { !DataDirectoryLock.isLockFile($0) }
    }

    /// Puts the backup's data-directory entries into `directory`, all or nothing: they are
    /// written into a new folder next to it (mode 0700), each file with its mode, the database
    /// is opened and checked there, and only then does the folder take `directory`'s place.
    /// A failure leaves `directory` as it was and nothing else behind.
    ///
    /// - Parameter replacing: whether a non-empty `directory` may be replaced; without it, a
    ///   non-empty directory is refused (``BackupError/Kind/notEmpty``) before anything is written.
    public func restore(into directory: String, replacing: Bool) throws(BackupError) {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory)
        if exists, !isDirectory.boolValue { throw BackupError(.notEmpty, file: target.path, "a file that is not a directory is in the way") }
        if exists, !replacing, Self.isNonEmptyDirectory(target.path) {
            throw BackupError.notEmpty(target.path)
        }
        let staging = try stage(next: target.path)
        try Self.putInPlace(staging: staging, directory: target.path)
    }

    /// Writes the backup's data-directory entries into a new folder next to `directory` (mode
    /// 0700, each file with its mode) and opens and checks the database there, as the gateway
    /// would (a database from an older HomeGate is migrated, a damaged one or one from a newer
    /// HomeGate refused). Returns the folder, ready for ``putInPlace(staging:directory:)``;
    /// a failure leaves nothing behind. `directory` itself is not touched.
    public func stage(next directory: String) throws(BackupError) -> String {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        do {
            try HomeStore.createDirectory(parent)
        } catch {
            throw BackupError(.io, file: parent, "\(error)")
        }
        let staging = try Self.makeTemporaryDirectory(next: target, tag: "restore")
        var staged = false
        defer { if !staged { try? FileManager.default.removeItem(atPath: staging) } }
        for entry in dataEntries {
            try Self.writeEntry(entry, into: staging)
        }
        do {
            let store = try HomeStore(directory: staging)
            try store.checkIntegrity()
        } catch {
            throw BackupError(.invalid, file: target.path, "the restored database does not open: \(error)")
        }
        staged = true
        return staging
    }

    /// Puts a folder made by ``stage(next:)`` in `directory`'s place, and removes the old one,
    /// if any. The two change places in one step (`renameat2` with `RENAME_EXCHANGE`): at no
    /// moment is there no `directory`. Where the file system cannot exchange, the old one is
    /// moved aside first. A failure leaves `directory` as it was and removes the staged folder.
    public static func putInPlace(staging: String, directory: String) throws(BackupError) {
        let target = URL(fileURLWithPath: directory).standardizedFileURL
        var moved = false
        defer { if !moved { try? FileManager.default.removeItem(atPath: staging) } }
        if FileManager.default.fileExists(atPath: target.path), renameat2(AT_FDCWD, staging, AT_FDCWD, target.path, renameExchange) == 0 {
            moved = true
            try? FileManager.default.removeItem(atPath: staging) // the old directory, now
        } else if FileManager.default.fileExists(atPath: target.path) {
            let old = try makeTemporaryDirectory(next: target, tag: "old")
            guard rename(target.path, old) == 0 else {
                let reason = String(cString: strerror(errno))
                rmdir(old)
                throw BackupError(.io, file: target.path, "cannot move it aside: \(reason)")
            }
            guard rename(staging, target.path) == 0 else {
                let reason = String(cString: strerror(errno))
                rename(old, target.path)
                throw BackupError(.io, file: target.path, "cannot put the restored directory in place: \(reason)")
            }
            moved = true
            try? FileManager.default.removeItem(atPath: old)
        } else {
            guard rename(staging, target.path) == 0 else {
                throw BackupError(.io, file: target.path, "cannot put the restored directory in place: \(String(cString: strerror(errno)))")
            }
            moved = true
        }
    }

    /// Writes `entry` under `folder` with its mode; missing subdirectories are made 0700.
    static func writeEntry(_ entry: Entry, into folder: String) throws(BackupError) {
        let path = URL(fileURLWithPath: folder).appendingPathComponent(entry.name).path
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try HomeStore.createDirectory(parent)
        } catch {
            throw BackupError(.io, file: parent, "\(error)")
        }
        try writeFile(path, contents: entry.contents, mode: entry.mode, exclusive: true)
    }

    /// Creates `path` with `mode` (never wider for a moment: the mode is given to `open`,
    /// and `fchmod` only restores what the umask took), writes `contents` and syncs it.
    public static func writeFile(_ path: String, contents: [UInt8], mode: UInt32, exclusive: Bool) throws(BackupError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), mode_t(mode))
        guard descriptor >= 0 else { throw BackupError(.io, file: path, "cannot create it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        _ = fchmod(descriptor, mode_t(mode))
        var written = 0
        while written < contents.count {
            let count = contents.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, contents.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw BackupError(.io, file: path, "cannot write it: \(String(cString: strerror(errno)))") }
            written += count
        }
        guard fsync(descriptor) == 0 else { throw BackupError(.io, file: path, "cannot sync it: \(String(cString: strerror(errno)))") }
    }

    /// A new, empty, private (0700) directory beside `target`: `.<name>.<tag>-XXXXXX`.
    public static func makeTemporaryDirectory(next target: URL, tag: String) throws(BackupError) -> String {
        var template = Array(target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(tag)-XXXXXX").path.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else {
            throw BackupError(.io, file: target.deletingLastPathComponent().path, "cannot make a temporary directory: \(String(cString: strerror(errno)))")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension HomeStore {
    /// Runs SQLite's `quick_check`; throws ``StoreError/Kind/corruptDatabase`` if it finds damage.
    public func checkIntegrity() throws(StoreError) {
        let result = try read("check the database") { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        guard result == ["ok"] else {
            throw StoreError(.corruptDatabase, path: path, operation: "check the database",
                             underlyingError: StoreFailure(result.prefix(3).joined(separator: "; ")))
        }
    }
}

/// `renameat2(2)`'s flag that swaps the two paths in one step (Linux 3.15, glibc 2.28).
private let renameExchange: UInt32 = 1 << 1

/// glibc's `renameat2(2)`, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`).
@_silgen_name("renameat2")
private func renameat2(_ oldDirectory: Int32, _ old: UnsafePointer<CChar>, _ newDirectory: Int32, _ new: UnsafePointer<CChar>, _ flags: UInt32) -> Int32

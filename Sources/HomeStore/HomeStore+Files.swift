#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

// The store's directory and file, and who may read them: the database will hold secrets
// (pairing keys), so only its owner may.

extension HomeStore {
    /// Creates `directory` and each missing parent with mode 0700; leaves existing ones alone.
    static func createDirectory(_ directory: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StoreError(.directory, path: directory, operation: "create the directory",
                                 underlyingError: StoreFailure("a file that is not a directory is in the way"))
            }
            return
        }
        let parent = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        if parent != directory, !parent.isEmpty { try createDirectory(parent) }
        if mkdir(directory, 0o700) == 0 {
            _ = chmod(directory, 0o700) // whatever the umask took away
        } else if errno != EEXIST {
            throw StoreError(.directory, path: directory, operation: "create the directory", underlyingError: systemFailure("mkdir"))
        }
    }

    /// Creates the database file with mode 0600 if it is missing, and takes group and others'
    /// permissions away from an existing one and from `-wal` and `-shm` files left beside it.
    /// SQLite gives the `-wal` and `-shm` files it creates the database file's mode.
    static func prepareDatabaseFile(_ path: String) throws(StoreError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw StoreError(.open, path: path, operation: "create the database", underlyingError: systemFailure("open"))
        }
        for file in [path, path + "-wal", path + "-shm"] {
            try restrictToOwner(file)
        }
    }

    /// Takes every permission of group and others away from `path`, if it exists (0644 → 0600).
    private static func restrictToOwner(_ path: String) throws(StoreError) {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { return }
        guard chmod(path, status.st_mode & 0o700) == 0 else {
            throw StoreError(.open, path: path, operation: "restrict the database to its owner",
                             underlyingError: systemFailure("chmod"))
        }
    }

    /// The failure of the system call `call`, from `errno`: `mkdir: Permission denied`.
    private static func systemFailure(_ call: String) -> StoreFailure {
        StoreFailure("\(call): \(String(cString: strerror(errno)))")
    }
}

import Foundation

/// The data directory's lock: a running gateway holds it (an exclusive `flock` on
/// `homegate.lock` in the directory, which says the holder's process id), so that a second
/// gateway, or a `restore`, cannot use the same directory meanwhile. Two gateways on one store
/// would be the same HAP controller twice and would write over each other's layout.
///
/// The kernel lets the lock go when its holder ends, however it ends: a gateway killed with
/// SIGKILL leaves no stale lock behind. The descriptor is close-on-exec, so a gateway that
/// executes itself again (a restore from the web page) takes the lock afresh.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name; backups leave it out (they leave out every `*.lock`).
    public static let fileName = "homegate.lock"

    /// Why the lock could not be taken.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The directory whose lock it is.
        public let directory: String
        /// The process that holds it (as its lock file says), nil when another process holds
        /// it but its id cannot be read, or when the lock file cannot be opened at all.
        public let holder: pid_t?
        /// Set when the file cannot be opened or locked for another reason than a holder.
        public let reason: String?

        public var description: String {
            if let reason { return "\(directory)/\(DataDirectoryLock.fileName): \(reason)" }
            let who = holder.map { "process \($0)" } ?? "another process"
            return "\(directory) is in use by a running gateway (\(who) holds \(DataDirectoryLock.fileName)); stop it first"
        }

        /// Whether another process holds the lock (as opposed to a file that cannot be used).
        public var isHeld: Bool { reason == nil }
    }

    /// The locked file's descriptor; nil on a read-only file system without a lock file, where
    /// no gateway can hold one (nor write the store).
    private let descriptor: Int32?

    private init(descriptor: Int32?) {
        self.descriptor = descriptor
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    /// Takes the lock of `directory` (which must exist), writing this process's id into the
    /// lock file (mode 0600).
    /// - Throws: ``Failure``, held by another process or not usable.
    public static func acquire(_ directory: String) throws(Failure) -> DataDirectoryLock {
        let path = lockPath(directory)
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        var writable = true
        if descriptor < 0, errno == EROFS {
            // A read-only file system: a lock file already there can still be locked (and show a
            // holder); without one, nobody can hold it. The store's own open says what is wrong.
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            writable = false
            if descriptor < 0, errno == ENOENT { return DataDirectoryLock(descriptor: nil) }
        }
        guard descriptor >= 0 else { throw Failure(directory: directory, holder: nil, reason: "cannot open it: \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno == EWOULDBLOCK
                ? Failure(directory: directory, holder: holderID(descriptor), reason: nil)
                : Failure(directory: directory, holder: nil, reason: "cannot lock it: \(String(cString: strerror(errno)))")
            close(descriptor)
            throw failure
        }
        if writable {
            let text = Array("\(getpid())\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return DataDirectoryLock(descriptor: descriptor)
    }

    /// Whether `name`, an entry of a data directory, is its lock file.
    public static func isLockFile(_ name: String) -> Bool {
        name == fileName
    }

    private static func lockPath(_ directory: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
    }

    /// The process id the lock file says, if it says one.
    private static func holderID(_ descriptor: Int32) -> pid_t? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return pid_t(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

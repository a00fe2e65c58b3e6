/// What the page's backup and restore (admins only; docs/web.md) ask of the gateway, which knows
/// its data directory and configuration file: the web page itself holds no pairing key.
public struct Maintenance: Sendable {
    /// Why a backup or a restore was refused, in words for the admin (never the file's contents).
    public struct Refusal: Error, Sendable {
        /// The wire code: `invalid-backup` (the file is damaged, truncated, not a backup, from a
        /// newer HomeGate), `busy` (a restore is already under way), `unavailable` (a file
        /// cannot be read or written).
        public var code: Code
        public var message: String

        public enum Code: String, Sendable {
            case invalidBackup = "invalid-backup"
            case busy
            case unavailable
        }

        public init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }
    }

    /// A backup of the running gateway: the same bytes `homegate backup` writes (the store by
    /// SQLite's online backup, the data directory's other files, the configuration file).
    public var backup: @Sendable () async -> Result<[UInt8], Refusal>
    /// Checks the file whole, stages it next to the data directory and has the gateway restart
    /// on it; the summary in words. A refused file changes nothing.
    public var restore: @Sendable ([UInt8]) async -> Result<String, Refusal>

    public init(backup: @escaping @Sendable () async -> Result<[UInt8], Refusal>,
                restore: @escaping @Sendable ([UInt8]) async -> Result<String, Refusal>) {
        self.backup = backup
        self.restore = restore
    }
}

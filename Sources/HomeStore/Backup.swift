import Crypto
import Foundation
import Wire

/// A HomeGate backup: the store's database (copied with SQLite's online backup), the other files
/// of the data directory, and optionally the configuration file, in one self-checking file.
///
/// The layout (version 1), every number big-endian:
///
/// ```
/// offset  size  what
///      0    16  magic: "HomeGate backup\n"
///     16     4  format version (1)
///     20     4  manifest length M
///     24    32  SHA-256 of the manifest
///     56     M  the manifest: UTF-8 JSON, see `Manifest`
///   56+M   ...  each entry's bytes, in the manifest's order, nothing between them, nothing after
/// ```
///
/// The manifest lists each entry's kind (`database`, `file`, `configuration`), name (a path
/// relative to the data directory; the configuration file's own name), size, permission bits and
/// SHA-256. Every byte of the file is covered: the magic and version are compared, the manifest
/// and each entry have their checksum, and the file's size must be exactly the sum.
public struct Backup: Sendable, Equatable {
    /// One file in the backup.
    public struct Entry: Sendable, Equatable {
        public enum Kind: String, Sendable {
            /// The store's database (`homegate.sqlite`), a consistent copy.
            case database
            /// Another file of the data directory.
            case file
            /// The configuration file.
            case configuration
        }

        public var kind: Kind
        /// The path relative to the data directory (`homegate.sqlite`), or the configuration
        /// file's name (`homegate.yml`).
        public var name: String
        /// The permission bits (`0o600`).
        public var mode: UInt32
        public var contents: [UInt8]

        public init(kind: Kind, name: String, mode: UInt32, contents: [UInt8]) {
            self.kind = kind
            self.name = name
            self.mode = mode & 0o777
            self.contents = contents
        }
    }

    /// The format version this HomeGate writes and reads.
    public static let formatVersion: UInt32 = 1
    static let magic = Array("HomeGate backup\n".utf8)
    static let headerSize = 16 + 4 + 4 + 32

    public var entries: [Entry]
    /// When the backup was taken.
    public var created: Date
    /// The HomeGate version that took it.
    public var homegateVersion: String
    /// The data directory it was taken from, for information.
    public var source: String

    public init(entries: [Entry], created: Date = Date(), homegateVersion: String, source: String) {
        self.entries = entries
        self.created = created
        self.homegateVersion = homegateVersion
        self.source = source
    }

    /// The configuration file, if the backup has one.
    public var configuration: Entry? { entries.first { $0.kind == .configuration } }

    /// The entries that go into the data directory.
    public var dataEntries: [Entry] { entries.filter { $0.kind != .configuration } }

    // MARK: Encoding

    /// The manifest: JSON, keys sorted, written and read through ``Wire/JSON``.
    struct Manifest {
        struct Item {
            var kind: Entry.Kind
            var name: String
            var size: Int
            /// Octal, `"0600"`.
            var mode: String
            /// Lower-case hex.
            var sha256: String

            var json: JSON {
                ["kind": .string(kind.rawValue), "name": .string(name), "size": .int(size), "mode": .string(mode), "sha256": .string(sha256)]
            }

            init(kind: Entry.Kind, name: String, size: Int, mode: String, sha256: String) {
                (self.kind, self.name, self.size, self.mode, self.sha256) = (kind, name, size, mode, sha256)
            }

            init(json: JSON) throws(ModelJSON.Failure) {
                let fields = try ModelJSON.object(json, "an entry")
                let kind = try ModelJSON.string(fields["kind"], "an entry's kind")
                guard let known = Entry.Kind(rawValue: kind) else { throw ModelJSON.Failure(description: "an entry's kind \"\(kind)\" is unknown") }
                self.init(kind: known, name: try ModelJSON.string(fields["name"], "an entry's name"), size: try ModelJSON.int(fields["size"], "an entry's size"),
                          mode: try ModelJSON.string(fields["mode"], "an entry's mode"), sha256: try ModelJSON.string(fields["sha256"], "an entry's sha256"))
            }
        }

        var format: String
        var created: String
        var homegate: String
        var source: String
        var hasConfiguration: Bool
        var entries: [Item]

        var json: JSON {
            ["format": .string(format), "created": .string(created), "homegate": .string(homegate), "source": .string(source),
             "hasConfiguration": .bool(hasConfiguration), "entries": .array(entries.map(\.json))]
        }

        init(format: String, created: String, homegate: String, source: String, hasConfiguration: Bool, entries: [Item]) {
            (self.format, self.created, self.homegate, self.source, self.hasConfiguration, self.entries) = (format, created, homegate, source, hasConfiguration, entries)
        }

        init(bytes: [UInt8]) throws(ModelJSON.Failure) {
            let fields = try ModelJSON.object(try ModelJSON.parse(bytes, "the manifest"), "the manifest")
            self.init(format: try ModelJSON.string(fields["format"], "format"), created: try ModelJSON.string(fields["created"], "created"),
                      homegate: try ModelJSON.string(fields["homegate"], "homegate"), source: try ModelJSON.string(fields["source"], "source"),
                      hasConfiguration: try ModelJSON.bool(fields["hasConfiguration"], "hasConfiguration"),
                      entries: try ModelJSON.list(fields["entries"], "entries") { json throws(ModelJSON.Failure) in try Item(json: json) })
        }
    }

    /// The file's bytes.
    public func encoded() -> [UInt8] {
        let formatter = ISO8601DateFormatter()
        let manifest = Manifest(
            format: "homegate-backup", created: formatter.string(from: created), homegate: homegateVersion, source: source,
            hasConfiguration: configuration != nil,
            entries: entries.map { entry in
                Manifest.Item(kind: entry.kind, name: entry.name, size: entry.contents.count, mode: String(format: "%04o", entry.mode),
                              sha256: Self.hex(SHA256.hash(data: entry.contents)))
            }
        )
        let json = manifest.json.encoded()
        var bytes = Self.magic
        bytes.reserveCapacity(Self.headerSize + json.count + entries.reduce(0) { $0 + $1.contents.count })
        Self.append(Self.formatVersion, to: &bytes)
        Self.append(UInt32(json.count), to: &bytes)
        bytes += Array(SHA256.hash(data: json))
        bytes += json
        for entry in entries { bytes += entry.contents }
        return bytes
    }

    // MARK: Decoding

    /// Reads and checks a backup: magic, version, manifest checksum, every entry's size and
    /// checksum, names, and the file's exact size. `file` names the file in errors.
    public static func decode(_ bytes: [UInt8], file: String) throws(BackupError) -> Backup {
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
            if bytes.count < magic.count, Array(magic.prefix(bytes.count)) == bytes {
                throw BackupError(.truncated, file: file, "it ends after \(bytes.count) bytes, inside the header")
            }
            throw BackupError(.notBackup, file: file, "it does not start with the HomeGate backup magic")
        }
        guard bytes.count >= headerSize else {
            throw BackupError(.truncated, file: file, "it ends after \(bytes.count) bytes, inside the \(headerSize)-byte header")
        }
        let version = readUInt32(bytes, at: 16)
        guard version <= formatVersion else {
            throw BackupError(.newerVersion, file: file, "it has format version \(version), this HomeGate reads up to \(formatVersion); restore it with a newer HomeGate")
        }
        guard version >= 1 else { throw BackupError(.notBackup, file: file, "format version 0 does not exist") }
        let manifestLength = Int(readUInt32(bytes, at: 20))
        guard bytes.count - headerSize >= manifestLength else {
            throw BackupError(.truncated, file: file, "it ends after \(bytes.count) bytes, inside the manifest (\(manifestLength) bytes from offset \(headerSize))")
        }
        let json = Array(bytes[headerSize..<(headerSize + manifestLength)])
        guard Array(SHA256.hash(data: json)) == Array(bytes[24..<56]) else {
            throw BackupError(.checksum, file: file, "the manifest's SHA-256 does not match: the file is damaged")
        }
        let manifest: Manifest
        do {
            manifest = try Manifest(bytes: json)
        } catch {
            throw BackupError(.invalid, file: file, "the manifest does not decode: \(error)")
        }
        guard manifest.format == "homegate-backup" else {
            throw BackupError(.invalid, file: file, "the manifest's format is \"\(manifest.format)\", not homegate-backup")
        }
        try checkNames(manifest.entries, file: file)
        for item in manifest.entries where item.size < 0 || item.size > bytes.count {
            throw BackupError(.invalid, file: file, "the entry \(item.name) has size \(item.size)")
        }
        let expected = manifest.entries.reduce(headerSize + manifestLength) { $0 + $1.size }
        guard bytes.count >= expected else {
            throw BackupError(.truncated, file: file, "it has \(bytes.count) bytes, the manifest accounts for \(expected)")
        }
        guard bytes.count == expected else {
            throw BackupError(.invalid, file: file, "it has \(bytes.count - expected) bytes more than the manifest accounts for")
        }
        var offset = headerSize + manifestLength
        var entries: [Entry] = []
        for item in manifest.entries {
            guard let mode = UInt32(item.mode, radix: 8), mode <= 0o777 else {
                throw BackupError(.invalid, file: file, "the entry \(item.name) has size \(item.size) and mode \(item.mode)")
            }
            let contents = Array(bytes[offset..<(offset + item.size)])
            offset += item.size
            guard hex(SHA256.hash(data: contents)) == item.sha256.lowercased() else {
                throw BackupError(.checksum, file: file, "the SHA-256 of \(item.kind.rawValue) \(item.name) does not match: the file is damaged")
            }
            entries.append(Entry(kind: item.kind, name: item.name, mode: mode, contents: contents))
        }
        let created = ISO8601DateFormatter().date(from: manifest.created) ?? Date(timeIntervalSince1970: 0)
        return Backup(entries: entries, created: created, homegateVersion: manifest.homegate, source: manifest.source)
    }

    /// Names stay inside the data directory; one database, at most one configuration, no
    /// name twice.
    private static func checkNames(_ items: [Manifest.Item], file: String) throws(BackupError) {
        var seen: Set<String> = []
        for item in items {
            let components = item.name.split(separator: "/", omittingEmptySubsequences: false)
            let safe = !item.name.isEmpty && !item.name.hasPrefix("/") && !item.name.contains("\0")
                && components.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
                && (item.kind == .file || components.count == 1)
            guard safe else { throw BackupError(.invalid, file: file, "the entry name \"\(item.name)\" is not a plain relative path") }
            if item.kind == .database, item.name != HomeStore.fileName {
                throw BackupError(.invalid, file: file, "the database entry is named \(item.name), not \(HomeStore.fileName)")
            }
            if item.kind == .file, [HomeStore.fileName, HomeStore.fileName + "-wal", HomeStore.fileName + "-shm", HomeStore.fileName + "-journal"].contains(item.name) {
                throw BackupError(.invalid, file: file, "the file entry \(item.name) would overwrite the database")
            }
            let key = item.kind == .configuration ? "configuration" : item.name
            guard seen.insert(key).inserted else { throw BackupError(.invalid, file: file, "the entry \(item.name) is there twice") }
        }
        guard items.filter({ $0.kind == .database }).count == 1 else {
            throw BackupError(.invalid, file: file, "it has no database")
        }
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// Why a backup could not be taken, read or restored. Its description names the file and the
/// problem: `/root/hg.backup: not a HomeGate backup: it does not start with the HomeGate backup magic`.
public struct BackupError: Error, CustomStringConvertible {
    public let kind: Kind
    /// The file or directory concerned.
    public let file: String
    /// What is wrong, in words.
    public let reason: String

    init(_ kind: Kind, file: String, _ reason: String) {
        self.kind = kind
        self.file = file
        self.reason = reason
    }

    public var description: String { "\(file): \(kind.summary): \(reason)" }

    /// A restore's refusal of the non-empty data directory `directory`.
    public static func notEmpty(_ directory: String) -> BackupError {
        BackupError(.notEmpty, file: directory, "the data directory has files in it; --force replaces them")
    }

    /// The kind of a ``BackupError``.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable, Hashable {
            case notBackup, truncated, checksum, newerVersion, invalid, missing, notEmpty, io
        }

        fileprivate let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The file is not a HomeGate backup.
        public static let notBackup = Kind(.notBackup)
        /// The file ends too early.
        public static let truncated = Kind(.truncated)
        /// A checksum does not match: the file is damaged.
        public static let checksum = Kind(.checksum)
        /// A newer HomeGate wrote it.
        public static let newerVersion = Kind(.newerVersion)
        /// The manifest is wrong (bad names, sizes, extra bytes).
        public static let invalid = Kind(.invalid)
        /// What is to be backed up or restored is not there (no store, no file).
        public static let missing = Kind(.missing)
        /// The target exists and is not empty (restore without --force).
        public static let notEmpty = Kind(.notEmpty)
        /// Reading or writing a file failed.
        public static let io = Kind(.io)

        /// Whether the backup file itself is at fault (damaged, truncated, not a backup, newer).
        public var isDamagedFile: Bool { [.notBackup, .truncated, .checksum, .newerVersion, .invalid].contains(base) }

        public var description: String { base.rawValue }

        var summary: String {
            switch base {
            case .notBackup: "not a HomeGate backup"
            case .truncated: "the backup is truncated"
            case .checksum: "the backup is damaged (wrong checksum)"
            case .newerVersion: "the backup is from a newer HomeGate"
            case .invalid: "the backup is not valid"
            case .missing: "not found"
            case .notEmpty: "not empty"
            case .io: "cannot read or write"
            }
        }
    }
}

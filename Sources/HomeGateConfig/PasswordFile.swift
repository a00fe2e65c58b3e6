import Crypto
import Foundation

/// A Mosquitto password file (`password_file`, written by `homegate passwd` through
/// `mosquitto_passwd`): one `name:hash` line per account. The web page checks its logins against
/// it, so a person signs in with the name and password of their MQTT account.
///
/// Hashes are Mosquitto's: `$7$<iterations>$<salt>$<hash>` (PBKDF2 with HMAC-SHA-512, what
/// Mosquitto 2 writes) and `$6$<salt>$<hash>` (one SHA-512 of password and salt, Mosquitto 1.x),
/// salt and hash in base64. Empty lines and lines starting with `#` are skipped.
public struct PasswordFile: Sendable, Equatable {
    /// One account's stored hash.
    public struct Hash: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// `$7$`: PBKDF2-HMAC-SHA-512 with this many iterations.
            case pbkdf2SHA512(iterations: Int)
            /// `$6$`: SHA-512 over password then salt.
            case sha512
        }

        public var kind: Kind
        public var salt: [UInt8]
        public var digest: [UInt8]
    }

    /// The hashes by user name.
    public var hashes: [String: Hash]

    /// Loads and checks the password file at `path`.
    /// - Throws: ``ConfigError`` naming the file and the line.
    public static func load(path: String) throws(ConfigError) -> PasswordFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ConfigError(file: path, line: nil, keyPath: "", problem: exists ? "cannot be read (check its permissions)" : "no such file")
        }
        return try parse(text, file: path)
    }

    /// Parses a password file's text; `file` names it in errors. The hashes are never in a message.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> PasswordFile {
        var hashes: [String: Hash] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.isEmpty || line.hasPrefix("#") { continue }
            let problem = { (words: String) in ConfigError(file: file, line: index + 1, keyPath: "", problem: words) }
            guard let colon = line.lastIndex(of: ":") else { throw problem("expected name:hash") }
            let name = String(line[..<colon])
            guard !name.isEmpty else { throw problem("the user name is empty") }
            guard let hash = Hash(parsing: line[line.index(after: colon)...]) else {
                throw problem("the hash of \"\(name)\" is not one Mosquitto writes ($7$ or $6$); set the password again with homegate passwd")
            }
            hashes[name] = hash
        }
        return PasswordFile(hashes: hashes)
    }

    /// Whether `password` is the password of `user`. Compares in constant time.
    public func verify(user: String, password: String) -> Bool {
        guard let hash = hashes[user] else {
            // The same work as for a known user, so the time does not tell which names exist.
            _ = Hash.pbkdf2(password: Array(password.utf8), salt: Array(repeating: 0, count: 12), iterations: 101, length: 64)
            return false
        }
        return hash.matches(password: Array(password.utf8))
    }
}

extension PasswordFile.Hash {
    /// Parses `$7$iterations$salt$hash` or `$6$salt$hash`; nil for anything else.
    init?(parsing text: Substring) {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].isEmpty else { return nil }
        switch fields[1] {
        case "7" where fields.count == 5:
            guard let iterations = Int(fields[2]), (1...10_000_000).contains(iterations),
                  let salt = Data(base64Encoded: String(fields[3])), let digest = Data(base64Encoded: String(fields[4])),
                  !digest.isEmpty, digest.count <= 64 else { return nil }
            self.init(kind: .pbkdf2SHA512(iterations: iterations), salt: Array(salt), digest: Array(digest))
        case "6" where fields.count == 4:
            guard let salt = Data(base64Encoded: String(fields[2])), let digest = Data(base64Encoded: String(fields[3])),
                  digest.count == 64 else { return nil }
            self.init(kind: .sha512, salt: Array(salt), digest: Array(digest))
        default:
            return nil
        }
    }

    /// Whether `password` hashes to this digest.
    func matches(password: [UInt8]) -> Bool {
        let computed: [UInt8]
        switch kind {
        case .pbkdf2SHA512(let iterations):
            computed = Self.pbkdf2(password: password, salt: salt, iterations: iterations, length: digest.count)
        case .sha512:
            computed = Array(SHA512.hash(data: password + salt))
        }
        guard computed.count == digest.count else { return false }
        return zip(computed, digest).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// PBKDF2 (RFC 8018) with HMAC-SHA-512.
    static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let key = SymmetricKey(data: password)
        var output: [UInt8] = []
        var block: UInt32 = 1
        while output.count < length {
            var u = Array(HMAC<SHA512>.authenticationCode(for: salt + withUnsafeBytes(of: block.bigEndian, Array.init), using: key))
            var t = u
            for _ in 1..<max(iterations, 1) {
                u = Array(HMAC<SHA512>.authenticationCode(for: u, using: key))
                for index in t.indices { t[index] ^= u[index] }
            }
            output += t
            block += 1
        }
        return Array(output.prefix(length))
    }
}

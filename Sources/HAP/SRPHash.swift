import Crypto

/// The hash function of an SRP exchange: SHA-512 for HomeKit, SHA-1 for RFC 5054's test vector.
public enum SRPHash: Sendable {
    /// SHA-1 (only for RFC 5054's test vector; HomeKit never uses it).
    case sha1
    /// SHA-512, HomeKit's choice.
    case sha512

    /// The length of a digest in bytes.
    public var length: Int {
        switch self {
        case .sha1: return Insecure.SHA1.byteCount
        case .sha512: return SHA512.byteCount
        }
    }

    /// The digest of the concatenation of `parts`.
    func digest(_ parts: [UInt8]...) -> [UInt8] {
        switch self {
        case .sha1: return Self.digest(parts, using: Insecure.SHA1.self)
        case .sha512: return Self.digest(parts, using: SHA512.self)
        }
    }

    private static func digest<Function: HashFunction>(_ parts: [[UInt8]], using _: Function.Type) -> [UInt8] {
        var function = Function()
        for part in parts {
            part.withUnsafeBytes { function.update(bufferPointer: $0) }
        }
        return Array(function.finalize())
    }
}

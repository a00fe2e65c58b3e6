/// The modulus `N` and generator `g` of an SRP group, as big-endian bytes without leading zeros.
public struct SRPGroup: Sendable {
    /// The safe prime `N`.
    public let prime: [UInt8]
    /// The generator `g`.
    public let generator: [UInt8]

    /// A group from big-endian bytes; leading zero bytes are dropped.
    ///
    /// - Precondition: the prime is not zero (a zero prime would make every operation undefined).
    public init(prime: [UInt8], generator: [UInt8]) {
        self.prime = Array(prime.drop { $0 == 0 })
        self.generator = Array(generator.drop { $0 == 0 })
        precondition(!self.prime.isEmpty, "an SRP group needs a non-zero prime")
    }

    /// The length of the prime in bytes: what `PAD()` pads to.
    public var length: Int { prime.count }

    /// RFC 5054 appendix A, the 3072-bit group, `g = 5`: the group HomeKit uses.
    public static let rfc5054_3072 = SRPGroup(prime: hexBytes("""
        FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1 29024E08 8A67CC74 020BBEA6 3B139B22
        514A0879 8E3404DD EF9519B3 CD3A431B 302B0A6D F25F1437 4FE1356D 6D51C245 E485B576 625E7EC6
        F44C42E9 A637ED6B 0BFF5CB6 F406B7ED EE386BFB 5A899FA5 AE9F2411 7C4B1FE6 49286651 ECE45B3D
        C2007CB8 A163BF05 98DA4836 1C55D39A 69163FA8 FD24CF5F 83655D23 DCA3AD96 1C62F356 208552BB
        9ED52907 7096966D 670C354E 4ABC9804 F1746C08 CA18217C 32905E46 2E36CE3B E39E772C 180E8603
        9B2783A2 EC07A28F B5C55DF0 6F4C52C9 DE2BCBF6 95581718 3995497C EA956AE5 15D22618 98FA0510
        15728E5A 8AAAC42D AD33170D 04507A33 A85521AB DF1CBA64 ECFB8504 58DBEF0A 8AEA7157 5D060C7D
        B3970F85 A6E1E4C7 ABF5AE8C DB0933D7 1E8C94E0 4A25619D CEE3D226 1AD2EE6B F12FFA06 D98A0864
        D8760273 3EC86A64 521F2B18 177B200C BBE11757 7A615D6C 770988C0 BAD946E2 08E24FA0 74E5AB31
        43DB5BFC E0FD108E 4B82D120 A93AD2CA FFFFFFFF FFFFFFFF
        """), generator: [5])

    /// RFC 5054 appendix A, the 1024-bit group, `g = 2`: the group of the appendix B test vector.
    public static let rfc5054_1024 = SRPGroup(prime: hexBytes("""
        EEAF0AB9 ADB38DD6 9C33F80A FA8FC5E8 60726187 75FF3C0B 9EA2314C 9C256576 D674DF74 96EA81D3
        383B4813 D692C6E0 E0D5D8E2 50B98BE4 8E495C1D 6089DAD1 5DC7D7B4 6154D6B6 CE8EF4AD 69B15D49
        82559B29 7BCF1885 C529F566 660E57EC 68EDBC3C 05726CC0 2FD4CBF4 976EAA9A FD5138FE 8376435B
        9FC61D2F C0EB06E3
        """), generator: [2])

    /// Bytes from hex digits, ignoring white space. Only for the constants above.
    private static func hexBytes(_ text: String) -> [UInt8] {
        let digits = text.unicodeScalars.filter { !$0.properties.isWhitespace }.map { scalar -> UInt8 in
            guard let digit = UInt8(String(scalar), radix: 16) else {
                preconditionFailure("SRP group constant has a non-hex character \(scalar)")
            }
            return digit
        }
        precondition(digits.count.isMultiple(of: 2), "SRP group constant has an odd number of digits")
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}

/// The client (controller) side of SRP-6a as HomeKit's pair-setup uses it.
///
/// With `N` the group's prime, `g` its generator, `H` the hash, `PAD(x)` the big-endian bytes of
/// `x` left-padded with zeros to the length of `N`, and `MIN(x)` the big-endian bytes of `x`
/// without leading zero bytes:
///
/// ```
/// k  = H(PAD(N) | PAD(g))
/// x  = H(s | H(I | ":" | P))
/// A  = g^a mod N                       sent as PAD(A)
/// u  = H(PAD(A) | PAD(B))
/// S  = (B - k * g^x) ^ (a + u * x) mod N
/// K  = H(MIN(S))
/// M1 = H(H(MIN(N)) xor H(MIN(g)) | H(I) | s | MIN(A) | MIN(B) | K)
/// M2 = H(PAD(A) | M1 | K)
/// ```
///
/// ## Where the padding comes from
///
/// RFC 5054 fixes `k`, `x`, `u` and `S` (and its appendix B vector checks them, see the tests); it
/// says nothing about `K`, `M1` or `M2`, and the HAP specification only names "SRP-6a, SHA-512,
/// the 3072-bit group". The padding of the rest was checked against three implementations:
///
/// - Apple's HomeKit ADK (`PAL/Crypto/OpenSSL/HAPOpenSSL.c`, `HAP/HAPPairingPairSetup.c`), the
///   accessory side Apple ships: `k` with `g` padded to 384 bytes; `u` over `PAD(A)` and `PAD(B)`;
///   `K = H(S)` after skipping the leading zero bytes of `S`; in `M1`, `H(g)` over the single byte
///   `05`, and `A` and `B` with their leading zero bytes skipped; `M2` over `PAD(A)` and the full
///   64-byte `K`. It sends `B` without leading zero bytes and zero-extends the `A` it receives.
/// - HAP-python 5.0.0 (`pyhap/hsrp.py`, accessory side): the same, except that it also drops the
///   leading zero bytes of `K` in `M1` and `M2` (1 exchange in 256 fails against the ADK
///   convention) and hashes `A` in `M1` as received.
/// - aiohomekit 4.0.1 (`aiohomekit/crypto/srp.py`, controller side, Home Assistant): pads `S`
///   before hashing it into `K` and hashes `B` as received in both `u` and `M1`, so it disagrees
///   with both accessories above when `S` or `B` starts with a zero byte (2 exchanges in 256).
///
/// This client follows the ADK. It also sidesteps the `A` question: a random private key is drawn
/// again until `A` has no leading zero byte, so `MIN(A) = PAD(A)` and every implementation above
/// hashes the same bytes for `A`. With that, pair-setup fails only against HAP-python, only when
/// `K` starts with a zero byte (1 in 256).
///
/// The exponentiations go through libcrypto's `BN_mod_exp` (a few milliseconds for the 3072-bit
/// group, even in debug builds). The client stores only byte arrays and is `Sendable`.
public struct SRPClient: Sendable {
    /// The group (`N`, `g`).
    public let group: SRPGroup
    /// The hash function.
    public let hash: SRPHash
    /// The user name `I` (`Pair-Setup` in HomeKit).
    public let username: String
    /// The server's salt `s`.
    public let salt: [UInt8]
    /// The client's public key `A`, padded to the prime's length.
    public let publicKey: [UInt8]
    /// The private key `a`.
    private let privateKey: [UInt8]
    /// `x = H(s | H(I | ":" | P))`, so the password itself is not kept.
    private let passwordKey: [UInt8]

    /// A client for one exchange.
    ///
    /// - Parameters:
    ///   - username: `I`; HomeKit uses `Pair-Setup`.
    ///   - password: `P`; HomeKit uses the setup code with its dashes, `123-45-678`.
    ///   - salt: `s` from the server (pair-setup M2).
    ///   - privateKey: `a`, big-endian; by default 32 random bytes chosen so that `A` has no
    ///     leading zero byte. Give one only for tests.
    public init(
        group: SRPGroup = .rfc5054_3072,
        hash: SRPHash = .sha512,
        username: String,
        password: String,
        salt: [UInt8],
        privateKey: [UInt8]? = nil
    ) {
        self.group = group
        self.hash = hash
        self.username = username
        self.salt = salt
        self.passwordKey = Self.passwordKey(hash: hash, salt: salt, username: username, password: password)
        let keys = privateKey.map { ($0, Self.publicKey(group: group, privateKey: $0)) }
            ?? Self.randomKeys(group: group)
        self.privateKey = keys.0
        self.publicKey = keys.1
    }

    /// Computes the session key and both proofs from the server's public key `B` (pair-setup M2).
    ///
    /// `B` may come with or without leading zero bytes.
    ///
    /// - Throws: ``SRPError`` when `B mod N` is 0, `B` is longer than the prime, or `u` is 0.
    public func respond(to serverPublicKey: [UInt8]) throws(SRPError) -> SRPProof {
        let secret = try premasterSecret(serverPublicKey: serverPublicKey)
        let sessionKey = Self.sessionKey(hash: hash, premasterSecret: secret)
        let proof = hash.digest(
            Self.groupDigest(group: group, hash: hash),
            hash.digest(Array(username.utf8)),
            salt,
            Self.minimal(publicKey),
            Self.minimal(serverPublicKey),
            sessionKey
        )
        let serverProof = hash.digest(publicKey, proof, sessionKey)
        return SRPProof(proof: proof, sessionKey: sessionKey, expectedServerProof: serverProof)
    }
}

// MARK: - The steps, internal for the test vectors

extension SRPClient {
    /// `k = H(PAD(N) | PAD(g))`.
    static func multiplier(group: SRPGroup, hash: SRPHash) -> [UInt8] {
        hash.digest(group.prime, padded(group.generator, to: group.length))
    }

    /// `x = H(s | H(I | ":" | P))`.
    static func passwordKey(hash: SRPHash, salt: [UInt8], username: String, password: String) -> [UInt8] {
        hash.digest(salt, hash.digest(Array("\(username):\(password)".utf8)))
    }

    /// `u = H(PAD(A) | PAD(B))`.
    static func scrambler(group: SRPGroup, hash: SRPHash, clientKey: [UInt8], serverKey: [UInt8]) -> [UInt8] {
        hash.digest(padded(clientKey, to: group.length), padded(serverKey, to: group.length))
    }

    /// `K = H(MIN(S))`.
    static func sessionKey(hash: SRPHash, premasterSecret: [UInt8]) -> [UInt8] {
        hash.digest(minimal(premasterSecret))
    }

    /// `H(MIN(N)) xor H(MIN(g))`, the first part of `M1`.
    static func groupDigest(group: SRPGroup, hash: SRPHash) -> [UInt8] {
        zip(hash.digest(group.prime), hash.digest(group.generator)).map { $0 ^ $1 }
    }

    /// `A = g^a mod N`, padded.
    static func publicKey(group: SRPGroup, privateKey: [UInt8]) -> [UInt8] {
        let context = BigNumberContext()
        let exponent = BigNumber(bytes: privateKey, secret: true)
        let key = BigNumber(bytes: group.generator)
            .power(exponent, modulo: BigNumber(bytes: group.prime), in: context)
        return key.bytes(paddedTo: group.length)
    }

    /// The premaster secret `S = (B - k * g^x) ^ (a + u * x) mod N`, padded.
    func premasterSecret(serverPublicKey: [UInt8]) throws(SRPError) -> [UInt8] {
        let serverKey = Self.minimal(serverPublicKey)
        guard serverKey.count <= group.length else {
            throw SRPError(reason: .serverKeyTooLong(length: serverKey.count, limit: group.length))
        }
        let context = BigNumberContext()
        let prime = BigNumber(bytes: group.prime)
        let b = BigNumber(bytes: serverKey)
        guard !b.isZero(modulo: prime, in: context) else {
            throw SRPError(reason: .serverKeyIsZeroModuloPrime)
        }
        let u = Self.scrambler(group: group, hash: hash, clientKey: publicKey, serverKey: serverKey)
        guard u.contains(where: { $0 != 0 }) else { throw SRPError(reason: .scramblerIsZero) }

        let x = BigNumber(bytes: passwordKey, secret: true)
        let verifier = BigNumber(bytes: group.generator).power(x, modulo: prime, in: context)
        let base = b.subtracting(
            BigNumber(bytes: Self.multiplier(group: group, hash: hash))
                .multiplied(by: verifier, modulo: prime, in: context),
            modulo: prime, in: context)
        let exponent = BigNumber(bytes: privateKey, secret: true)
            .adding(BigNumber(bytes: u).multiplied(by: x, in: context))
        return base.power(exponent, modulo: prime, in: context).bytes(paddedTo: group.length)
    }
}

// MARK: - Helpers

extension SRPClient {
    /// 32 random bytes `a` whose `A` has no leading zero byte (about 1 draw in 256 is redrawn).
    private static func randomKeys(group: SRPGroup) -> ([UInt8], [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        while true {
            let privateKey = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let publicKey = publicKey(group: group, privateKey: privateKey)
            if publicKey.first != 0, privateKey.contains(where: { $0 != 0 }) {
                return (privateKey, publicKey)
            }
        }
    }

    /// `bytes` without leading zero bytes.
    static func minimal(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.drop { $0 == 0 })
    }

    /// `bytes` without leading zero bytes, left-padded with zeros to `length`.
    static func padded(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        let value = minimal(bytes)
        return [UInt8](repeating: 0, count: max(0, length - value.count)) + value
    }
}

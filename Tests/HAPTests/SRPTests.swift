import Crypto
import Foundation
import Testing
@testable import HAP

/// RFC 5054 appendix B: 1024-bit group, SHA-1, I = "alice", P = "password123". (Recomputed
/// independently with Python's `pow` and `hashlib` before being typed in here.)
private enum RFC5054 {
    static let salt = "beb25379d1a8581eb5a727673a2441ee"
    static let k = "7556aa045aef2cdd07abaf0f665c3e818913186f"
    static let x = "94b7555aabe9127cc58ccf4993db6cf84d16c124"
    static let v = """
        7e273de8696ffc4f4e337d05b4b375beb0dde1569e8fa00a9886d8129bada1f1822223ca1a605b530e379ba4729fdc59
        f105b4787e5186f5c671085a1447b52a48cf1970b4fb6f8400bbf4cebfbb168152e08ab5ea53d15c1aff87b2b9da6e04
        e058ad51cc72bfc9033b564e26480d78e955a5e29e7ab245db2be315e2099afb
        """
    static let a = "60975527035cf2ad1989806f0407210bc81edc04e2762a56afd529ddda2d4393"
    static let b = "e487cb59d31ac550471e81f00f6928e01dda08e974a004f49e61f5d105284d20"
    static let A = """
        61d5e490f6f1b79547b0704c436f523dd0e560f0c64115bb72557ec44352e8903211c04692272d8b2d1a5358a2cf1b6e
        0bfcf99f921530ec8e39356179eae45e42ba92aeaced825171e1e8b9af6d9c03e1327f44be087ef06530e69f66615261
        eef54073ca11cf5858f0edfdfe15efeab349ef5d76988a3672fac47b0769447b
        """
    static let B = """
        bd0c61512c692c0cb6d041fa01bb152d4916a1e77af46ae105393011baf38964dc46a0670dd125b95a981652236f99d9
        b681cbf87837ec996c6da04453728610d0c6ddb58b318885d7d82c7f8deb75ce7bd4fbaa37089e6f9c6059f388838e7a
        00030b331eb76840910440b1b27aaeaeeb4012b7d7665238a8e3fb004b117b58
        """
    static let u = "ce38b9593487da98554ed47d70a7ae5f462ef019"
    static let S = """
        b0dc82babcf30674ae450c0287745e7990a3381f63b387aaf271a10d233861e359b48220f7c4693c9ae12b0a6f67809f
        0876e2d013800d6c41bb59b6d5979b5c00a172b4a2a5903a0bdcaf8a709585eb2afafa8f3499b200210dcc1f10eb3394
        3cd67fc88a2f39a4be5bec4ec0a3212dc346d7e474b29ede8a469ffeca686e5a
        """
}

/// The accessory's side, written here with the module's own big numbers (RFC 5054 2.5-2.6).
private struct TestServer {
    let group: SRPGroup
    let salt: [UInt8]
    let verifier: BigNumber
    let privateKey: BigNumber
    let publicKey: [UInt8]

    init(group: SRPGroup = .rfc5054_3072, hash: SRPHash = .sha512, username: String, password: String, salt: [UInt8], b: [UInt8]) {
        let context = BigNumberContext()
        let prime = BigNumber(bytes: group.prime)
        let generator = BigNumber(bytes: group.generator)
        let x = BigNumber(bytes: SRPClient.passwordKey(hash: hash, salt: salt, username: username, password: password))
        let k = BigNumber(bytes: SRPClient.multiplier(group: group, hash: hash))
        self.group = group
        self.salt = salt
        self.verifier = generator.power(x, modulo: prime, in: context)
        self.privateKey = BigNumber(bytes: b, secret: true)
        self.publicKey = k.multiplied(by: verifier, modulo: prime, in: context)
            .adding(generator.power(privateKey, modulo: prime, in: context), modulo: prime, in: context)
            .minimalBytes
    }

    /// `S = (A * v^u) ^ b mod N`, padded.
    func premasterSecret(clientKey: [UInt8], u: [UInt8]) -> [UInt8] {
        let context = BigNumberContext()
        let prime = BigNumber(bytes: group.prime)
        return BigNumber(bytes: clientKey)
            .multiplied(by: verifier.power(BigNumber(bytes: u), modulo: prime, in: context), modulo: prime, in: context)
            .power(privateKey, modulo: prime, in: context)
            .bytes(paddedTo: group.length)
    }
}

private func sha512(_ parts: [UInt8]...) -> [UInt8] {
    var hash = SHA512()
    for part in parts { hash.update(data: part) }
    return Array(hash.finalize())
}

@Suite("SRP-6a")
struct SRPTests {
    @Test func rfc5054AppendixBClient() throws {
        let salt = Hex.bytes(RFC5054.salt)
        let client = SRPClient(
            group: .rfc5054_1024, hash: .sha1, username: "alice", password: "password123",
            salt: salt, privateKey: Hex.bytes(RFC5054.a))
        #expect(Hex.string(SRPClient.multiplier(group: .rfc5054_1024, hash: .sha1)) == RFC5054.k)
        #expect(Hex.string(SRPClient.passwordKey(hash: .sha1, salt: salt, username: "alice", password: "password123"))
            == RFC5054.x)
        #expect(client.publicKey == Hex.bytes(RFC5054.A))
        let u = SRPClient.scrambler(
            group: .rfc5054_1024, hash: .sha1, clientKey: client.publicKey, serverKey: Hex.bytes(RFC5054.B))
        #expect(Hex.string(u) == RFC5054.u)
        #expect(try client.premasterSecret(serverPublicKey: Hex.bytes(RFC5054.B)) == Hex.bytes(RFC5054.S))
    }

    @Test func rfc5054AppendixBServer() {
        let server = TestServer(
            group: .rfc5054_1024, hash: .sha1, username: "alice", password: "password123",
            salt: Hex.bytes(RFC5054.salt), b: Hex.bytes(RFC5054.b))
        #expect(server.verifier.minimalBytes == Hex.bytes(RFC5054.v))
        #expect(server.publicKey == Hex.bytes(RFC5054.B))
        let S = server.premasterSecret(clientKey: Hex.bytes(RFC5054.A), u: Hex.bytes(RFC5054.u))
        #expect(S == Hex.bytes(RFC5054.S))
    }

    @Test func homeKitGroupIntermediateValues() throws {
        let salt = Hex.bytes(HAPSRPVectors.salt)
        #expect(SRPGroup.rfc5054_3072.length == 384)
        #expect(SRPClient.multiplier(group: .rfc5054_3072, hash: .sha512) == Hex.bytes(HAPSRPVectors.k))
        #expect(SRPClient.passwordKey(
            hash: .sha512, salt: salt, username: HAPSRPVectors.username, password: HAPSRPVectors.password)
            == Hex.bytes(HAPSRPVectors.x))
        let client = Self.homeKitClient()
        #expect(client.publicKey == Hex.bytes(HAPSRPVectors.A))
        let B = Hex.bytes(HAPSRPVectors.Plain.B)
        let u = SRPClient.scrambler(group: .rfc5054_3072, hash: .sha512, clientKey: client.publicKey, serverKey: B)
        #expect(u == Hex.bytes(HAPSRPVectors.Plain.u))
        #expect(try client.premasterSecret(serverPublicKey: B) == Hex.bytes(HAPSRPVectors.Plain.S))
    }

    /// aiohomekit and HAP-python agree on this one.
    @Test func homeKitVectorFromAiohomekitAndHAPPython() throws {
        let proof = try Self.homeKitClient().respond(to: Hex.bytes(HAPSRPVectors.Plain.B))
        #expect(proof.proof == Hex.bytes(HAPSRPVectors.Plain.M1))
        #expect(proof.sessionKey == Hex.bytes(HAPSRPVectors.Plain.K))
        #expect(proof.expectedServerProof == Hex.bytes(HAPSRPVectors.Plain.M2))
        #expect(proof.isValid(serverProof: Hex.bytes(HAPSRPVectors.Plain.M2)))
        #expect(!proof.isValid(serverProof: Hex.bytes(HAPSRPVectors.Plain.M1)))
        #expect(!proof.isValid(serverProof: []))
    }

    /// K = H(MIN(S)), as Apple's ADK and HAP-python; aiohomekit would hash PAD(S).
    @Test func premasterSecretWithLeadingZeroIsHashedWithoutIt() throws {
        let vector = HAPSRPVectors.SLeadingZero.self
        let client = Self.homeKitClient()
        let S = try client.premasterSecret(serverPublicKey: Hex.bytes(vector.B))
        #expect(S.count == 384 && S[0] == 0)
        #expect(S == Hex.bytes(vector.S))
        let proof = try client.respond(to: Hex.bytes(vector.B))
        #expect(proof.sessionKey == Hex.bytes(vector.K))
        #expect(proof.proof == Hex.bytes(vector.M1))
        #expect(proof.expectedServerProof == Hex.bytes(vector.M2))
        #expect(proof.proof != Hex.bytes(vector.otherM1))
    }

    /// The accessory sends B without its leading zero byte; u pads it, M1 hashes it as is. Sending
    /// it padded gives the same result.
    @Test func serverKeyWithLeadingZeroWorksPaddedOrNot() throws {
        let vector = HAPSRPVectors.BLeadingZero.self
        let wire = Hex.bytes(vector.B)
        #expect(wire.count == 383)
        let client = Self.homeKitClient()
        for B in [wire, [0] + wire] {
            let proof = try client.respond(to: B)
            #expect(proof.sessionKey == Hex.bytes(vector.K))
            #expect(proof.proof == Hex.bytes(vector.M1))
            #expect(proof.expectedServerProof == Hex.bytes(vector.M2))
            #expect(proof.proof != Hex.bytes(vector.otherM1))
        }
    }

    /// M1 and M2 hash the full 64-byte K, as Apple's ADK and aiohomekit; HAP-python drops its
    /// leading zero byte.
    @Test func sessionKeyWithLeadingZeroIsHashedWhole() throws {
        let vector = HAPSRPVectors.KLeadingZero.self
        let proof = try Self.homeKitClient().respond(to: Hex.bytes(vector.B))
        #expect(proof.sessionKey.count == 64 && proof.sessionKey[0] == 0)
        #expect(proof.sessionKey == Hex.bytes(vector.K))
        #expect(proof.proof == Hex.bytes(vector.M1))
        #expect(proof.expectedServerProof == Hex.bytes(vector.M2))
        #expect(proof.proof != Hex.bytes(vector.otherM1))
    }

    @Test func fullExchangeAgreesWithAServer() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4 {
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let b = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let server = TestServer(username: "Pair-Setup", password: "123-45-678", salt: salt, b: b)
            let client = SRPClient(username: "Pair-Setup", password: "123-45-678", salt: salt)
            let proof = try client.respond(to: server.publicKey)

            let u = sha512(SRPClient.padded(client.publicKey, to: 384), SRPClient.padded(server.publicKey, to: 384))
            let S = server.premasterSecret(clientKey: client.publicKey, u: u)
            let K = sha512(Array(S.drop { $0 == 0 }))
            let groupHash = zip(sha512(SRPGroup.rfc5054_3072.prime), sha512([5])).map { $0 ^ $1 }
            let M1 = sha512(groupHash, sha512(Array("Pair-Setup".utf8)), salt,
                            Array(client.publicKey.drop { $0 == 0 }), Array(server.publicKey.drop { $0 == 0 }), K)
            #expect(proof.sessionKey == K)
            #expect(proof.proof == M1)
            #expect(proof.isValid(serverProof: sha512(SRPClient.padded(client.publicKey, to: 384), M1, K)))
        }
    }

    @Test func wrongPasswordGivesAnotherProof() throws {
        let salt = Hex.bytes(HAPSRPVectors.salt)
        let server = TestServer(username: "Pair-Setup", password: "111-11-111", salt: salt, b: Hex.bytes(HAPSRPVectors.Plain.b))
        let proof = try Self.homeKitClient().respond(to: server.publicKey)
        #expect(proof.proof != Hex.bytes(HAPSRPVectors.Plain.M1))
        #expect(server.publicKey != Hex.bytes(HAPSRPVectors.Plain.B))
    }

    @Test func randomPrivateKeysGiveFullLengthPublicKeys() {
        let keys = (0..<8).map { _ in SRPClient(username: "Pair-Setup", password: "123-45-678", salt: [1, 2]).publicKey }
        #expect(keys.allSatisfy { $0.count == 384 && $0[0] != 0 })
        #expect(Set(keys.map(Hex.string)).count == keys.count)
    }

    @Test func unsafeServerKeysThrow() {
        let client = Self.homeKitClient()
        let prime = SRPGroup.rfc5054_3072.prime
        #expect(throws: SRPError(reason: .serverKeyIsZeroModuloPrime)) { try client.respond(to: []) }
        #expect(throws: SRPError(reason: .serverKeyIsZeroModuloPrime)) { try client.respond(to: [UInt8](repeating: 0, count: 384)) }
        #expect(throws: SRPError(reason: .serverKeyIsZeroModuloPrime)) { try client.respond(to: prime) }
        #expect(throws: SRPError(reason: .serverKeyTooLong(length: 385, limit: 384))) { try client.respond(to: [1] + prime) }
        #expect(SRPError(reason: .serverKeyIsZeroModuloPrime).description == "the server's SRP public key B is 0 modulo N")
    }

    @Test func groupsAreTheRFC5054Groups() {
        #expect(SRPGroup.rfc5054_3072.prime.count == 384)
        #expect(SRPGroup.rfc5054_3072.generator == [5])
        #expect(SRPGroup.rfc5054_1024.prime.count == 128)
        #expect(SRPGroup.rfc5054_1024.generator == [2])
        #expect(SRPGroup(prime: [0, 0, 7], generator: [0, 2]).prime == [7])
    }

    @Test func pairSetupIsFast() throws {
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            let client = SRPClient(username: "Pair-Setup", password: "031-45-154", salt: Hex.bytes(HAPSRPVectors.salt))
            _ = try client.respond(to: Hex.bytes(HAPSRPVectors.Plain.B))
        }
        #expect(elapsed < .milliseconds(500), "one SRP client exchange took \(elapsed)")
    }

    private static func homeKitClient() -> SRPClient {
        SRPClient(
            username: HAPSRPVectors.username, password: HAPSRPVectors.password,
            salt: Hex.bytes(HAPSRPVectors.salt), privateKey: Hex.bytes(HAPSRPVectors.a))
    }
}

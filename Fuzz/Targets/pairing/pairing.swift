// libFuzzer target: the controller's pair-setup and pair-verify state machines (Sources/HAP:
// PairSetup, PairVerify, SRPClient, TLV8, with swift-crypto and libcrypto), fed hostile responses
// of an accessory at each step. Built by SwiftPM in .build-fuzz (HOMEGATE_FUZZ=1; see scripts/fuzz).
//
// The input's first byte picks a scenario (its value modulo 7), the rest is the responses; where a
// scenario takes several, each but the last is preceded by its length (2 bytes, big-endian):
//   0  pair-setup from M1: M2, M4, M6 as sent (SRP runs for every M2 with a salt and a key)
//   1  pair-setup after a real M2: M4, M6
//   2  pair-setup after a real M2 and M4: M6
//   3  pair-setup after a real M2 and M4: M6's encrypted TLV, sealed here under the exchange's
//      session key (an accessory that knows the setup code and sends a hostile inside)
//   4  pair-verify from M1: M2, M4 as sent
//   5  pair-verify: M2's encrypted TLV, sealed here under the key an accessory's ephemeral key
//      agrees with ours (a hostile inside from whoever answers)
//   6  pair-verify after a real M2, signed by the paired accessory's key: M4
// The "real" messages are one exchange fixed in advance, so that the 3072-bit SRP runs once per
// process for scenarios 1 to 3: the SRP vector of the tests (HAP-python 5.0.0 as the accessory,
// setup code 031-45-154, the controller's secret `a` fixed), and an M6 and pair-verify M2 signed
// here with a fixed accessory key.
// Properties: any response is answered or rejected with an error, never a crash, hang or leak;
// M4 is accepted only with the accessory's true SRP proof; pairing completes only with an M6
// that decrypts under the session key, names the pairing's identifier and key, and carries their
// valid signature; pair-verify's M2 is accepted only when signed with the paired accessory's key
// (never from the fuzzer's bytes); after pairing or verifying, any further message is refused.
//
// With FUZZ_PAIRING_SEEDS=<folder> set, the binary writes its seed inputs there and exits.
import Crypto
import Foundation
import HAP
import Wire

// SwiftPM gives the executable its own `main` (so libFuzzer's is not linked): run libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runLibFuzzer(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt
if let folder = ProcessInfo.processInfo.environment["FUZZ_PAIRING_SEEDS"] {
    Seeds.write(to: folder)
    exit(0)
}
var argumentCount = CommandLine.argc
var argumentValues = CommandLine.unsafeArgv
exit(runLibFuzzer(&argumentCount, &argumentValues, fuzzPairing))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPairing(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let scenario = bytes.first else { return 0 }
    var reader = Responses(bytes.dropFirst())
    switch scenario % 7 {
    case 0:
        var setup = Fixture.newSetup()
        _ = setup.start()
        drive(&setup, [reader.next(), reader.next(), reader.rest()], firstStep: 2)
    case 1:
        var setup = Fixture.afterM2
        drive(&setup, [reader.next(), reader.rest()], firstStep: 4)
    case 2:
        var setup = Fixture.afterM4
        drive(&setup, [reader.rest()], firstStep: 6)
    case 3:
        var setup = Fixture.afterM4
        let sealed = HAPChaCha.seal(reader.rest(), key: Fixture.setupEncryptionKey, nonce: "PS-Msg06")
        drive(&setup, [TLV8([(.state, [6]), (.encryptedData, sealed)]).encoded()], firstStep: 6)
    case 4:
        var verify = PairVerify(controller: Fixture.controller, accessory: Fixture.accessory)
        _ = verify.start()
        driveVerify(&verify, m2: reader.next(), m4: reader.rest())
    case 5:
        var verify = PairVerify(controller: Fixture.controller, accessory: Fixture.accessory)
        let m1 = verify.start()
        driveVerify(&verify, m2: Fixture.verifyM2(answering: m1, inside: reader.rest()).encoded(), m4: nil)
    default:
        var verify = PairVerify(controller: Fixture.controller, accessory: Fixture.accessory)
        let m1 = verify.start()
        let m2 = Fixture.verifyM2(answering: m1, inside: Fixture.signedVerifyInside(answering: m1).encoded())
        guard case .send = must({ () throws(HAPError) in try verify.receive(m2) }) else {
            fatalError("pair-verify: a correctly signed M2 was not answered with M3")
        }
        driveVerify(&verify, m2: nil, m4: reader.rest())
    }
    return 0
}

/// Feeds pair-setup the responses in turn, from M2, M4 or M6, until one is rejected.
func drive(_ setup: inout PairSetup, _ responses: [[UInt8]], firstStep: Int) {
    for (index, bytes) in responses.enumerated() {
        let step = firstStep + 2 * index
        guard let message = try? TLV8(decoding: bytes) else { return }
        let result: PairSetup.Step
        do {
            result = try setup.receive(message)
        } catch {
            _ = error.description
            return
        }
        switch result {
        case .send:
            if step == 4, message[.proof] != Fixture.serverProof {
                fatalError("pair-setup accepted an M4 without the accessory's SRP proof")
            }
            if step == 6 { fatalError("pair-setup answered M6 with another message") }
        case .paired(let pairing):
            guard step == 6 else { fatalError("pair-setup paired at M\(step)") }
            checkPaired(pairing, from: message)
            if (try? setup.receive(message)) != nil { fatalError("pair-setup accepted a message after pairing") }
            return
        }
    }
}

/// What pair-setup's result must be: the identity inside M6, under its valid signature.
func checkPaired(_ pairing: AccessoryPairing, from message: TLV8) {
    guard let sealed = message[.encryptedData],
          let plain = try? HAPChaCha.open(sealed, key: Fixture.setupEncryptionKey, nonce: "PS-Msg06"),
          let inner = try? TLV8(decoding: plain),
          let identifier = inner[.identifier], let publicKey = inner[.publicKey], let signature = inner[.signature],
          let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey),
          key.isValidSignature(signature, for: Fixture.accessorySigningSalt + identifier + publicKey) else {
        fatalError("pair-setup paired with an M6 that does not decrypt to a signed identity")
    }
    if pairing.publicKey != publicKey || Array(pairing.pairingID.utf8) != identifier {
        fatalError("pair-setup paired with \(pairing.pairingID), not the identity in M6")
    }
}

/// Feeds pair-verify M2 (if given; it must be refused, as nothing here signs it) and M4.
func driveVerify(_ verify: inout PairVerify, m2: [UInt8]?, m4: [UInt8]?) {
    if let m2 {
        guard let message = try? TLV8(decoding: m2) else { return }
        do {
            _ = try verify.receive(message)
            fatalError("pair-verify accepted an M2 not signed with the paired accessory's key")
        } catch {
            _ = error.description
            return
        }
    }
    guard let m4, let message = try? TLV8(decoding: m4) else { return }
    do {
        guard case .verified(let keys) = try verify.receive(message) else { fatalError("pair-verify answered M4 with another message") }
        if message.byte(.state) != 4 || message[.error] != nil { fatalError("pair-verify accepted an M4 of state \(String(describing: message.byte(.state))) or with an error") }
        if keys.controllerToAccessory.count != 32 || keys.accessoryToController.count != 32 { fatalError("pair-verify made keys that are not 32 bytes") }
        if (try? verify.receive(message)) != nil { fatalError("pair-verify accepted a message after verifying") }
    } catch {
        _ = error.description
    }
}

/// Responses cut from the input: length-prefixed ones, then the rest.
struct Responses {
    var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func next() -> [UInt8] {
        guard bytes.count >= 2 else { return rest() }
        let length = min(Int(bytes[bytes.startIndex]) << 8 | Int(bytes[bytes.startIndex + 1]), bytes.count - 2)
        let start = bytes.startIndex + 2
        defer { bytes = bytes[(start + length)...] }
        return Array(bytes[start..<(start + length)])
    }

    mutating func rest() -> [UInt8] {
        defer { bytes = bytes[bytes.endIndex...] }
        return Array(bytes)
    }

    /// `message` as a length-prefixed response.
    static func prefixed(_ message: [UInt8]) -> [UInt8] {
        [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    }
}

/// The exchange fixed in advance.
enum Fixture {
    static let setupCode = "031-45-154"
    static let controller = must { () throws(HAPError) in
        try ControllerIdentity(pairingID: "8E5F6C1A-3B2D-4E7F-9A0B-1C2D3E4F5A6B", privateKey: [UInt8](repeating: 0x11, count: 32))
    }
    static let accessoryKey = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x22, count: 32)) // swiftlint:disable:this force_try
    static let accessoryEphemeral = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x33, count: 32)) // swiftlint:disable:this force_try
    static let accessoryID = "AA:BB:CC:DD:EE:FF"
    static let accessory = AccessoryPairing(pairingID: accessoryID, publicKey: Array(accessoryKey.publicKey.rawRepresentation))

    static let serverProof = hex(Vectors.M2)
    static let m2 = TLV8([(.state, [2]), (.salt, hex(Vectors.salt)), (.publicKey, hex(Vectors.B))])
    static let m4 = TLV8([(.state, [4]), (.proof, serverProof)])
    static let sessionKey = hex(Vectors.K)
    static let setupEncryptionKey = HAPKeyDerivation.sha512(sessionKey, salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
    static let accessorySigningSalt = HAPKeyDerivation.sha512(sessionKey, salt: "Pair-Setup-Accessory-Sign-Salt", info: "Pair-Setup-Accessory-Sign-Info")
    /// M6's inside: the accessory's identifier and key, signed.
    static let m6Inside: TLV8 = {
        let identifier = Array(accessoryID.utf8)
        let signature = Array(try! accessoryKey.signature(for: accessorySigningSalt + identifier + accessory.publicKey)) // swiftlint:disable:this force_try
        return TLV8([(.identifier, identifier), (.publicKey, accessory.publicKey), (.signature, signature)])
    }()
    static let m6 = TLV8([(.state, [6]), (.encryptedData, HAPChaCha.seal(m6Inside.encoded(), key: setupEncryptionKey, nonce: "PS-Msg06"))])

    static func newSetup() -> PairSetup {
        must { () throws(HAPError) in try PairSetup(setupCode: setupCode, controller: controller, srpPrivateKey: hex(Vectors.a)) }
    }

    /// Pair-setup waiting for M4, and for M6: the fixed exchange's first steps, taken once.
    static let afterM2: PairSetup = {
        var setup = newSetup()
        _ = setup.start()
        guard case .send = must({ () throws(HAPError) in try setup.receive(m2) }) else { fatalError("the fixed M2 was not answered") }
        return setup
    }()
    static let afterM4: PairSetup = {
        var setup = afterM2
        guard case .send = must({ () throws(HAPError) in try setup.receive(m4) }) else { fatalError("the fixed M4 was not answered") }
        var check = setup
        guard case .paired = must({ () throws(HAPError) in try check.receive(m6) }) else { fatalError("the fixed M6 did not pair") }
        return setup
    }()

    /// Pair-verify M2 answering `m1`: our ephemeral key and `inside`, sealed under the agreed key.
    static func verifyM2(answering m1: TLV8, inside: [UInt8]) -> TLV8 {
        let key = verifyEncryptionKey(answering: m1)
        return TLV8([(.state, [2]), (.publicKey, Array(accessoryEphemeral.publicKey.rawRepresentation)),
                     (.encryptedData, HAPChaCha.seal(inside, key: key, nonce: "PV-Msg02"))])
    }

    static func verifyEncryptionKey(answering m1: TLV8) -> [UInt8] {
        let controllerKey = try! Curve25519.KeyAgreement.PublicKey(rawRepresentation: m1[.publicKey] ?? []) // swiftlint:disable:this force_try
        let shared = try! accessoryEphemeral.sharedSecretFromKeyAgreement(with: controllerKey) // swiftlint:disable:this force_try
        return HAPKeyDerivation.sha512(shared.withUnsafeBytes { Array($0) }, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
    }

    /// The inside of a true M2: our identifier, and the signature of both ephemeral keys.
    static func signedVerifyInside(answering m1: TLV8) -> TLV8 {
        let ours = Array(accessoryEphemeral.publicKey.rawRepresentation)
        let identifier = Array(accessoryID.utf8)
        let signature = Array(try! accessoryKey.signature(for: ours + identifier + (m1[.publicKey] ?? []))) // swiftlint:disable:this force_try
        return TLV8([(.identifier, identifier), (.signature, signature)])
    }
}

/// The seed inputs: the fixed exchange whole and from each step, its insides, the accessory's
/// TLV errors at each step, and pair-verify messages of the right shape.
enum Seeds {
    static func write(to folder: String) {
        let verifyShaped = TLV8([(.state, [2]), (.publicKey, [UInt8](repeating: 9, count: 32)), (.encryptedData, [UInt8](repeating: 0xA5, count: 100))])
        let verifyInside = TLV8([(.identifier, Array(Fixture.accessoryID.utf8)), (.signature, [UInt8](repeating: 0, count: 64))])
        let seeds: [(String, [UInt8])] = [
            ("setup-exchange", [0] + Responses.prefixed(Fixture.m2.encoded()) + Responses.prefixed(Fixture.m4.encoded()) + Fixture.m6.encoded()),
            ("setup-m2-error", [0] + TLV8([(.state, [2]), (.error, [6])]).encoded()),
            ("setup-from-m4", [1] + Responses.prefixed(Fixture.m4.encoded()) + Fixture.m6.encoded()),
            ("setup-m4-error", [1] + TLV8([(.state, [4]), (.error, [2])]).encoded()),
            ("setup-m6", [2] + Fixture.m6.encoded()),
            ("setup-m6-inside", [3] + Fixture.m6Inside.encoded()),
            ("verify-shaped", [4] + Responses.prefixed(verifyShaped.encoded()) + TLV8([(.state, [4])]).encoded()),
            ("verify-m2-error", [4] + TLV8([(.state, [2]), (.error, [2])]).encoded()),
            ("verify-m2-inside", [5] + verifyInside.encoded()),
            ("verify-m4", [6] + TLV8([(.state, [4])]).encoded()),
            ("verify-m4-error", [6] + TLV8([(.state, [4]), (.error, [2])]).encoded()),
        ]
        for (name, bytes) in seeds {
            let path = URL(fileURLWithPath: folder).appendingPathComponent(name).path
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { fatalError("cannot write \(path)") }
        }
    }
}

/// The value, or a stop: for the fixture, whose steps cannot fail.
func must<T>(_ body: () throws(HAPError) -> T) -> T {
    do {
        return try body()
    } catch {
        fatalError("the fixed exchange failed: \(error)")
    }
}

func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { !$0.isASCIIWhitespace }).map { UInt8(String(UnicodeScalar($0)), radix: 16)! }
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

extension UInt8 {
    var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x09 || self == 0x0D }
}

/// The tests' SRP vector (Tests/HAPTests/HAPSRPVectors.swift, `Plain`): 3072-bit group, SHA-512,
/// I = Pair-Setup, P = 031-45-154, made with HAP-python 5.0.0 as the accessory.
enum Vectors {
    static let salt = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
    static let a = "3c7d1e0f9a8b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081920a1b2c"
    static let B = """
        e1c66f2a331bb364c268a153707e70ff102f6d152275c8f9b65167567488892459b44078d2695b72cfd2c1e01280350b
        dc45866c1029133ba737430442a322d5132d034bab509fe765f1a22fb5e49d8a0fd6defe8b41aa92349f39c2457799cb
        427539836e170d727d91d9870c681f02fac78abf52a3d57e272df0773da9f29b3406029202a1e87ab72a08058ec528cd
        112a0e9a8781709d1760c3b2ec0b8f88f20a1f63787125fca0990e83ca324e5792bf91ab2c9d9ac95b3b03840abfa83e
        c383920c58cdb367c086757952cfd11362bce20f13dee84aac8e2bcd2eaa3124f60635f42377c395464cbe5f66bf9158
        249e284e1cc21046b9f963d4afe3fbc12fe2ce406f37ef333d2c3fde37d48cd258b70b20c5c365289e11a967e54a9484
        de56aafc8c1eca8672c118cefa45e4ef75877c04b9e40441c409dbc3f891193471b897635979b2a32b9c65648fcdac1e
        0ae696854ed58bc96d9120b63ab88fa2dc847fd4876977ccd5497393c8aaa4ebee7f4e4b5e3166c440a5addddc812561
        """
    static let K = """
        53f5231b798161097797a7031500f0b97e10c1c6bc094d2315d30eb8bc09ee664caf6f1d7a35a9bd64f95c567d1f4b86
        47a4ab3e8b7e35bae9dfdfffb792fa00
        """
    static let M2 = """
        095d7bd76e2833c52ec0010dc36d990c64a3b623ad144d7402e1ea16190486ddbababec4e89faf42e28743bb8c619264
        b38bf5b319a91b5bcd79f384fb28261c
        """
}

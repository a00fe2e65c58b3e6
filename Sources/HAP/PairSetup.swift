import Crypto
import Wire

/// Pair-setup, M1 to M6, as a value-type state machine: it makes the messages to send and checks
/// the ones received; the connection only carries them (`POST /pair-setup`).
///
/// M1/M2 exchange the SRP salt and public keys, M3/M4 the SRP proofs (a wrong setup code fails
/// here), M5/M6 the long-term public keys, each signed and sent encrypted under the SRP session
/// key. The result is the accessory's ``AccessoryPairing``.
public struct PairSetup: Sendable {
    /// What to do after a message was received.
    public enum Step: Sendable {
        /// Send this message next.
        case send(TLV8)
        /// Pairing is complete.
        case paired(AccessoryPairing)
    }

    private enum State: Sendable {
        case idle
        case awaitingSalt
        case awaitingProof(SRPProof)
        case awaitingExchange(sessionKey: [UInt8])
        case finished
    }

    /// The setup code, normalised to `XXX-XX-XXX`.
    public let setupCode: String
    let controller: ControllerIdentity
    private let srpPrivateKey: [UInt8]?
    private var state = State.idle

    /// - Parameters:
    ///   - setupCode: the accessory's code, `123-45-678` or `12345678`.
    ///   - srpPrivateKey: SRP's secret `a` (tests fix it; nil: random).
    /// - Throws: ``HAPError`` if the code is not eight digits.
    public init(setupCode: String, controller: ControllerIdentity, srpPrivateKey: [UInt8]? = nil) throws(HAPError) {
        self.setupCode = try Self.normalised(setupCode)
        self.controller = controller
        self.srpPrivateKey = srpPrivateKey
    }

    /// `123-45-678` from `123-45-678` or `12345678`.
    /// - Throws: ``HAPError`` if the code is anything else.
    public static func normalised(_ code: String) throws(HAPError) -> String {
        let digits = code.filter { $0 != "-" }
        let shapeOK = code.count == 8 || (code.count == 10 && Array(code)[3] == "-" && Array(code)[6] == "-")
        guard shapeOK, digits.count == 8, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else {
            throw HAPError(.pairing, "the setup code must be eight digits, written 123-45-678 (got \"\(code)\")")
        }
        let characters = Array(digits)
        return "\(String(characters[0..<3]))-\(String(characters[3..<5]))-\(String(characters[5..<8]))"
    }

    /// M1: the request to start pairing.
    public mutating func start() -> TLV8 {
        state = .awaitingSalt
        return TLV8([(.state, [1]), (.method, [0])])
    }

    /// Checks the accessory's M2, M4 or M6 and tells what follows.
    /// - Throws: ``HAPError`` (``HAPError/Kind/pairing``) for a TLV error from the accessory, a
    ///   wrong setup code, a proof or signature that does not check, a message out of order.
    public mutating func receive(_ message: TLV8) throws(HAPError) -> Step {
        switch state {
        case .awaitingSalt:
            let (publicKey, proof) = try srpProof(from: try Self.expect(message, state: 2, step: "M2"))
            state = .awaitingProof(proof)
            return .send(TLV8([(.state, [3]), (.publicKey, publicKey), (.proof, proof.proof)]))
        case .awaitingProof(let proof):
            let verified = try Self.expect(message, state: 4, step: "M4")
            guard let serverProof = verified[.proof], proof.isValid(serverProof: serverProof) else {
                throw HAPError(.pairing, "pair-setup M4: the accessory's SRP proof does not check")
            }
            state = .awaitingExchange(sessionKey: proof.sessionKey)
            return .send(try exchangeRequest(sessionKey: proof.sessionKey))
        case .awaitingExchange(let sessionKey):
            let pairing = try accessoryPairing(from: try Self.expect(message, state: 6, step: "M6"), sessionKey: sessionKey)
            state = .finished
            return .paired(pairing)
        case .idle, .finished:
            throw HAPError(.state, "pair-setup: no message was expected")
        }
    }

    /// SRP's public key `A` and proof `M1` for the accessory's salt and public key `B`.
    private func srpProof(from message: TLV8) throws(HAPError) -> ([UInt8], SRPProof) {
        guard let salt = message[.salt], let serverKey = message[.publicKey] else {
            throw HAPError(.malformed, "pair-setup M2: the accessory sent no salt or no public key")
        }
        let client = SRPClient(username: "Pair-Setup", password: setupCode, salt: salt, privateKey: srpPrivateKey)
        do {
            return (client.publicKey, try client.respond(to: serverKey))
        } catch {
            throw HAPError(.pairing, "pair-setup M2: the accessory's SRP public key is invalid (\(error))")
        }
    }

    /// M5: our pairing id, long-term public key and their signature, encrypted.
    private func exchangeRequest(sessionKey: [UInt8]) throws(HAPError) -> TLV8 {
        let signingSalt = HAPKeyDerivation.sha512(sessionKey, salt: "Pair-Setup-Controller-Sign-Salt", info: "Pair-Setup-Controller-Sign-Info")
        let identifier = Array(controller.pairingID.utf8)
        let signature = try controller.sign(signingSalt + identifier + controller.publicKey)
        let inner = TLV8([(.identifier, identifier), (.publicKey, controller.publicKey), (.signature, signature)])
        let sealed = HAPChaCha.seal(inner.encoded(), key: Self.encryptionKey(sessionKey), nonce: "PS-Msg05")
        return TLV8([(.state, [5]), (.encryptedData, sealed)])
    }

    /// M6: the accessory's pairing id and long-term public key, with its signature checked.
    private func accessoryPairing(from message: TLV8, sessionKey: [UInt8]) throws(HAPError) -> AccessoryPairing {
        guard let sealed = message[.encryptedData] else {
            throw HAPError(.malformed, "pair-setup M6: the accessory sent no encrypted data")
        }
        let inner: TLV8
        do {
            inner = try TLV8(decoding: try HAPChaCha.open(sealed, key: Self.encryptionKey(sessionKey), nonce: "PS-Msg06"))
        } catch {
            throw HAPError(.pairing, "pair-setup M6: the accessory's encrypted data does not decrypt (\(error))")
        }
        guard let identifier = inner[.identifier], let publicKey = inner[.publicKey], let signature = inner[.signature],
              let pairingID = String(validating: identifier, as: UTF8.self) else {
            throw HAPError(.malformed, "pair-setup M6: the accessory's identity is incomplete")
        }
        let signingSalt = HAPKeyDerivation.sha512(sessionKey, salt: "Pair-Setup-Accessory-Sign-Salt", info: "Pair-Setup-Accessory-Sign-Info")
        let pairing = AccessoryPairing(pairingID: pairingID, publicKey: publicKey)
        guard pairing.verifies(signature, of: signingSalt + identifier + publicKey) else {
            throw HAPError(.pairing, "pair-setup M6: the accessory's signature does not check")
        }
        return pairing
    }

    private static func encryptionKey(_ sessionKey: [UInt8]) -> [UInt8] {
        HAPKeyDerivation.sha512(sessionKey, salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
    }

    /// The message if it is the expected state and carries no error.
    static func expect(_ message: TLV8, state: UInt8, step: String, operation: String = "pair-setup") throws(HAPError) -> TLV8 {
        // Any error item refuses the message, also one that is not the single byte it should be
        // (as if absent, an empty one let pair-verify's M4 pass as success).
        if let value = message[.error] {
            let code = value.count == 1 ? value[0] : nil
            let error = code.flatMap(PairingErrorCode.init(rawValue:))
            let reason = error.map { "\($0)" } ?? code.map { "error \($0)" } ?? "an error item of \(value.count) bytes instead of 1"
            let hint = step == "M4" && error == .authentication ? ": the setup code is wrong" : ""
            throw HAPError(.pairing, "\(operation) \(step): the accessory answered \(reason)\(hint)", pairingError: error)
        }
        guard message.byte(.state) == state else {
            throw HAPError(.malformed, "\(operation) \(step): expected state \(state), got \(message.byte(.state).map(String.init) ?? "none")")
        }
        return message
    }
}

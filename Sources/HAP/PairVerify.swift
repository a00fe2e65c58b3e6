import Crypto
import Wire

/// The keys of an encrypted session, one per direction.
public struct SessionKeys: Sendable {
    /// Encrypts what the controller sends.
    public let controllerToAccessory: [UInt8]
    /// Decrypts what the accessory sends.
    public let accessoryToController: [UInt8]
    /// Decrypts the events an accessory sends by itself over HAP over CoAP (`Event-Salt`,
    /// `Event-Read-Encryption-Key`); HAP over IP sends its events with ``accessoryToController``.
    public let accessoryEvents: [UInt8]
}

/// Pair-verify, M1 to M4, as a value-type state machine: an X25519 exchange in which each side
/// signs both ephemeral keys with its long-term key; the shared secret gives the session keys.
public struct PairVerify: Sendable {
    /// What to do after a message was received.
    public enum Step: Sendable {
        case send(TLV8)
        /// Verified: switch the connection to these keys.
        case verified(SessionKeys)
    }

    private enum State: Sendable {
        case idle
        case awaitingAccessoryProof
        case awaitingConfirmation(sharedSecret: [UInt8])
        case finished
    }

    let controller: ControllerIdentity
    let accessory: AccessoryPairing
    private let ephemeral: Curve25519.KeyAgreement.PrivateKey
    private var state = State.idle

    public init(controller: ControllerIdentity, accessory: AccessoryPairing) {
        self.controller = controller
        self.accessory = accessory
        self.ephemeral = Curve25519.KeyAgreement.PrivateKey()
    }

    /// M1: our ephemeral public key.
    public mutating func start() -> TLV8 {
        state = .awaitingAccessoryProof
        return TLV8([(.state, [1]), (.publicKey, ephemeralPublicKey)])
    }

    private var ephemeralPublicKey: [UInt8] { Array(ephemeral.publicKey.rawRepresentation) }

    /// Checks M2 or M4 and tells what follows.
    /// - Throws: ``HAPError`` when the accessory is not the one paired, its signature does not
    ///   check, or it answered a TLV error.
    public mutating func receive(_ message: TLV8) throws(HAPError) -> Step {
        switch state {
        case .awaitingAccessoryProof:
            let checked = try PairSetup.expect(message, state: 2, step: "M2", operation: "pair-verify")
            let (reply, secret) = try answer(checked)
            state = .awaitingConfirmation(sharedSecret: secret)
            return .send(reply)
        case .awaitingConfirmation(let secret):
            _ = try PairSetup.expect(message, state: 4, step: "M4", operation: "pair-verify")
            state = .finished
            return .verified(SessionKeys(
                controllerToAccessory: HAPKeyDerivation.sha512(secret, salt: "Control-Salt", info: "Control-Write-Encryption-Key"),
                accessoryToController: HAPKeyDerivation.sha512(secret, salt: "Control-Salt", info: "Control-Read-Encryption-Key"),
                accessoryEvents: HAPKeyDerivation.sha512(secret, salt: "Event-Salt", info: "Event-Read-Encryption-Key")
            ))
        case .idle, .finished:
            throw HAPError(.state, "pair-verify: no message was expected")
        }
    }

    /// Checks the accessory's proof in M2 and makes M3.
    private func answer(_ message: TLV8) throws(HAPError) -> (TLV8, [UInt8]) {
        guard let accessoryKey = message[.publicKey], let sealed = message[.encryptedData],
              let publicKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: accessoryKey),
              let shared = try? ephemeral.sharedSecretFromKeyAgreement(with: publicKey) else {
            throw HAPError(.malformed, "pair-verify M2: the accessory's public key or encrypted data is missing or invalid")
        }
        let secret = shared.withUnsafeBytes { Array($0) }
        let key = HAPKeyDerivation.sha512(secret, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
        let inner: TLV8
        do {
            inner = try TLV8(decoding: try HAPChaCha.open(sealed, key: key, nonce: "PV-Msg02"))
        } catch {
            throw HAPError(.pairing, "pair-verify M2: the accessory's encrypted data does not decrypt (\(error))")
        }
        guard let identifier = inner[.identifier], let signature = inner[.signature] else {
            throw HAPError(.malformed, "pair-verify M2: the accessory's identity is incomplete")
        }
        let claimed = String(decoding: identifier, as: UTF8.self)
        guard claimed == accessory.pairingID else {
            throw HAPError(.pairing, "pair-verify M2: this is accessory \(claimed), not the paired \(accessory.pairingID)")
        }
        guard accessory.verifies(signature, of: accessoryKey + identifier + ephemeralPublicKey) else {
            throw HAPError(.pairing, "pair-verify M2: the accessory's signature does not check against its stored key")
        }
        let ourIdentifier = Array(controller.pairingID.utf8)
        let ourSignature = try controller.sign(ephemeralPublicKey + ourIdentifier + accessoryKey)
        let reply = TLV8([(.identifier, ourIdentifier), (.signature, ourSignature)])
        return (TLV8([(.state, [3]), (.encryptedData, HAPChaCha.seal(reply.encoded(), key: key, nonce: "PV-Msg03"))]), secret)
    }
}

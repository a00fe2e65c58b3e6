import Crypto
import Foundation

/// The controller's long-term identity: its pairing id (a UUID string: HAP-python requires one)
/// and its Ed25519 long-term key pair. One per gateway; every accessory it pairs with knows it.
///
/// The private key is a secret: ``description`` never shows it.
public struct ControllerIdentity: Sendable, CustomStringConvertible {
    public let pairingID: String
    let signingKey: Curve25519.Signing.PrivateKey

    /// A new identity: a random UUID and a fresh key pair.
    public static func generate() -> ControllerIdentity {
        ControllerIdentity(pairingID: UUID().uuidString, signingKey: Curve25519.Signing.PrivateKey())
    }

    /// An identity read back from storage.
    /// - Throws: ``HAPError`` if the key is not a 32-byte Ed25519 private key.
    public init(pairingID: String, privateKey: [UInt8]) throws(HAPError) {
        do {
            self.init(pairingID: pairingID, signingKey: try Curve25519.Signing.PrivateKey(rawRepresentation: privateKey))
        } catch {
            throw HAPError(.state, "the stored controller key is not an Ed25519 private key")
        }
    }

    init(pairingID: String, signingKey: Curve25519.Signing.PrivateKey) {
        self.pairingID = pairingID
        self.signingKey = signingKey
    }

    /// The long-term public key (32 bytes) accessories verify our signatures with.
    public var publicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }

    /// The private key's 32 bytes, for storage only (mode 0600); never log them.
    public var privateKeyForStorage: [UInt8] { Array(signingKey.rawRepresentation) }

    func sign(_ message: [UInt8]) throws(HAPError) -> [UInt8] {
        do {
            return Array(try signingKey.signature(for: message))
        } catch {
            throw HAPError(.pairing, "could not sign with the controller key: \(error)")
        }
    }

    public var description: String { "controller \(pairingID)" }
}

/// What the controller knows of an accessory it paired with: the accessory's pairing id (its
/// device id, `AA:BB:CC:DD:EE:FF`) and its Ed25519 long-term public key.
public struct AccessoryPairing: Sendable, Hashable {
    public let pairingID: String
    public let publicKey: [UInt8]

    public init(pairingID: String, publicKey: [UInt8]) {
        self.pairingID = pairingID
        self.publicKey = publicKey
    }

    /// Whether `signature` is the accessory's signature of `message`.
    func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}

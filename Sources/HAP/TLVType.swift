/// The item types of HAP's TLV8 encoding, as the pairing endpoints use them.
///
/// A ``TLV8`` item's type is a raw byte, so types this enum does not list still decode; these are
/// the ones pair-setup, pair-verify and `/pairings` exchange.
public enum TLVType: UInt8, Sendable {
    /// The pairing method (pair-setup, add pairing, remove pairing, list pairings, ...).
    case method = 0x00
    /// A pairing identifier (the controller's or the accessory's).
    case identifier = 0x01
    /// The SRP salt (16 bytes).
    case salt = 0x02
    /// An SRP, X25519 or Ed25519 public key.
    case publicKey = 0x03
    /// An SRP proof (M1 or M2).
    case proof = 0x04
    /// ChaCha20-Poly1305 ciphertext with its 16-byte tag.
    case encryptedData = 0x05
    /// The step of the exchange (M1 = 1, M2 = 2, ...).
    case state = 0x06
    /// A ``PairingErrorCode``.
    case error = 0x07
    /// Seconds to wait before retrying (with ``PairingErrorCode/backoff``).
    case retryDelay = 0x08
    /// An X.509 certificate (MFi authentication).
    case certificate = 0x09
    /// An Ed25519 signature.
    case signature = 0x0A
    /// A pairing's permissions (0 user, 1 admin).
    case permissions = 0x0B
    /// A fragment of a larger encrypted message (not the last).
    case fragmentData = 0x0C
    /// The last fragment of a larger encrypted message.
    case fragmentLast = 0x0D
    /// Pairing flags (transient, split).
    case flags = 0x13
    /// Separates the records of a list, such as the `/pairings` list response.
    case separator = 0xFF
}

import Crypto
import Foundation

/// The single ChaCha20-Poly1305 messages of pair-setup and pair-verify (the `EncryptedData` items).
///
/// The nonce is an ASCII label such as `PS-Msg05`, left-padded with zero bytes to 12 bytes; there
/// is no additional authenticated data.
public enum HAPChaCha {
    /// Encrypts `plaintext`; returns the ciphertext followed by the 16-byte tag.
    ///
    /// - Precondition: `key` is 32 bytes and `nonce` at most 12 ASCII bytes.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: String) -> [UInt8] {
        let box = FrameSealer.seal(
            plaintext, key: symmetricKey(key), nonce: Self.nonce(nonce), aad: [UInt8]())
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// Decrypts ciphertext followed by its 16-byte tag.
    ///
    /// - Throws: ``FrameError`` when the message is shorter than a tag or does not authenticate.
    /// - Precondition: `key` is 32 bytes and `nonce` at most 12 ASCII bytes.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: String) throws(FrameError) -> [UInt8] {
        guard sealed.count >= 16 else { throw FrameError(reason: .messageTooShort(length: sealed.count)) }
        let tagStart = sealed.count - 16
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: Self.nonce(nonce), ciphertext: sealed[..<tagStart], tag: sealed[tagStart...])
            return Array(try ChaChaPoly.open(box, using: symmetricKey(key), authenticating: [UInt8]()))
        } catch {
            throw FrameError(reason: .messageAuthenticationFailed(nonce: nonce))
        }
    }

    /// The label's bytes after 12 - n zero bytes.
    static func nonce(_ label: String) -> ChaChaPoly.Nonce {
        let bytes = Array(label.utf8)
        precondition(bytes.count <= 12, "a ChaCha20-Poly1305 nonce label has at most 12 bytes: \(label)")
        return FrameSealer.nonce(bytes: [UInt8](repeating: 0, count: 12 - bytes.count) + bytes)
    }

    private static func symmetricKey(_ key: [UInt8]) -> SymmetricKey {
        precondition(key.count == 32, "a ChaCha20-Poly1305 key has 32 bytes, not \(key.count)")
        return SymmetricKey(data: key)
    }
}

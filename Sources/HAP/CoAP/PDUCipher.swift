import Crypto

/// One direction of an encrypted HAP-over-CoAP session: each CoAP payload is one
/// ChaCha20-Poly1305 message (ciphertext, then the 16-byte tag), without additional data; the
/// nonce is 4 zero bytes and the direction's 64-bit little-endian message counter, from 0.
struct PDUCipher: Sendable {
    private let key: SymmetricKey
    private(set) var counter: UInt64 = 0

    /// - Precondition: `key` is 32 bytes.
    init(key: [UInt8]) {
        precondition(key.count == 32, "a ChaCha20-Poly1305 key has 32 bytes, not \(key.count)")
        self.key = SymmetricKey(data: key)
    }

    mutating func seal(_ plaintext: [UInt8]) -> [UInt8] {
        let box = FrameSealer.seal(plaintext, key: key, nonce: FrameSealer.nonce(counter: counter), aad: [UInt8]())
        counter &+= 1
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// - Throws: ``HAPError`` (malformed) when the message does not authenticate with the
    ///   current counter; the counter then stays where it was.
    mutating func open(_ sealed: [UInt8]) throws(HAPError) -> [UInt8] {
        guard sealed.count >= 16 else { throw HAPError(.malformed, "an encrypted CoAP payload of \(sealed.count) bytes (shorter than its tag)") }
        let tagStart = sealed.count - 16
        do {
            let box = try ChaChaPoly.SealedBox(nonce: FrameSealer.nonce(counter: counter), ciphertext: sealed[..<tagStart], tag: sealed[tagStart...])
            let plaintext = try ChaChaPoly.open(box, using: key, authenticating: [UInt8]())
            counter &+= 1
            return Array(plaintext)
        } catch {
            throw HAPError(.malformed, "an encrypted CoAP payload does not authenticate (message \(counter))")
        }
    }
}

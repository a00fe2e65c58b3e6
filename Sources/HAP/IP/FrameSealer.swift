import Crypto
import Foundation

/// Encrypts one direction of a HAP session (after pair-verify) into frames.
///
/// Each frame is a 2-byte little-endian plaintext length (at most 1024), then the
/// ChaCha20-Poly1305 ciphertext of that many bytes, then its 16-byte tag. The length bytes are the
/// additional authenticated data; the nonce is 4 zero bytes and the 64-bit little-endian frame
/// counter, which starts at 0 and counts every frame of this direction.
public struct FrameSealer: Sendable {
    /// The most plaintext bytes in one frame.
    public static let maxFrameLength = 1024
    /// The length prefix and the tag around each frame's ciphertext.
    public static let frameOverhead = 2 + 16

    private let key: SymmetricKey
    private var counter: UInt64 = 0

    /// A sealer with the session key of its direction (`Control-Write-Encryption-Key` for
    /// controller to accessory).
    ///
    /// - Precondition: `key` is 32 bytes.
    public init(key: [UInt8]) {
        precondition(key.count == 32, "a ChaCha20-Poly1305 key has 32 bytes, not \(key.count)")
        self.key = SymmetricKey(data: key)
    }

    /// The number of frames sealed so far: the counter of the next frame.
    public var frameCount: UInt64 { counter }

    /// Seals `plaintext` into as many frames as it needs (none for empty plaintext).
    public mutating func seal(_ plaintext: some Collection<UInt8>) -> [UInt8] {
        let bytes = Array(plaintext)
        let frames = (bytes.count + Self.maxFrameLength - 1) / Self.maxFrameLength
        var sealed: [UInt8] = []
        sealed.reserveCapacity(bytes.count + frames * Self.frameOverhead)
        var start = 0
        while start < bytes.count {
            let end = min(start + Self.maxFrameLength, bytes.count)
            sealFrame(bytes[start..<end], into: &sealed)
            start = end
        }
        return sealed
    }

    private mutating func sealFrame(_ chunk: ArraySlice<UInt8>, into sealed: inout [UInt8]) {
        let length = UInt16(chunk.count).littleEndian
        let box = withUnsafeBytes(of: length) { lengthBytes in
            sealed.appendBytes(lengthBytes)
            return Self.seal(chunk, key: key, nonce: Self.nonce(counter: counter), aad: lengthBytes)
        }
        sealed.appendBytes(box.ciphertext)
        sealed.appendBytes(box.tag)
        counter &+= 1
    }

    /// ChaCha20-Poly1305, which fails only for a wrong key or nonce size (excluded by construction).
    static func seal(
        _ message: some DataProtocol, key: SymmetricKey, nonce: ChaChaPoly.Nonce, aad: some DataProtocol
    ) -> ChaChaPoly.SealedBox {
        do {
            return try ChaChaPoly.seal(message, using: key, nonce: nonce, authenticating: aad)
        } catch {
            preconditionFailure("ChaChaPoly.seal failed with a 32-byte key and a 12-byte nonce: \(error)")
        }
    }

    /// The nonce of frame `counter`: 4 zero bytes, then the counter in little-endian order.
    static func nonce(counter: UInt64) -> ChaChaPoly.Nonce {
        let words = (
            UInt32(0),
            UInt32(truncatingIfNeeded: counter).littleEndian,
            UInt32(truncatingIfNeeded: counter >> 32).littleEndian
        )
        return withUnsafeBytes(of: words) { nonce(bytes: $0) }
    }

    /// A nonce from exactly 12 bytes.
    static func nonce(bytes: some DataProtocol) -> ChaChaPoly.Nonce {
        do {
            return try ChaChaPoly.Nonce(data: bytes)
        } catch {
            preconditionFailure("a ChaCha20-Poly1305 nonce has 12 bytes, not \(bytes.count)")
        }
    }
}

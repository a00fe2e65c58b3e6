import Crypto
import Foundation

/// Decrypts one direction of a HAP session, however the frames are cut into reads.
///
/// Feed it every byte received, in order; it keeps a partial frame until the rest arrives. See
/// ``FrameSealer`` for the frame layout. After an error every later call throws the same error:
/// the connection is unusable and must be closed.
public struct FrameOpener: Sendable {
    private let key: SymmetricKey
    private var counter: UInt64 = 0
    private var pending: [UInt8] = []
    private var failure: FrameError?

    /// An opener with the session key of its direction (`Control-Read-Encryption-Key` for
    /// accessory to controller).
    ///
    /// - Precondition: `key` is 32 bytes.
    public init(key: [UInt8]) {
        precondition(key.count == 32, "a ChaCha20-Poly1305 key has 32 bytes, not \(key.count)")
        self.key = SymmetricKey(data: key)
    }

    /// The number of frames opened so far: the counter of the next frame.
    public var frameCount: UInt64 { counter }

    /// The bytes of an incomplete frame waiting for the rest.
    public var bufferedByteCount: Int { pending.count }

    /// Adds received bytes; returns the plaintext of every frame they complete (maybe none).
    ///
    /// - Throws: ``FrameError`` for a frame longer than 1024 bytes or one that does not
    ///   authenticate (wrong key, tampered, or out of order).
    public mutating func open(_ bytes: some Collection<UInt8>) throws(FrameError) -> [UInt8] {
        if let failure { throw failure }
        pending.appendBytes(bytes)
        var plaintext: [UInt8] = []
        var consumed = 0
        while pending.count - consumed >= 2 {
            let length = Int(pending[consumed]) | Int(pending[consumed + 1]) << 8
            guard length <= FrameSealer.maxFrameLength else {
                throw fail(FrameError(reason: .frameTooLong(length: length)))
            }
            let end = consumed + FrameSealer.frameOverhead + length
            guard end <= pending.count else { break }
            guard let frame = openFrame(at: consumed, length: length) else {
                throw fail(FrameError(reason: .frameAuthenticationFailed(counter: counter)))
            }
            plaintext.appendBytes(frame)
            counter &+= 1
            consumed = end
        }
        pending.removeFirst(consumed)
        return plaintext
    }

    /// The plaintext of the complete frame at `start`, or `nil` when it does not authenticate.
    private func openFrame(at start: Int, length: Int) -> Data? {
        let body = start + 2
        let tag = body + length
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: FrameSealer.nonce(counter: counter),
                ciphertext: pending[body..<tag],
                tag: pending[tag..<(tag + 16)]
            )
            return try ChaChaPoly.open(box, using: key, authenticating: pending[start..<body])
        } catch {
            return nil
        }
    }

    private mutating func fail(_ error: FrameError) -> FrameError {
        failure = error
        pending = []
        return error
    }
}

/// Encrypted session data that cannot be opened. The connection must be closed.
public struct FrameError: Error, CustomStringConvertible, Equatable {
    enum Reason: Equatable {
        case frameTooLong(length: Int)
        case frameAuthenticationFailed(counter: UInt64)
        case messageTooShort(length: Int)
        case messageAuthenticationFailed(nonce: String)
    }

    let reason: Reason

    /// Names what is wrong.
    public var description: String {
        switch reason {
        case .frameTooLong(let length):
            return "encrypted frame declares \(length) bytes, the limit is \(FrameSealer.maxFrameLength)"
        case .frameAuthenticationFailed(let counter):
            return "encrypted frame \(counter) does not authenticate (wrong key, tampered or out of order)"
        case .messageTooShort(let length):
            return "encrypted message of \(length) bytes is shorter than its 16-byte tag"
        case .messageAuthenticationFailed(let nonce):
            return "encrypted message with nonce \(nonce) does not authenticate (wrong key or tampered)"
        }
    }
}

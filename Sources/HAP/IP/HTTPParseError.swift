/// A byte stream from an accessory that is not a well-formed sequence of HTTP responses and
/// events. The connection must be closed.
public struct HTTPParseError: Error, CustomStringConvertible, Equatable {
    enum Reason: Equatable {
        case badStatusLine(String)
        case badHeaderLine(String)
        case headerTooLarge(limit: Int)
        case badContentLength(String)
        case bodyTooLarge(length: Int, limit: Int)
        case badChunkSize(String)
        case badChunkEnd
        case bytesBeforeEncryption(count: Int)
    }

    let reason: Reason

    /// Names what is wrong.
    public var description: String {
        switch reason {
        case .badStatusLine(let line):
            return "bad status line \"\(line)\" (expected HTTP/1.x or EVENT/1.0, a 3-digit status, a reason)"
        case .badHeaderLine(let line):
            return "bad header line \"\(line)\" (expected name: value)"
        case .headerTooLarge(let limit):
            return "the header block exceeds \(limit) bytes"
        case .badContentLength(let value):
            return "bad Content-Length \"\(value)\""
        case .bodyTooLarge(let length, let limit):
            return "the body of \(length) bytes exceeds the limit of \(limit) bytes"
        case .badChunkSize(let line):
            return "bad chunk size line \"\(line)\""
        case .badChunkEnd:
            return "a chunk's data is not followed by CRLF"
        case .bytesBeforeEncryption(let count):
            return "\(count) bytes followed the pair-verify response in plaintext, where the encrypted session starts"
        }
    }
}

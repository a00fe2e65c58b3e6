/// An incremental parser of the messages an accessory sends on a HAP connection: HTTP/1.1
/// responses and `EVENT/1.0` notifications, in any mix, cut into reads anywhere.
///
/// SwiftNIO's HTTP parser refuses `EVENT/1.0` status lines, hence this one. It reads `HTTP/1.x`
/// and `EVENT/1.0` status lines, CRLF-terminated header fields, and bodies framed by
/// `Content-Length` or `Transfer-Encoding: chunked`. 1xx, 204 and 304 responses have no body, and
/// neither has a message with neither framing header (an accessory never closes the connection
/// to end a body). After an error every later call throws the same error: the connection must be
/// closed.
public struct HTTPResponseParser: Sendable {
    /// The default limit of a status line plus header fields: 16 KiB.
    public static let defaultMaxHeaderBytes = 16 * 1024
    /// The default limit of a body: 8 MiB (a large bridge's `/accessories` is a few hundred KiB).
    public static let defaultMaxBodyBytes = 8 * 1024 * 1024

    /// The limit of a status line plus header fields (and of a chunked body's trailer).
    public let maxHeaderBytes: Int
    /// The limit of a body, after removing the chunked coding.
    public let maxBodyBytes: Int

    private enum State: Sendable {
        case head
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailer(bytes: Int)
    }

    private enum Step {
        case needMoreBytes
        case progress
        case message(HTTPMessage)
    }

    private var state = State.head
    private var buffer: [UInt8] = []
    /// Where the unparsed bytes start in `buffer`.
    private var offset = 0
    /// How far past `offset` the search for the end of the header block has looked.
    private var searched = 0
    /// The message being read, once its header block is parsed.
    private var message = Self.noMessage
    private static let noMessage = HTTPMessage(kind: .response, status: 0, reason: "")
    private var failure: HTTPParseError?

    /// A parser with the default limits.
    public init() {
        self.init(maxHeaderBytes: Self.defaultMaxHeaderBytes, maxBodyBytes: Self.defaultMaxBodyBytes)
    }

    /// A parser with the given limits.
    public init(maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Adds received bytes; returns the messages they complete, in order (maybe none).
    ///
    /// - Throws: ``HTTPParseError`` for a malformed status line, header field, length or chunk,
    ///   or a header block or body over its limit.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> [HTTPMessage] {
        if let failure { throw failure }
        buffer.appendBytes(bytes)
        var messages: [HTTPMessage] = []
        do {
            loop: while true {
                switch try step() {
                case .needMoreBytes: break loop
                case .progress: continue
                case .message(let message): messages.append(message)
                }
            }
        } catch {
            failure = error
            buffer = []
            offset = 0
            throw error
        }
        buffer.removeFirst(offset)
        offset = 0
        return messages
    }

    private var available: Int { buffer.count - offset }

    /// Whether the bytes fed so far ended exactly where a message ended: nothing of the next one
    /// is buffered or begun.
    public var isBetweenMessages: Bool {
        guard case .head = state else { return false }
        return buffer.count == offset
    }

    /// The bytes received and not yet part of a whole message (a begun message's body counts
    /// once it is complete, not here).
    public var bufferedByteCount: Int { buffer.count - offset }

    private mutating func step() throws(HTTPParseError) -> Step {
        switch state {
        case .head: return try readHead()
        case .body(let remaining): return readBody(remaining: remaining)
        case .chunkSize: return try readChunkSize()
        case .chunkData(let remaining): return readChunkData(remaining: remaining)
        case .chunkDataEnd: return try readChunkDataEnd()
        case .trailer(let bytes): return try readTrailer(bytesSoFar: bytes)
        }
    }
}

// MARK: - Header block

extension HTTPResponseParser {
    private mutating func readHead() throws(HTTPParseError) -> Step {
        while available > 0, buffer[offset] == 13 || buffer[offset] == 10 {
            offset += 1  // tolerate blank lines between messages
        }
        guard let end = findHeadEnd() else {
            searched = max(0, available - 3)
            if available > maxHeaderBytes { throw HTTPParseError(reason: .headerTooLarge(limit: maxHeaderBytes)) }
            return .needMoreBytes
        }
        guard end + 4 - offset <= maxHeaderBytes else {
            throw HTTPParseError(reason: .headerTooLarge(limit: maxHeaderBytes))
        }
        let head = buffer[offset..<end]
        offset = end + 4
        searched = 0
        message = try Self.head(head)
        return try startBody()
    }

    /// The index of the `\r\n\r\n` that ends the header block.
    private func findHeadEnd() -> Int? {
        var index = offset + searched
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The status line and header fields, parsed on bytes (this is on every response's path).
    private static func head(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPMessage {
        var lines = lines(bytes)[...]
        var message = try statusLine(lines.removeFirst())
        message.headers.reserveCapacity(lines.count)
        for line in lines {
            message.headers.append(try header(line))
        }
        return message
    }

    /// The CRLF-separated lines of a header block (which has no final CRLF).
    private static func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = start
        while index + 1 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10 {
                lines.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[start..<bytes.endIndex])
        return lines
    }

    private static let eventVersion = Array("EVENT/1.0".utf8)
    private static let httpVersions = [Array("HTTP/1.1".utf8), Array("HTTP/1.0".utf8)]

    /// `HTTP/1.x 207 Multi-Status` or `EVENT/1.0 200 OK`; the reason may be missing.
    private static func statusLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPMessage {
        let bad = HTTPParseError(reason: .badStatusLine(String(decoding: line, as: UTF8.self)))
        guard let space = line.firstIndex(of: 32) else { throw bad }
        let version = line[..<space]
        let kind: HTTPMessage.Kind
        if version.elementsEqual(eventVersion) {
            kind = .event
        } else if httpVersions.contains(where: { version.elementsEqual($0) }) {
            kind = .response
        } else {
            throw bad
        }
        let code = line[(space + 1)...].prefix(3)
        guard code.count == 3, code.allSatisfy(isDigit) else { throw bad }
        let rest = line[code.endIndex...]
        guard rest.isEmpty || rest.first == 32 else { throw bad }
        let status = code.reduce(0) { $0 * 10 + Int($1 - 48) }
        return HTTPMessage(kind: kind, status: status, reason: String(decoding: rest.dropFirst(), as: UTF8.self))
    }

    /// `Name: value`, the value without surrounding spaces and tabs.
    private static func header(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPMessage.Header {
        var colon = line.startIndex
        while colon < line.endIndex, line[colon] != 58, !isBlank(line[colon]) {
            colon += 1
        }
        guard colon < line.endIndex, line[colon] == 58, colon > line.startIndex else {
            throw HTTPParseError(reason: .badHeaderLine(String(decoding: line, as: UTF8.self)))
        }
        return HTTPMessage.Header(
            name: String(decoding: line[..<colon], as: UTF8.self),
            value: String(decoding: trimmed(line[(colon + 1)...]), as: UTF8.self))
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        return bytes[start..<end]
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }

    fileprivate static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }
}

// MARK: - Body

extension HTTPResponseParser {
    private mutating func startBody() throws(HTTPParseError) -> Step {
        if message.status < 200 || message.status == 204 || message.status == 304 {
            return finish()
        }
        if let coding = message.header("Transfer-Encoding"), coding.lowercased().contains("chunked") {
            state = .chunkSize
            return .progress
        }
        guard let field = message.header("Content-Length") else { return finish() }
        guard !field.isEmpty, field.utf8.allSatisfy(Self.isDigit), let length = Int(field) else {
            throw HTTPParseError(reason: .badContentLength(field))
        }
        guard length <= maxBodyBytes else {
            throw HTTPParseError(reason: .bodyTooLarge(length: length, limit: maxBodyBytes))
        }
        guard length > 0 else { return finish() }
        message.body.reserveCapacity(length)
        state = .body(remaining: length)
        return .progress
    }

    private mutating func readBody(remaining: Int) -> Step {
        let count = min(remaining, available)
        guard count > 0 else { return .needMoreBytes }
        message.body.appendBytes(buffer[offset..<(offset + count)])
        offset += count
        if count == remaining { return finish() }
        state = .body(remaining: remaining - count)
        return .needMoreBytes
    }

    /// Hands over the finished message; the parser keeps no reference to its body.
    private mutating func finish() -> Step {
        let finished = message
        message = Self.noMessage
        state = .head
        return .message(finished)
    }
}

// MARK: - Chunked body

extension HTTPResponseParser {
    /// The longest chunk size line accepted (hex digits and chunk extensions).
    private static let maxChunkLineBytes = 1024

    private mutating func readChunkSize() throws(HTTPParseError) -> Step {
        guard let line = try readLine(limit: Self.maxChunkLineBytes, error: .badChunkSize("(over 1 KiB)")) else {
            return .needMoreBytes
        }
        let digits = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let hex = String(decoding: Self.trimmed(ArraySlice(digits.utf8)), as: UTF8.self)
        guard !hex.isEmpty, hex.utf8.count <= 15, let size = Int(hex, radix: 16) else {
            throw HTTPParseError(reason: .badChunkSize(line))
        }
        guard size > 0 else {
            state = .trailer(bytes: 0)
            return .progress
        }
        guard message.body.count + size <= maxBodyBytes else {
            throw HTTPParseError(reason: .bodyTooLarge(length: message.body.count + size, limit: maxBodyBytes))
        }
        state = .chunkData(remaining: size)
        return .progress
    }

    private mutating func readChunkData(remaining: Int) -> Step {
        let count = min(remaining, available)
        guard count > 0 else { return .needMoreBytes }
        message.body.appendBytes(buffer[offset..<(offset + count)])
        offset += count
        state = count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - count)
        return count == remaining ? .progress : .needMoreBytes
    }

    private mutating func readChunkDataEnd() throws(HTTPParseError) -> Step {
        guard available >= 2 else { return .needMoreBytes }
        guard buffer[offset] == 13, buffer[offset + 1] == 10 else {
            throw HTTPParseError(reason: .badChunkEnd)
        }
        offset += 2
        state = .chunkSize
        return .progress
    }

    private mutating func readTrailer(bytesSoFar: Int) throws(HTTPParseError) -> Step {
        let limit = maxHeaderBytes - bytesSoFar
        guard let line = try readLine(limit: limit, error: .headerTooLarge(limit: maxHeaderBytes)) else {
            return .needMoreBytes
        }
        if line.isEmpty { return finish() }
        state = .trailer(bytes: bytesSoFar + line.utf8.count + 2)
        return .progress
    }

    /// The next CRLF-terminated line without its CRLF, or `nil` until it is complete.
    private mutating func readLine(limit: Int, error: HTTPParseError.Reason) throws(HTTPParseError) -> String? {
        var index = offset
        while index + 1 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10 {
                let line = String(decoding: buffer[offset..<index], as: UTF8.self)
                offset = index + 2
                return line
            }
            index += 1
            if index - offset > limit { throw HTTPParseError(reason: error) }
        }
        if available > limit { throw HTTPParseError(reason: error) }
        return nil
    }
}

import Testing
@testable import HAP
@testable import Wire

@Suite("HTTP and EVENT parsing")
struct HTTPResponseParserTests {
    private static let readBody = #"{"characteristics":[{"aid":2,"iid":10,"value":1},{"aid":3,"iid":10,"status":-70402}]}"#
    private static let eventBody = #"{"characteristics":[{"aid":2,"iid":10,"value":0}]}"#

    private static let response = Array("""
        HTTP/1.1 207 Multi-Status\r
        Content-Type: application/hap+json\r
        Content-Length: \(readBody.utf8.count)\r
        \r
        \(readBody)
        """.utf8)
    private static let event = Array("""
        EVENT/1.0 200 OK\r
        Content-Type: application/hap+json\r
        Content-Length: \(eventBody.utf8.count)\r
        \r
        \(eventBody)
        """.utf8)

    private static let expected = [
        HTTPMessage(
            kind: .response, status: 207, reason: "Multi-Status",
            headers: [
                .init(name: "Content-Type", value: "application/hap+json"),
                .init(name: "Content-Length", value: "\(readBody.utf8.count)"),
            ],
            body: Array(readBody.utf8)),
        HTTPMessage(
            kind: .event, status: 200, reason: "OK",
            headers: [
                .init(name: "Content-Type", value: "application/hap+json"),
                .init(name: "Content-Length", value: "\(eventBody.utf8.count)"),
            ],
            body: Array(eventBody.utf8)),
    ]

    @Test func everySplitOfAResponseAndAnEvent() throws {
        let stream = Self.response + Self.event
        for cut in 0...stream.count {
            var parser = HTTPResponseParser()
            let messages = try parser.feed(stream[..<cut]) + parser.feed(stream[cut...])
            #expect(messages == Self.expected, "cut at \(cut)")
        }
    }

    @Test func byteByByte() throws {
        var parser = HTTPResponseParser()
        var messages: [HTTPMessage] = []
        for byte in Self.response + Self.event {
            messages += try parser.feed([byte])
        }
        #expect(messages == Self.expected)
    }

    @Test func coalescedMessages() throws {
        var parser = HTTPResponseParser()
        let messages = try parser.feed(Self.event + Self.response + Self.event)
        #expect(messages.map(\.kind) == [.event, .response, .event])
        #expect(messages[1] == Self.expected[0])
        #expect(try parser.feed([UInt8]()) == [])
    }

    @Test func chunkedBody() throws {
        let stream = Array("""
            HTTP/1.1 200 OK\r
            Transfer-Encoding: chunked\r
            Content-Type: application/hap+json\r
            \r
            5\r
            hello\r
            6;name=value\r
             world\r
            A\r
            0123456789\r
            0\r
            Trailer-Field: x\r
            \r

            """.utf8) + Self.event
        for cut in 0...stream.count {
            var parser = HTTPResponseParser()
            let messages = try parser.feed(stream[..<cut]) + parser.feed(stream[cut...])
            #expect(messages.count == 2, "cut at \(cut)")
            #expect(messages.first?.body == Array("hello world0123456789".utf8), "cut at \(cut)")
            #expect(messages.last == Self.expected[1], "cut at \(cut)")
        }
    }

    @Test func noContentHasNoBody() throws {
        var parser = HTTPResponseParser()
        let stream = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8) + Self.event
            + Array("HTTP/1.1 204\r\nContent-Length: 0\r\n\r\n".utf8)
        let messages = try parser.feed(stream)
        #expect(messages.count == 3)
        #expect(messages[0] == HTTPMessage(kind: .response, status: 204, reason: "No Content"))
        #expect(messages[1] == Self.expected[1])
        #expect(messages[2].status == 204 && messages[2].reason == "" && messages[2].body.isEmpty)
    }

    @Test func responseWithoutFramingHeadersHasNoBody() throws {
        var parser = HTTPResponseParser()
        let messages = try parser.feed(Array("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n".utf8) + Self.event)
        #expect(messages.count == 2)
        #expect(messages[0].body.isEmpty)
    }

    @Test func pairingResponse() throws {
        var parser = HTTPResponseParser()
        let body: [UInt8] = [0x06, 0x01, 0x02, 0x07, 0x01, 0x06]
        let messages = try parser.feed(Array("""
            HTTP/1.1 200 OK\r
            Content-Type: application/pairing+tlv8\r
            Content-Length: 6\r
            \r

            """.utf8) + body)
        #expect(messages.first?.body == body)
        #expect(try TLV8(decoding: body).byte(.error) == PairingErrorCode.unavailable.rawValue)
    }

    @Test func headerLookupIgnoresCase() throws {
        var parser = HTTPResponseParser()
        let message = try #require(try parser.feed(Self.response).first)
        #expect(message.header("content-type") == "application/hap+json")
        #expect(message.header("CONTENT-LENGTH") == "\(Self.readBody.utf8.count)")
        #expect(message.header("X-Missing") == nil)
    }

    @Test func headerValuesAreTrimmed() throws {
        var parser = HTTPResponseParser()
        let message = try #require(try parser.feed(Array("HTTP/1.1 200 OK\r\nX-A:\t spaced \t\r\nX-B:\r\n\r\n".utf8)).first)
        #expect(message.headers == [.init(name: "X-A", value: "spaced"), .init(name: "X-B", value: "")])
    }

    @Test(arguments: ["HTTQ/1.1 200 OK", "HTTP/1.1 20 OK", "HTTP/2 200 OK", "EVENT/1.0 2000 OK", "garbage", "HTTP/1.1  200 OK"])
    func badStatusLineThrows(line: String) {
        var parser = HTTPResponseParser()
        #expect(throws: HTTPParseError(reason: .badStatusLine(line))) {
            try parser.feed(Array("\(line)\r\nContent-Length: 0\r\n\r\n".utf8))
        }
    }

    @Test func badHeaderLineThrows() {
        var parser = HTTPResponseParser()
        #expect(throws: HTTPParseError(reason: .badHeaderLine("no colon here"))) {
            try parser.feed(Array("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n".utf8))
        }
    }

    @Test func oversizedHeaderThrows() throws {
        var parser = HTTPResponseParser()
        _ = try parser.feed(Array("HTTP/1.1 200 OK\r\n".utf8))
        let filler = Array("X-Filler: \(String(repeating: "a", count: 1000))\r\n".utf8)
        let error = #expect(throws: HTTPParseError.self) {
            for _ in 0..<20 { _ = try parser.feed(filler) }
        }
        #expect(error == HTTPParseError(reason: .headerTooLarge(limit: 16 * 1024)))
        #expect(error?.description == "the header block exceeds 16384 bytes")
        #expect(throws: HTTPParseError.self, "stays failed") { try parser.feed(Self.event) }
    }

    @Test func oversizedCompleteHeaderThrows() {
        var parser = HTTPResponseParser(maxHeaderBytes: 64, maxBodyBytes: 1024)
        #expect(throws: HTTPParseError(reason: .headerTooLarge(limit: 64))) {
            try parser.feed(Self.response)
        }
    }

    @Test func oversizedBodyThrows() {
        var parser = HTTPResponseParser()
        #expect(throws: HTTPParseError(reason: .bodyTooLarge(length: 9_000_000, limit: 8 * 1024 * 1024))) {
            try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 9000000\r\n\r\n".utf8))
        }
        var chunked = HTTPResponseParser(maxHeaderBytes: 1024, maxBodyBytes: 8)
        #expect(throws: HTTPParseError(reason: .bodyTooLarge(length: 10, limit: 8))) {
            try chunked.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\n".utf8))
        }
    }

    @Test func badLengthsThrow() {
        var parser = HTTPResponseParser()
        #expect(throws: HTTPParseError(reason: .badContentLength("12a"))) {
            try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n".utf8))
        }
        var chunked = HTTPResponseParser()
        #expect(throws: HTTPParseError(reason: .badChunkSize("zz"))) {
            try chunked.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8))
        }
        var unterminated = HTTPResponseParser()
        #expect(throws: HTTPParseError(reason: .badChunkEnd)) {
            try unterminated.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiXX".utf8))
        }
    }

    @Test func requestEncoding() {
        let get = HTTPRequest(method: "GET", path: "/characteristics?id=1.9")
        #expect(String(decoding: get.encoded(host: "192.168.1.20:51826"), as: UTF8.self)
            == "GET /characteristics?id=1.9 HTTP/1.1\r\nHost: 192.168.1.20:51826\r\n\r\n")

        let body: [UInt8] = [0x06, 0x01, 0x01, 0x00, 0x01, 0x00]
        let post = HTTPRequest(method: "POST", path: "/pair-setup", contentType: "application/pairing+tlv8", body: body)
        #expect(post.encoded(host: "bridge.local") == Array("""
            POST /pair-setup HTTP/1.1\r
            Host: bridge.local\r
            Content-Type: application/pairing+tlv8\r
            Content-Length: 6\r
            \r

            """.utf8) + body)

        let put = HTTPRequest(method: "PUT", path: "/characteristics", contentType: "application/hap+json")
        #expect(String(decoding: put.encoded(host: "h"), as: UTF8.self)
            == "PUT /characteristics HTTP/1.1\r\nHost: h\r\nContent-Type: application/hap+json\r\nContent-Length: 0\r\n\r\n")
    }
}

import NIOCore
import NIOEmbedded
import Testing
@testable import HAP

/// The connection's pipeline (``SessionFrameCodec``, ``HTTPResponseDecoder``,
/// ``RequestMatcher``) on an `EmbeddedChannel`: the accessory's side is played by hand with its
/// own sealer and opener, and time by the embedded loop's clock.
@Suite("HAP connection pipeline")
struct SessionPipelineTests {
    private static let keys = SessionKeys(controllerToAccessory: (0..<32).map { UInt8($0) },
                                          accessoryToController: (0..<32).map { UInt8(255 - $0) },
                                          accessoryEvents: (0..<32).map { UInt8(128 &+ $0) })

    private static func response(_ body: String, status: String = "200 OK") -> [UInt8] {
        Array("HTTP/1.1 \(status)\r\nContent-Type: application/hap+json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    private static func event(_ body: String) -> [UInt8] {
        Array("EVENT/1.0 200 OK\r\nContent-Type: application/hap+json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    /// A channel with the three stages, connected; what it hands to the event handler and how
    /// its requests end.
    private final class Pipeline {
        let channel: EmbeddedChannel
        let end = SessionEnd()
        var events: [HTTPMessage] = []
        /// What the accessory uses: it opens what the controller seals and seals what it sends.
        var accessorySealer = FrameSealer(key: SessionPipelineTests.keys.accessoryToController)
        var accessoryOpener = FrameOpener(key: SessionPipelineTests.keys.controllerToAccessory)

        init() throws {
            channel = EmbeddedChannel()
            let matcher = RequestMatcher(peer: "127.0.0.1:1", end: end) { [unowned self] message in events.append(message) }
            try channel.pipeline.syncOperations.addHandlers([SessionFrameCodec(), HTTPResponseDecoder(), matcher])
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        func encrypt() throws {
            try channel.triggerUserOutboundEvent(SessionEvent.encrypt(SessionPipelineTests.keys)).wait()
        }

        /// Sends a request; its outcome lands in the returned box once it has one.
        func send(_ path: String, timeout: TimeAmount = .seconds(10)) -> Outcome {
            let promise = channel.eventLoop.makePromise(of: HTTPMessage.self)
            let outcome = Outcome()
            promise.futureResult.assumeIsolated().whenComplete { outcome.result = $0 }
            channel.writeAndFlush(RequestMatcher.Exchange(request: HTTPRequest(method: "GET", path: path).encoded(host: "127.0.0.1:1"),
                                                          timeout: timeout, response: promise), promise: nil)
            return outcome
        }

        /// The bytes the controller sent since the last call.
        func sent() throws -> [UInt8] {
            var bytes: [UInt8] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
            return bytes
        }

        func receive(_ bytes: [UInt8]) throws {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        }
    }

    private final class Outcome {
        var result: Result<HTTPMessage, any Error>?

        var message: HTTPMessage? { try? result?.get() }

        var error: HAPError? {
            guard case .failure(let error)? = result else { return nil }
            return error as? HAPError
        }
    }

    @Test func plaintextUntilTheSwitchThenFramesBothWays() throws {
        let pipeline = try Pipeline()
        let verify = pipeline.send("/pair-verify")
        #expect(String(decoding: try pipeline.sent(), as: UTF8.self).hasPrefix("GET /pair-verify HTTP/1.1\r\n"))
        try pipeline.receive(Self.response("M4"))
        #expect(verify.message?.body == Array("M4".utf8))

        try pipeline.encrypt()
        let read = pipeline.send("/accessories")
        let sealed = try pipeline.sent()
        let opened = try pipeline.accessoryOpener.open(sealed)
        #expect(String(decoding: opened, as: UTF8.self).hasPrefix("GET /accessories HTTP/1.1\r\n"))
        #expect(sealed.count == opened.count + FrameSealer.frameOverhead)
        try pipeline.receive(pipeline.accessorySealer.seal(Self.response("{}")))
        #expect(read.message?.status == 200)
    }

    @Test func framesSplitAcrossReadsAreJoined() throws {
        let pipeline = try Pipeline()
        try pipeline.encrypt()
        let read = pipeline.send("/accessories")
        let body = String(repeating: "x", count: 3000) // three frames
        let sealed = pipeline.accessorySealer.seal(Self.response(body))
        for byte in sealed.dropLast() {
            try pipeline.receive([byte])
        }
        #expect(read.result == nil)
        try pipeline.receive([sealed.last!])
        #expect(read.message?.body.count == 3000)
    }

    @Test func severalFramesInOneReadAnswerTheirRequestsInOrder() throws {
        let pipeline = try Pipeline()
        try pipeline.encrypt()
        let first = pipeline.send("/characteristics?id=1.1")
        let second = pipeline.send("/characteristics?id=1.2")
        var bytes = pipeline.accessorySealer.seal(Self.response("first"))
        bytes += pipeline.accessorySealer.seal(Self.event("{}"))
        bytes += pipeline.accessorySealer.seal(Self.response("second"))
        try pipeline.receive(bytes)
        #expect(first.message?.body == Array("first".utf8))
        #expect(second.message?.body == Array("second".utf8))
        #expect(pipeline.events.count == 1)
    }

    @Test func aFrameWithABadTagClosesWithAClearError() throws {
        let pipeline = try Pipeline()
        try pipeline.encrypt()
        let read = pipeline.send("/accessories")
        var sealed = pipeline.accessorySealer.seal(Self.response("{}"))
        sealed[sealed.count - 1] ^= 0x01
        try pipeline.receive(sealed)
        #expect(read.error?.kind == .malformed)
        #expect(read.error?.message == "the accessory at 127.0.0.1:1 sent a frame that does not decrypt: encrypted frame 0 does not authenticate (wrong key, tampered or out of order)")
        #expect(!pipeline.channel.isActive)
        #expect(pipeline.end.reason?.message == read.error?.message)
        let later = pipeline.send("/accessories")
        #expect(later.error?.message == read.error?.message, "a request after the end fails with the same reason")
    }

    @Test func aMessageThatDoesNotParseClosesTheConnection() throws {
        let pipeline = try Pipeline()
        let read = pipeline.send("/accessories")
        try pipeline.receive(Array("SPDY/3 200 OK\r\n\r\n".utf8))
        #expect(read.error?.message.hasPrefix("the accessory at 127.0.0.1:1 sent a message that does not parse: bad status line") == true)
        #expect(!pipeline.channel.isActive)
    }

    @Test func anEventBetweenARequestAndItsResponseGoesToTheEvents() throws {
        let pipeline = try Pipeline()
        try pipeline.encrypt()
        let read = pipeline.send("/characteristics?id=2.10")
        try pipeline.receive(pipeline.accessorySealer.seal(Self.event(#"{"characteristics":[{"aid":2,"iid":10,"value":1}]}"#)))
        #expect(read.result == nil, "an event answers no request")
        #expect(pipeline.events.map(\.kind) == [.event])
        try pipeline.receive(pipeline.accessorySealer.seal(Self.response("answer")))
        #expect(read.message?.body == Array("answer".utf8))
        #expect(pipeline.events.count == 1)
    }

    @Test func aResponseWithNoRequestWaitingIsDropped() throws {
        let pipeline = try Pipeline()
        try pipeline.encrypt()
        try pipeline.receive(pipeline.accessorySealer.seal(Self.response("stray")))
        #expect(pipeline.channel.isActive)
        #expect(pipeline.events.isEmpty)
        let read = pipeline.send("/accessories")
        #expect(read.result == nil, "the stray response is not kept for a later request")
        try pipeline.receive(pipeline.accessorySealer.seal(Self.response("mine")))
        #expect(read.message?.body == Array("mine".utf8))
    }

    @Test func theOldestOverdueRequestTimesOutAndClosesTheConnection() throws {
        let pipeline = try Pipeline()
        try pipeline.encrypt()
        let answered = pipeline.send("/characteristics?id=1.1", timeout: .milliseconds(500))
        try pipeline.receive(pipeline.accessorySealer.seal(Self.response("in time")))
        let first = pipeline.send("/characteristics?id=1.2", timeout: .seconds(2))
        let second = pipeline.send("/characteristics?id=1.3", timeout: .seconds(10))
        pipeline.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(answered.message != nil, "an answered request's time limit is gone")
        #expect(first.result == nil && pipeline.channel.isActive)
        pipeline.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(first.error?.kind == .timeout)
        #expect(first.error?.message == "the accessory at 127.0.0.1:1 did not answer in time")
        #expect(second.error?.kind == .timeout, "the later request fails too: its answer could not be matched any more")
        #expect(!pipeline.channel.isActive)
    }

    @Test func theAccessoryClosingFailsTheWaitingRequests() throws {
        let pipeline = try Pipeline()
        let read = pipeline.send("/accessories")
        pipeline.channel.pipeline.fireChannelInactive()
        #expect(read.error?.message == "the accessory at 127.0.0.1:1 closed the connection")
    }

    @Test func plaintextAfterThePairVerifyResponseRefusesTheSwitch() throws {
        let pipeline = try Pipeline()
        let verify = pipeline.send("/pair-verify")
        try pipeline.receive(Self.response("M4") + Array("HTTP/1.1 2".utf8))
        #expect(verify.message != nil)
        #expect(throws: HTTPParseError.self) { try pipeline.encrypt() }
        #expect(pipeline.end.reason?.message == "the accessory at 127.0.0.1:1 sent a message that does not parse: 10 bytes followed the pair-verify response in plaintext, where the encrypted session starts")
        #expect(!pipeline.channel.isActive)
    }
}

import NIOCore
import NIOEmbedded
import Testing
@testable import HAP

/// mDNS on a datagram channel without sockets: the decoder and the browse handler in an
/// `EmbeddedChannel`, the round's time taken from the embedded event loop's clock.
@Suite("mDNS on datagram channels")
struct MDNSChannelTests {
    static let destination = try! SocketAddress(ipAddress: "224.0.0.251", port: 5353)
    static let responder = try! SocketAddress(ipAddress: "127.0.0.1", port: 5353)

    /// A browse of `duration` in an embedded channel: the channel (active), the browse's result
    /// as it arrives, and the PTR query the round sends.
    final class Browse {
        let channel = EmbeddedChannel()
        let result: EventLoopPromise<[DiscoveredAccessory]>
        var outcome: Result<[DiscoveredAccessory], Error>?
        let query: [UInt8]

        init(duration: Duration) throws {
            let loop = channel.embeddedEventLoop
            let origin = ContinuousClock.now
            let loopOrigin = loop.now
            let round = DiscoveryRound(duration: duration, queryID: 0x4242)
            query = round.browseQuery
            result = loop.makePromise()
            let handler = BrowseHandler(round: round, destination: MDNSChannelTests.destination, result: result) {
                origin + .nanoseconds(loop.now.uptimeNanoseconds - loopOrigin.uptimeNanoseconds)
            }
            try channel.pipeline.syncOperations.addHandlers(DNSDatagramDecoder(), handler)
            channel.connect(to: MDNSChannelTests.destination, promise: nil)
            result.futureResult.assumeIsolated().whenComplete { self.outcome = $0 }
        }

        func receive(_ bytes: [UInt8]) throws {
            try channel.writeInbound(AddressedEnvelope(remoteAddress: MDNSChannelTests.responder, data: ByteBuffer(bytes: bytes)))
        }

        /// Every datagram written so far, each checked to go to the destination.
        func sent() throws -> [[UInt8]] {
            var datagrams: [[UInt8]] = []
            while let envelope = try channel.readOutbound(as: AddressedEnvelope<ByteBuffer>.self) {
                #expect(envelope.remoteAddress == MDNSChannelTests.destination)
                datagrams.append(Array(envelope.data.readableBytesView))
            }
            return datagrams
        }

        var decoder: DNSDatagramDecoder {
            get throws { try channel.pipeline.syncOperations.handler(type: DNSDatagramDecoder.self) }
        }
    }

    @Test("nothing is sent before the start event; then the PTR query, two resends, and the result at the deadline")
    func queriesAndDeadline() throws {
        let browse = try Browse(duration: .milliseconds(900))
        #expect(try browse.sent().isEmpty)
        browse.channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Start())
        #expect(try browse.sent() == [browse.query])
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(299))
        #expect(try browse.sent().isEmpty)
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try browse.sent() == [browse.query], "the resend at a third")
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(300))
        #expect(try browse.sent() == [browse.query], "the resend at two thirds")
        #expect(browse.channel.isActive)
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(300))
        #expect(!browse.channel.isActive, "closed at the deadline")
        #expect(try browse.outcome?.get() == [])
    }

    @Test("a malformed datagram is dropped and counted; the browse goes on and lists what answers after it")
    func malformedIgnored() throws {
        let browse = try Browse(duration: .seconds(1))
        browse.channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Start())
        _ = try browse.sent()
        try browse.receive([0x12, 0x34, 0x84])
        try browse.receive(Array(DNSMessageTests.zeroconfLegacyAnswer.prefix(40)))
        #expect(try browse.decoder.malformedCount == 2)
        #expect(try browse.decoder.lastMalformation != nil)
        #expect(browse.channel.isActive)
        try browse.receive(DNSMessageTests.zeroconfLegacyAnswer)
        #expect(try browse.decoder.malformedCount == 2)
        browse.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!browse.channel.isActive)
        #expect(try browse.outcome?.get().map(\.name) == ["HomeGate Test Bridge", "Küche Lamp"])
    }

    @Test("a response for another service type, and a query, list nothing and ask nothing")
    func otherServiceIgnored() throws {
        let browse = try Browse(duration: .seconds(1))
        browse.channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Start())
        _ = try browse.sent()
        let airplay = DNSName("_airplay._tcp.local")
        let speaker = DNSName(labels: ["Speaker", "_airplay", "_tcp", "local"])
        try browse.receive(DNSPacketBuilder.response(id: 0, [
            DNSMessageTests.record(airplay, .ptr(speaker)),
            DNSMessageTests.record(speaker, .srv(priority: 0, weight: 0, port: 7000, target: DNSName("speaker.local"))),
            DNSMessageTests.record(speaker, .txt([Array("id=11:22:33:44:55:66".utf8)])),
        ]))
        // A query whose known answers name a whole accessory (another controller's) is not an answer.
        let lamp = DNSName(labels: ["Lamp", "_hap", "_tcp", "local"])
        var knownAnswers = DNSPacketBuilder.response(id: 0, [
            DNSMessageTests.record(Discovery.serviceType, .ptr(lamp)),
            DNSMessageTests.record(lamp, .srv(priority: 0, weight: 0, port: 51826, target: DNSName("lamp.local"))),
            DNSMessageTests.record(lamp, .txt([Array("id=AA:BB:CC:DD:EE:FF".utf8)])),
        ])
        knownAnswers[2] &= 0x7F // the QR bit clear: a query
        #expect(try !DNSMessage(decoding: knownAnswers).isResponse)
        try browse.receive(knownAnswers)
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(250))
        #expect(try browse.sent().isEmpty, "no follow-up questions for another service")
        #expect(try browse.decoder.malformedCount == 0)
        browse.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try browse.outcome?.get() == [])
    }

    @Test("what the multicast listener heard counts as well, and closing the channel early answers what was found")
    func heardAndClosedEarly() throws {
        let browse = try Browse(duration: .seconds(3))
        browse.channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Start())
        _ = try browse.sent()
        let heard = try DNSMessage(decoding: DNSMessageTests.zeroconfLegacyAnswer)
        browse.channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Heard(message: heard))
        #expect(browse.outcome == nil)
        browse.channel.close(promise: nil)
        #expect(try browse.outcome?.get().count == 2)
    }

    @Test("a follow-up question is asked once it has been missing for 100 ms")
    func followUpAsked() throws {
        let browse = try Browse(duration: .seconds(2))
        browse.channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Start())
        _ = try browse.sent()
        let instance = DNSName(labels: ["Porch Light", "_hap", "_tcp", "local"])
        try browse.receive(DNSPacketBuilder.response(id: 0x4242, [DNSMessageTests.record(Discovery.serviceType, .ptr(instance))]))
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(99))
        #expect(try browse.sent().isEmpty)
        browse.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        let asked = try browse.sent().map { try DNSMessage(decoding: $0) }
        #expect(asked.map(\.id) == [0x4242])
        #expect(asked.flatMap(\.questions).map { "\($0.type) \($0.name)" } == ["SRV Porch Light._hap._tcp.local", "TXT Porch Light._hap._tcp.local"])
    }
}

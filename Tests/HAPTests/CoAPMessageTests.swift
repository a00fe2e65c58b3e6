import Testing
@testable import HAP

/// The CoAP codec (RFC 7252) on hand-made datagrams, and the exchange state machine:
/// retransmission, piggybacked and separate responses, resets, Block2 responses.
@Suite("CoAP messages and exchanges")
struct CoAPMessageTests {
    @Test("a confirmable POST to /2 with a payload encodes byte for byte and decodes back")
    func encodeRequest() throws {
        let message = CoAPMessage(kind: .confirmable, code: .post, messageID: 0x1234, token: [0xAB, 0xCD],
                                  options: [.init(number: 11, value: Array("2".utf8))], payload: [1, 2, 3])
        let bytes = message.encoded()
        #expect(bytes == [0x42, 0x02, 0x12, 0x34, 0xAB, 0xCD, 0xB1, 0x32, 0xFF, 1, 2, 3])
        #expect(try CoAPMessage(decoding: bytes) == message)
        #expect(message.path == "2")
    }

    @Test("option deltas and lengths of 13 and 269 and more take extension bytes")
    func extendedOptions() throws {
        let long = [UInt8](repeating: 0x61, count: 300)
        let message = CoAPMessage(kind: .nonConfirmable, code: .content, messageID: 1,
                                  options: [.init(number: 11, value: Array("a".utf8)), .init(number: 28, value: [4, 0]), .init(number: 2000, value: long)])
        let decoded = try CoAPMessage(decoding: message.encoded())
        #expect(decoded == message)
        #expect(decoded.options.map(\.number) == [11, 28, 2000])
    }

    @Test("malformed datagrams are refused with the reason", arguments: [
        ([UInt8]([0x40, 0x01]), CoAPParseError.tooShort(2)),
        ([0x80, 0x01, 0, 1], .unknownVersion(2)),
        ([0x49, 0x01, 0, 1], .badTokenLength(9)),
        ([0x42, 0x01, 0, 1, 0xAA], .truncated("token")),
        ([0x40, 0x01, 0, 1, 0xFF], .emptyPayloadAfterMarker),
        ([0x40, 0x01, 0, 1, 0xF1, 0], .badOption),
        ([0x40, 0x01, 0, 1, 0x13, 0x61], .truncated("option 1")),
    ])
    func malformed(bytes: [UInt8], error: CoAPParseError) {
        #expect(throws: error) { try CoAPMessage(decoding: bytes) }
    }

    @Test("Block2 option values round-trip; size exponent 7 is refused")
    func blockOption() {
        let block = CoAPBlock(number: 5, more: true, sizeExponent: 6)
        #expect(block.optionValue == [0x5E])
        #expect(CoAPBlock(optionValue: block.optionValue) == block)
        #expect(block.size == 1024)
        #expect(CoAPBlock(optionValue: [0x07]) == nil)
        #expect(CoAPBlock(optionValue: [0x01, 0x00, 0x0E]) == CoAPBlock(number: 4096, more: true, sizeExponent: 6))
    }

    // MARK: Exchanges

    private static func request() -> CoAPMessage {
        CoAPMessage(kind: .confirmable, code: .post, messageID: 100, token: [7], options: [.init(number: 11, value: [0x31])], payload: [9])
    }

    private static func response(_ kind: CoAPMessage.Kind, _ code: CoAPMessage.Code, id: UInt16 = 100, payload: [UInt8] = [], block: CoAPBlock? = nil) -> CoAPMessage {
        CoAPMessage(kind: kind, code: code, messageID: id, token: kind == .acknowledgement && code == .empty ? [] : [7],
                    options: block.map { [.init(number: 23, value: $0.optionValue)] } ?? [], payload: payload)
    }

    @Test("unanswered: sent, then retransmitted four times with doubling waits, then it fails")
    func retransmission() {
        var exchange = CoAPExchange(request: Self.request(), parameters: .init(firstTimeout: .seconds(2)))
        #expect(exchange.start() == [.send(Self.request()), .startTimer(.seconds(2))])
        #expect(exchange.timerExpired() == [.send(Self.request()), .startTimer(.seconds(4))])
        #expect(exchange.timerExpired() == [.send(Self.request()), .startTimer(.seconds(8))])
        #expect(exchange.timerExpired() == [.send(Self.request()), .startTimer(.seconds(16))])
        #expect(exchange.timerExpired() == [.send(Self.request()), .startTimer(.seconds(32))])
        #expect(exchange.timerExpired() == [.fail(.noAcknowledgement(attempts: 5))])
        #expect(exchange.timerExpired() == [])
    }

    @Test("a piggybacked response finishes it; a message of another exchange is ignored")
    func piggybacked() {
        var exchange = CoAPExchange(request: Self.request())
        _ = exchange.start()
        #expect(exchange.receive(Self.response(.acknowledgement, .changed, id: 99)) == [])
        let answer = Self.response(.acknowledgement, .changed, payload: [1, 2])
        #expect(exchange.receive(answer) == [.stopTimer, .finish(answer)])
        #expect(exchange.timerExpired() == [])
    }

    @Test("an empty acknowledgement, then a confirmable separate response: acknowledged and taken")
    func separate() {
        var exchange = CoAPExchange(request: Self.request())
        _ = exchange.start()
        #expect(exchange.receive(Self.response(.acknowledgement, .empty)) == [.stopTimer])
        #expect(exchange.timerExpired() == [], "no retransmission once acknowledged")
        let answer = Self.response(.confirmable, .changed, id: 555, payload: [3])
        #expect(exchange.receive(answer) == [.send(CoAPMessage(kind: .acknowledgement, code: .empty, messageID: 555)), .finish(answer)])
        #expect(exchange.receive(answer) == [.send(CoAPMessage(kind: .acknowledgement, code: .empty, messageID: 555))], "a repeat is acknowledged again")
    }

    @Test("a reset fails it")
    func reset() {
        var exchange = CoAPExchange(request: Self.request())
        _ = exchange.start()
        #expect(exchange.receive(CoAPMessage(kind: .reset, code: .empty, messageID: 100)) == [.stopTimer, .fail(.reset)])
    }

    @Test("a response in three blocks is asked for block by block with new message ids and joined")
    func blocks() throws {
        var exchange = CoAPExchange(request: Self.request())
        _ = exchange.start()
        let first = exchange.receive(Self.response(.acknowledgement, .changed, payload: Array(repeating: 1, count: 16), block: CoAPBlock(number: 0, more: true, sizeExponent: 0)))
        guard case .send(let second) = first.dropFirst().first else { Issue.record("no request for block 1: \(first)"); return }
        #expect(second.messageID == 101)
        #expect(second.block2 == CoAPBlock(number: 1, more: false, sizeExponent: 0))
        #expect(second.path == "1")
        _ = exchange.receive(Self.response(.acknowledgement, .changed, id: 101, payload: Array(repeating: 2, count: 16), block: CoAPBlock(number: 1, more: true, sizeExponent: 0)))
        let last = exchange.receive(Self.response(.acknowledgement, .changed, id: 102, payload: [3], block: CoAPBlock(number: 2, more: false, sizeExponent: 0)))
        guard case .finish(let whole) = last.last else { Issue.record("not finished: \(last)"); return }
        #expect(whole.payload == Array(repeating: 1, count: 16) + Array(repeating: 2, count: 16) + [3])
        #expect(exchange.nextMessageID == 103)
    }

    @Test("a block out of order fails it")
    func blockOutOfOrder() {
        var exchange = CoAPExchange(request: Self.request())
        _ = exchange.start()
        let actions = exchange.receive(Self.response(.acknowledgement, .changed, payload: [1], block: CoAPBlock(number: 3, more: true, sizeExponent: 0)))
        #expect(actions.last == .fail(.badBlock("block 3 of 16 bytes after 0 bytes")))
    }
}

/// One confirmable CoAP request and its response, as a value-type state machine (RFC 7252 4.2
/// and 5.2, RFC 7959 for Block2): retransmission with exponential back-off until the
/// acknowledgement, a response piggybacked on it or sent separately (a confirmable separate
/// response is acknowledged), and a response in several blocks fetched block by block and
/// joined. The timing is the caller's: the machine says how long to wait, the caller tells it
/// when that time has passed.
struct CoAPExchange: Sendable {
    /// What the caller does next.
    enum Action: Sendable, Equatable {
        /// Send this message.
        case send(CoAPMessage)
        /// (Re)start the retransmission timer; ``timerExpired()`` when it runs out.
        case startTimer(Duration)
        case stopTimer
        /// The exchange is over: the whole response (all blocks' payloads joined).
        case finish(CoAPMessage)
        case fail(Failure)
    }

    enum Failure: Error, Sendable, Equatable {
        /// No acknowledgement after the last retransmission.
        case noAcknowledgement(attempts: Int)
        /// The peer answered with a reset: it cannot handle the request.
        case reset
        /// A response in blocks that does not fit together (a block out of order, or too large).
        case badBlock(String)
    }

    /// RFC 7252's transmission parameters.
    struct Parameters: Sendable, Equatable {
        /// The first wait for an acknowledgement (ACK_TIMEOUT times a random factor from 1 to
        /// ACK_RANDOM_FACTOR 1.5: the caller draws it); it doubles with each retransmission.
        var firstTimeout: Duration = .seconds(2)
        var maximumRetransmissions = 4
        /// The largest response this exchange joins from blocks.
        var maximumResponseSize = 1 << 20
    }

    private enum State: Sendable, Equatable {
        /// Retransmitting until acknowledged.
        case awaitingAcknowledgement(attempt: Int, timeout: Duration)
        /// Acknowledged empty: the response comes separately.
        case awaitingSeparateResponse
        case finished
    }

    private(set) var request: CoAPMessage
    private let parameters: Parameters
    private var state: State
    private var joined: [UInt8] = []

    /// The message id the next new message (the next block's request) takes.
    private(set) var nextMessageID: UInt16

    /// A confirmable `request` (its message id and token set by the caller).
    init(request: CoAPMessage, parameters: Parameters = Parameters()) {
        self.request = request
        self.request.kind = .confirmable
        self.parameters = parameters
        self.nextMessageID = request.messageID &+ 1
        self.state = .awaitingAcknowledgement(attempt: 0, timeout: parameters.firstTimeout)
    }

    /// The first transmission.
    func start() -> [Action] {
        [.send(request), .startTimer(parameters.firstTimeout)]
    }

    /// The retransmission timer ran out.
    mutating func timerExpired() -> [Action] {
        guard case .awaitingAcknowledgement(let attempt, let timeout) = state else { return [] }
        guard attempt < parameters.maximumRetransmissions else {
            state = .finished
            return [.fail(.noAcknowledgement(attempts: attempt + 1))]
        }
        state = .awaitingAcknowledgement(attempt: attempt + 1, timeout: timeout * 2)
        return [.send(request), .startTimer(timeout * 2)]
    }

    /// A message from the peer; those that belong to another exchange are ignored (`[]`).
    mutating func receive(_ message: CoAPMessage) -> [Action] {
        switch state {
        case .finished:
            return acknowledgementIfConfirmable(message, belongs: message.token == request.token && message.code.codeClass >= 2)
        case .awaitingAcknowledgement:
            if message.kind == .acknowledgement || message.kind == .reset {
                guard message.messageID == request.messageID else { return [] }
                if message.kind == .reset {
                    state = .finished
                    return [.stopTimer, .fail(.reset)]
                }
                if message.code == .empty {
                    state = .awaitingSeparateResponse
                    return [.stopTimer]
                }
                return [.stopTimer] + response(message)
            }
            return separateResponse(message)
        case .awaitingSeparateResponse:
            return separateResponse(message)
        }
    }

    /// A confirmable or non-confirmable message carrying the response with our token.
    private mutating func separateResponse(_ message: CoAPMessage) -> [Action] {
        guard message.token == request.token, message.code.codeClass >= 2,
              message.kind == .confirmable || message.kind == .nonConfirmable else { return [] }
        let wasWaiting = state != .awaitingSeparateResponse
        return acknowledgementIfConfirmable(message, belongs: true) + (wasWaiting ? [.stopTimer] : []) + response(message)
    }

    private func acknowledgementIfConfirmable(_ message: CoAPMessage, belongs: Bool) -> [Action] {
        guard belongs, message.kind == .confirmable else { return [] }
        return [.send(CoAPMessage(kind: .acknowledgement, code: .empty, messageID: message.messageID))]
    }

    /// The response (or one block of it): finished, or the next block asked for.
    private mutating func response(_ message: CoAPMessage) -> [Action] {
        guard let block = message.block2 else {
            state = .finished
            var whole = message
            whole.payload = joined + message.payload
            return [.finish(whole)]
        }
        guard block.number == UInt32(joined.count / block.size), joined.count % block.size == 0 else {
            state = .finished
            return [.fail(.badBlock("block \(block.number) of \(block.size) bytes after \(joined.count) bytes"))]
        }
        joined += message.payload
        guard joined.count <= parameters.maximumResponseSize else {
            state = .finished
            return [.fail(.badBlock("the response passes \(parameters.maximumResponseSize) bytes"))]
        }
        guard block.more else {
            state = .finished
            var whole = message
            whole.payload = joined
            return [.finish(whole)]
        }
        return requestBlock(CoAPBlock(number: block.number + 1, more: false, sizeExponent: block.sizeExponent))
    }

    /// Asks for the next block: the same request with a new message id and the Block2 option.
    private mutating func requestBlock(_ block: CoAPBlock) -> [Action] {
        var next = request
        next.messageID = nextMessageID
        nextMessageID &+= 1
        next.options.removeAll { $0.number == CoAPMessage.OptionNumber.block2.rawValue }
        next.options.append(CoAPMessage.Option(number: CoAPMessage.OptionNumber.block2.rawValue, value: block.optionValue))
        // The request's payload went with the first block's request already; later blocks of a
        // POST's response are asked for with the same request (RFC 7959 2.4), which aiocoap
        // and HAP accessories answer from the response they made for the first.
        request = next
        state = .awaitingAcknowledgement(attempt: 0, timeout: parameters.firstTimeout)
        return [.send(next), .startTimer(parameters.firstTimeout)]
    }
}

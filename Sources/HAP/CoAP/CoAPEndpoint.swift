import NIOCore
import NIOPosix

/// A UDP socket that talks CoAP with one peer (an accessory at `host`:`port`, IPv6 or IPv4), on
/// one event loop: requests go out one exchange at a time (``CoAPExchange``), and the requests
/// the peer sends by itself (a HAP accessory's events) are handed to `incoming` and answered.
/// Datagrams from any other address are dropped.
final class CoAPEndpoint: Sendable {
    let host: String
    let port: Int
    private let channel: any Channel
    private let handler: NIOLoopBound<CoAPEndpointHandler>

    private init(host: String, port: Int, channel: any Channel, handler: NIOLoopBound<CoAPEndpointHandler>) {
        self.host = host
        self.port = port
        self.channel = channel
        self.handler = handler
    }

    /// Opens a socket for the peer at `host`:`port` (bound to an ephemeral port of the same
    /// family). `incoming` answers each request the peer sends (on the event loop; nil: not
    /// found), once per message id.
    static func open(host: String, port: Int, group: any EventLoopGroup,
                     incoming: @escaping @Sendable (CoAPMessage) -> CoAPMessage.Code?) async throws(HAPError) -> CoAPEndpoint {
        let remote: SocketAddress
        do {
            remote = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            throw HAPError(.connection, "cannot resolve \(host): \(error)")
        }
        let loop = group.next()
        do {
            let handler = try await loop.submit { NIOLoopBound(CoAPEndpointHandler(remote: remote, incoming: incoming), eventLoop: loop) }.get()
            let channel = try await DatagramBootstrap(group: loop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler.value) }
                }
                .bind(host: remote.protocol == .inet6 ? "::" : "0.0.0.0", port: 0).get()
            return CoAPEndpoint(host: host, port: port, channel: channel, handler: handler)
        } catch {
            throw HAPError(.connection, "cannot open a UDP socket for [\(host)]:\(port): \(error)")
        }
    }

    /// Sends a confirmable request and waits for its whole response (every block).
    /// - Throws: ``HAPError``: ``HAPError/Kind/timeout`` when no acknowledgement or response
    ///   comes in time, ``HAPError/Kind/connection`` when the peer resets it or the socket closed,
    ///   ``HAPError/Kind/malformed`` for blocks that do not fit together.
    func request(_ code: CoAPMessage.Code, path: String, payload: [UInt8], timeout: Duration) async throws(HAPError) -> CoAPMessage {
        let handler = handler
        let future = channel.eventLoop.flatSubmit {
            handler.value.start(code: code, path: path, payload: payload, timeout: timeout)
        }
        do {
            return try await future.get()
        } catch let error as HAPError {
            throw error
        } catch {
            throw HAPError(.connection, "[\(host)]:\(port): \(error)")
        }
    }

    /// Closes the socket; a request waiting fails.
    func close() {
        channel.close(promise: nil)
    }

    /// Completes when the socket closed.
    var closeFuture: EventLoopFuture<Void> { channel.closeFuture }
}

/// The endpoint's pipeline stage: drives the current ``CoAPExchange`` with the datagrams and
/// timers of the loop, acknowledges and answers the peer's own requests.
final class CoAPEndpointHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private struct Current {
        var exchange: CoAPExchange
        /// The request's own message id (later blocks' requests take the ids after it).
        var firstMessageID: UInt16
        var promise: EventLoopPromise<CoAPMessage>
        var retransmission: Scheduled<Void>?
        var deadline: Scheduled<Void>?
    }

    private let remote: SocketAddress
    private let incoming: @Sendable (CoAPMessage) -> CoAPMessage.Code?
    private var context: ChannelHandlerContext?
    private var current: Current?
    private var nextMessageID = UInt16.random(in: 0...UInt16.max)
    private var nextToken = UInt32.random(in: 0...UInt32.max)
    /// The answers to the peer's recent requests by message id: a retransmission gets the same
    /// answer and is not handed to `incoming` again (RFC 7252 4.5).
    private var answered: [UInt16: CoAPMessage] = [:]
    private var answeredOrder: [UInt16] = []
    private static let answeredMemory = 64

    init(remote: SocketAddress, incoming: @escaping @Sendable (CoAPMessage) -> CoAPMessage.Code?) {
        self.remote = remote
        self.incoming = incoming
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(HAPError(.connection, "the UDP socket for \(remote) closed")))
        context.fireChannelInactive()
    }

    func start(code: CoAPMessage.Code, path: String, payload: [UInt8], timeout: Duration) -> EventLoopFuture<CoAPMessage> {
        guard let context else { return remoteFailure(HAPError(.connection, "the UDP socket for \(remote) is closed")) }
        let promise = context.eventLoop.makePromise(of: CoAPMessage.self)
        guard current == nil else {
            promise.fail(HAPError(.state, "a CoAP request to \(remote) is still waiting for its answer"))
            return promise.futureResult
        }
        let request = CoAPMessage(kind: .confirmable, code: code, messageID: takeMessageID(), token: takeToken(),
                                  options: Self.pathOptions(path), payload: payload)
        let jitter = Double.random(in: 1...1.5)
        let exchange = CoAPExchange(request: request, parameters: CoAPExchange.Parameters(firstTimeout: .seconds(2) * jitter))
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            finish(.failure(HAPError(.timeout, "\(remote) did not answer within \(timeout)")))
        }
        current = Current(exchange: exchange, firstMessageID: request.messageID, promise: promise, deadline: deadline)
        perform(exchange.start())
        return promise.futureResult
    }

    private func remoteFailure(_ error: HAPError) -> EventLoopFuture<CoAPMessage> {
        (context?.eventLoop ?? MultiThreadedEventLoopGroup.singleton.next()).makeFailedFuture(error)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard envelope.remoteAddress == remote else { return }
        guard let message = try? CoAPMessage(decoding: Array(buffer: envelope.data)) else { return }
        if message.code.isRequest {
            answer(message)
        } else if var exchange = current?.exchange {
            let actions = exchange.receive(message)
            current?.exchange = exchange
            perform(actions)
        } else if message.kind == .confirmable {
            send(CoAPMessage(kind: .reset, code: .empty, messageID: message.messageID))
        }
    }

    /// A request of the peer's own: answered once, the answer repeated for a retransmission.
    private func answer(_ request: CoAPMessage) {
        if let earlier = answered[request.messageID] {
            send(earlier)
            return
        }
        let code = incoming(request) ?? .notFound
        let reply: CoAPMessage
        if request.kind == .confirmable {
            reply = CoAPMessage(kind: .acknowledgement, code: code, messageID: request.messageID, token: request.token)
        } else {
            reply = CoAPMessage(kind: .nonConfirmable, code: code, messageID: takeMessageID(), token: request.token)
        }
        answered[request.messageID] = reply
        answeredOrder.append(request.messageID)
        if answeredOrder.count > Self.answeredMemory { answered[answeredOrder.removeFirst()] = nil }
        send(reply)
    }

    private func perform(_ actions: [CoAPExchange.Action]) {
        for action in actions {
            switch action {
            case .send(let message):
                send(message)
            case .startTimer(let delay):
                current?.retransmission?.cancel()
                current?.retransmission = context?.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { [self] in retransmissionDue() }
            case .stopTimer:
                current?.retransmission?.cancel()
                current?.retransmission = nil
            case .finish(let response):
                finish(.success(response))
            case .fail(let failure):
                finish(.failure(Self.error(failure, remote: remote)))
            }
        }
    }

    private func retransmissionDue() {
        guard var exchange = current?.exchange else { return }
        let actions = exchange.timerExpired()
        current?.exchange = exchange
        perform(actions)
    }

    private func finish(_ result: Result<CoAPMessage, HAPError>) {
        guard let done = current else { return }
        current = nil
        // The ids the exchange took for later blocks' requests are not given out again.
        nextMessageID &+= done.exchange.nextMessageID &- done.firstMessageID &- 1
        done.retransmission?.cancel()
        done.deadline?.cancel()
        done.promise.completeWith(result.mapError { $0 as any Error })
    }

    private func send(_ message: CoAPMessage) {
        guard let context else { return }
        let bytes = message.encoded()
        let envelope = AddressedEnvelope(remoteAddress: remote, data: context.channel.allocator.buffer(bytes: bytes))
        context.writeAndFlush(wrapOutboundOut(envelope), promise: nil)
    }

    private func takeMessageID() -> UInt16 {
        defer { nextMessageID &+= 1 }
        return nextMessageID
    }

    private func takeToken() -> [UInt8] {
        defer { nextToken &+= 1 }
        return withUnsafeBytes(of: nextToken.bigEndian, Array.init)
    }

    private static func pathOptions(_ path: String) -> [CoAPMessage.Option] {
        path.split(separator: "/").map { CoAPMessage.Option(number: CoAPMessage.OptionNumber.uriPath.rawValue, value: Array($0.utf8)) }
    }

    private static func error(_ failure: CoAPExchange.Failure, remote: SocketAddress) -> HAPError {
        switch failure {
        case .noAcknowledgement(let attempts): HAPError(.timeout, "\(remote) acknowledged none of \(attempts) transmissions")
        case .reset: HAPError(.connection, "\(remote) reset the request (it cannot handle it)")
        case .badBlock(let detail): HAPError(.malformed, "\(remote) answered in blocks that do not fit together: \(detail)")
        }
    }
}

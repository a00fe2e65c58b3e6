import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last stage of a HAP connection's pipeline: requests out, their responses matched to them
/// in order, events to the event handler, and the decisions about the connection's end.
///
/// Each request (an ``Exchange``) carries the promise of its response and its time limit. HAP
/// answers requests in the order they came, so each response completes the oldest request
/// waiting; a response with no request waiting is dropped (nobody could take it; a later request
/// gets the answer sent after it). `EVENT/1.0` messages go to the event handler at any time,
/// also between a request and its response.
///
/// The connection is closed, and every waiting request fails with the reason recorded in
/// ``SessionEnd`` (the first one stands), when the oldest request waiting passes its time
/// limit (a later answer could no longer be matched), when an earlier stage reports bytes that do
/// not decrypt or parse, or a write fails; when the accessory closes it, they fail with that.
/// Time limits are tasks scheduled on the channel's event loop (no polling).
final class RequestMatcher: ChannelDuplexHandler {
    typealias InboundIn = HTTPMessage
    typealias OutboundIn = Exchange
    typealias OutboundOut = ByteBuffer

    /// One request: its bytes (plaintext; ``SessionFrameCodec`` seals them once the session is
    /// encrypted), how long its answer may take, and where the answer goes.
    struct Exchange: Sendable {
        let request: [UInt8]
        let timeout: TimeAmount
        let response: EventLoopPromise<HTTPMessage>
    }

    private struct Waiting {
        let response: EventLoopPromise<HTTPMessage>
        let deadline: Scheduled<Void>
    }

    /// `host:port`, for the messages.
    private let peer: String
    private let end: SessionEnd
    private let onEvent: (HTTPMessage) -> Void
    private var waiting: [Waiting] = []
    private var waitingStart = 0
    private var isClosed = false

    /// - Parameters:
    ///   - peer: `host:port`, named in the errors.
    ///   - end: where the reason the connection ends is recorded.
    ///   - onEvent: takes each `EVENT/1.0` message, on the event loop.
    init(peer: String, end: SessionEnd, onEvent: @escaping (HTTPMessage) -> Void) {
        self.peer = peer
        self.end = end
        self.onEvent = onEvent
    }

    /// The number of requests waiting for their response.
    var waitingCount: Int { waiting.count - waitingStart }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        if isClosed || end.reason != nil {
            let reason = end.reason ?? HAPError(.connection, "the connection to \(peer) is closed")
            exchange.response.fail(reason)
            promise?.fail(reason)
            return
        }
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: exchange.timeout) { [self] in
            overdue(context: context)
        }
        waiting.append(Waiting(response: exchange.response, deadline: deadline))
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.assumeIsolated().whenFailure { [self, peer] error in
            close(context: context, because: HAPError(.connection, "could not send to the accessory at \(peer): \(error)"))
        }
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: exchange.request)), promise: written)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosed else { return }
        let message = unwrapInboundIn(data)
        switch message.kind {
        case .event:
            onEvent(message)
        case .response:
            guard waitingCount > 0 else { return } // nobody asked: dropped
            let answered = waiting[waitingStart]
            waitingStart += 1
            if waitingStart == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingStart = 0
            }
            answered.deadline.cancel()
            answered.response.succeed(message)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason: HAPError
        switch error {
        case let error as FrameError:
            reason = HAPError(.malformed, "the accessory at \(peer) sent a frame that does not decrypt: \(error)")
        case let error as HTTPParseError:
            reason = HAPError(.malformed, "the accessory at \(peer) sent a message that does not parse: \(error)")
        case let error as HAPError:
            reason = error
        case let error as IOError:
            reason = HAPError(.connection, "the accessory at \(peer) closed the connection: \(Self.describe(error))")
        default:
            reason = HAPError(.connection, "the connection to the accessory at \(peer) failed: \(error)")
        }
        close(context: context, because: reason)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let reason = end.record(HAPError(.connection, "the accessory at \(peer) closed the connection"))
        isClosed = true
        failWaiting(reason)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failWaiting(end.record(HAPError(.connection, "the connection to \(peer) was closed")))
    }

    /// The oldest request waiting passed its time limit (each request's own task fires at its
    /// limit; a request answered in time cancels it, so the one firing is the oldest overdue).
    private func overdue(context: ChannelHandlerContext) {
        guard waitingCount > 0 else { return }
        close(context: context, because: HAPError(.timeout, "the accessory at \(peer) did not answer in time"))
    }

    private func close(context: ChannelHandlerContext, because reason: HAPError) {
        let standing = end.record(reason)
        guard !isClosed else { return }
        isClosed = true
        failWaiting(standing)
        context.close(promise: nil)
    }

    private func failWaiting(_ reason: HAPError) {
        let failed = waiting[waitingStart...]
        waiting = []
        waitingStart = 0
        for request in failed {
            request.deadline.cancel()
            request.response.fail(reason)
        }
    }

    /// `Connection reset by peer` rather than the system call's name and the errno.
    static func describe(_ error: IOError) -> String {
        String(cString: strerror(error.errnoCode))
    }
}

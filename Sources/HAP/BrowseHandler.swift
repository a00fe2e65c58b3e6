#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import Timing

/// The deciding half of a browse on its query channel: drives a ``DiscoveryRound`` with the
/// decoded messages (from this channel, and from the multicast listener as ``Heard`` events),
/// sends the queries it asks for to the destination, wakes it with timers on the event loop, and
/// closes the channel when the round is over. The round's result goes to `result` once the
/// channel is closed (at the deadline, or earlier when someone closes it: a cancelled browse
/// answers what was found so far).
///
/// Nothing happens before the ``Start`` event, so the multicast listener can be bound first.
final class BrowseHandler: ChannelInboundHandler {
    typealias InboundIn = DNSMessage
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    /// The user event that starts the round (and sends the first query).
    struct Start: Sendable {}

    /// The user event that carries a message the multicast listener decoded.
    struct Heard: Sendable {
        let message: DNSMessage
    }

    private var round: DiscoveryRound
    private let destination: SocketAddress
    private let result: EventLoopPromise<[DiscoveredAccessory]>
    private let now: () -> ContinuousClock.Instant
    private var context: ChannelHandlerContext?
    private var wakeUp: Scheduled<Void>?
    private var started = false
    private var completed = false
    /// Set when the first query could not be sent: the browse fails with it.
    private var failure: HAPError?
    /// Whether the first query's write has not finished yet: the browse is answered only after
    /// it has (a failed send closes the channel, and the answer must be that failure).
    private var firstSendPending = false
    /// The error the channel reported while the first query was being sent (the system's
    /// reason, where the write itself may only be told that the channel closed).
    private var sendError: Error?

    /// - Parameters:
    ///   - now: the clock the round runs on (tests pass the embedded event loop's).
    init(round: DiscoveryRound, destination: SocketAddress, result: EventLoopPromise<[DiscoveredAccessory]>,
         now: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.round = round
        self.destination = destination
        self.result = result
        self.now = now
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        complete()
        self.context = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is Start:
            start(context: context)
        case let heard as Heard:
            round.receive(heard.message)
            pass()
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        round.receive(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        pass()
    }

    func channelInactive(context: ChannelHandlerContext) {
        complete()
        context.fireChannelInactive()
    }

    /// Read errors a datagram channel survives (an ICMP port unreachable for an earlier query,
    /// say) change nothing; fatal ones close the channel, which ends the round.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if firstSendPending, sendError == nil { sendError = error }
    }

    private func start(context: ChannelHandlerContext) {
        guard !started, context.channel.isActive else { return }
        started = true
        let step = round.start(at: now())
        let destination = destination
        firstSendPending = true
        let channel = context.channel
        let sent = context.writeAndFlush(wrapOutboundOut(AddressedEnvelope(remoteAddress: destination, data: ByteBuffer(bytes: step.queries[0]))))
        sent.assumeIsolated().whenComplete { outcome in
            self.firstSendPending = false
            if case .failure(let error) = outcome {
                self.failure = HAPError(.connection, "cannot send the mDNS query to \(Self.text(destination)): \(Self.reason(self.sendError ?? error))")
                self.context?.close(promise: nil)
            }
            if !channel.isActive { self.complete() }
        }
        carryOut(Step(queries: Array(step.queries.dropFirst()), wake: step.wake))
    }

    private typealias Step = DiscoveryRound.Step

    /// A pass of the round now, and what it asks for.
    private func pass() {
        guard started, !completed else { return }
        carryOut(round.advance(at: now()))
    }

    private func carryOut(_ step: Step) {
        guard let context, !completed else { return }
        for query in step.queries {
            // A query after the first that cannot be sent is given up (as a datagram that got lost).
            context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: destination, data: ByteBuffer(bytes: query))), promise: nil)
        }
        if !step.queries.isEmpty { context.flush() }
        wakeUp?.cancel()
        wakeUp = nil
        guard let wake = step.wake else {
            context.close(promise: nil)
            return
        }
        let wait = max(wake - now(), .zero)
        wakeUp = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(wait.wholeNanoseconds)) {
            self.wakeUp = nil
            self.pass()
        }
    }

    /// Answers the browse, once.
    private func complete() {
        guard !completed, !firstSendPending else { return }
        completed = true
        wakeUp?.cancel()
        wakeUp = nil
        if let failure {
            result.fail(failure)
        } else {
            result.succeed(round.accessories())
        }
    }

    /// `224.0.0.251:5353`.
    static func text(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress, let port = address.port else { return "\(address)" }
        return address.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// What the system said (`Network is unreachable`), else the error's own description.
    static func reason(_ error: Error) -> String {
        if let error = error as? IOError { return systemMessage(error.errnoCode) }
        if let error = error as? ChannelError, error == .writeHostUnreachable { return systemMessage(EHOSTUNREACH) }
        return "\(error)"
    }
}

/// The system's text for an errno value (`Network is unreachable`).
func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}

import LoopExecutor
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection to an accessory, as a SwiftNIO channel: HTTP requests and responses in
/// plaintext until pair-verify, then inside encrypted frames; `EVENT/1.0` messages arrive on it at
/// any time.
///
/// The channel's pipeline, from the socket in:
/// 1. ``SessionFrameCodec``: plaintext until ``encrypt(with:)``, then HAP's ChaCha20-Poly1305 frames;
/// 2. ``HTTPResponseDecoder``: the byte stream into responses and events (``HTTPResponseParser``);
/// 3. ``RequestMatcher``: responses to their requests in order, events to the event handler,
///    time limits and the decision to close.
///
/// Requests go one at a time (``Client`` makes sure). Every connection lives on one event loop of
/// a shared group (``Client/eventLoopGroup``): no thread per connection, and the timers (connect
/// and request time limits) are the loop's scheduled tasks.
final class Connection: Sendable {
    let host: String
    let port: Int
    private let channel: any Channel
    private let end: SessionEnd
    private let encrypted = Atomic<Bool>(false)
    /// The channel's event loop as a task executor (``Client/taskExecutor``).
    let taskExecutor: EventLoopTaskExecutor

    private var peer: String { "\(host):\(port)" }

    private init(channel: any Channel, end: SessionEnd, host: String, port: Int) {
        self.channel = channel
        self.taskExecutor = EventLoopTaskExecutor(channel.eventLoop)
        self.end = end
        self.host = host
        self.port = port
    }

    /// Connects (within `timeout`) on one of `group`'s event loops and sets up the pipeline;
    /// `onEvent` gets each `EVENT/1.0` message, on that event loop, in order.
    static func open(host: String, port: Int, timeout: Duration, group: any EventLoopGroup,
                     onEvent: @escaping @Sendable (HTTPMessage) -> Void) async throws(HAPError) -> Connection {
        let end = SessionEnd()
        let peer = "\(host):\(port)"
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(timeout))
            // TCP_NODELAY is ClientBootstrap's default. Short keep-alive probes notice a peer
            // that vanished without a word (the driver's keep-alive read notices one that hangs).
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(.init(rawValue: TCP_KEEPIDLE)), value: 2)
            .channelOption(.tcpOption(.init(rawValue: TCP_KEEPINTVL)), value: 1)
            .channelOption(.tcpOption(.init(rawValue: TCP_KEEPCNT)), value: 2)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        SessionFrameCodec(),
                        HTTPResponseDecoder(),
                        RequestMatcher(peer: peer, end: end, onEvent: onEvent),
                    ])
                }
            }
        let channel: any Channel
        do {
            // An address needs no resolver (getaddrinfo runs on a dispatch queue): connect at once.
            if let address = try? SocketAddress(ipAddress: host, port: port) {
                channel = try await bootstrap.connect(to: address).get()
            } else {
                channel = try await bootstrap.connect(host: host, port: port).get()
            }
        } catch {
            throw HAPError(.connection, "cannot connect to \(peer): \(describe(connectError: error, timeout: timeout))")
        }
        return Connection(channel: channel, end: end, host: host, port: port)
    }

    private static func describe(connectError error: any Error, timeout: Duration) -> String {
        switch error {
        case ChannelError.connectTimeout:
            return "timed out after \(timeout)"
        case let error as IOError:
            return RequestMatcher.describe(error)
        case let error as NIOConnectionError:
            if let dns = error.dnsAError ?? error.dnsAAAAError { return "cannot resolve \(error.host): \(dns)" }
            if let last = error.connectionErrors.last { return describe(connectError: last.error, timeout: timeout) }
            return "no address"
        default:
            return "\(error)"
        }
    }

    /// Sends `request` and waits for its response.
    /// - Throws: ``HAPError`` if the connection is closed or closes, or `timeout` passes, or the
    ///   task is cancelled (the connection is then closed: an answer that comes later could no
    ///   longer be matched to its request).
    func send(_ request: HTTPRequest, timeout: Duration) async throws(HAPError) -> HTTPMessage {
        if Task.isCancelled { throw HAPError(.connection, "the request to \(peer) was cancelled") }
        if let reason = end.reason { throw reason }
        let response = channel.eventLoop.makePromise(of: HTTPMessage.self)
        let exchange = RequestMatcher.Exchange(request: request.encoded(host: peer), timeout: TimeAmount(timeout), response: response)
        channel.writeAndFlush(exchange, promise: nil)
        do {
            return try await withTaskCancellationHandler {
                try await response.futureResult.get()
            } onCancel: {
                fail(HAPError(.connection, "a request to \(peer) was cancelled; the connection is closed"))
            }
        } catch let error as HAPError {
            throw error
        } catch {
            throw HAPError(.connection, "the request to \(peer) failed: \(error)")
        }
    }

    /// From now on, frames are encrypted with `keys` in both directions: the next request is
    /// sealed, and everything read from now on is opened. Call it after the pair-verify response
    /// was read and before the next request.
    /// - Throws: ``HAPError`` if the connection closed, or plaintext bytes followed the
    ///   pair-verify response (the connection is then closed).
    func encrypt(with keys: SessionKeys) async throws(HAPError) {
        do {
            try await channel.triggerUserOutboundEvent(SessionEvent.encrypt(keys)).get()
            encrypted.store(true, ordering: .releasing)
        } catch {
            // The matcher has recorded what went wrong (the decoder's refusal closes the channel).
            throw end.reason ?? HAPError(.connection, "the session with \(peer) could not be encrypted: \(error)")
        }
    }

    var isEncrypted: Bool { encrypted.load(ordering: .acquiring) }

    /// Why the connection closed; nil while it is open.
    var failure: HAPError? { end.reason }

    /// Closes the connection; waiting requests fail. Idempotent.
    func close() {
        fail(HAPError(.connection, "the connection to \(peer) was closed"))
    }

    /// Waits until the connection is closed, and tells why.
    func closed() async -> HAPError {
        await end.wait()
    }

    /// Runs `body` once the channel is closed (on its event loop).
    func whenClosed(_ body: @escaping @Sendable () -> Void) {
        channel.closeFuture.whenComplete { _ in body() }
    }

    private func fail(_ reason: HAPError) {
        end.record(reason)
        channel.close(promise: nil)
    }
}

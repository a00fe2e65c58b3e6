internal import CMosquitto
import Foundation
import Logging
import Synchronization

/// An MQTT client over libmosquitto: connect, publish, subscribe, receive, reconnect.
///
/// ```swift
/// let client = try Client(configuration: configuration, logger: logger)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await client.run() }          // connects, reconnects, until stopped
///     for await event in client.connectionEvents() {
///         if case .connected = event { break }
///     }
///     try await client.subscribe([Subscription(try TopicFilter("a/#"))])
///     try await client.publish(Message(topic: try TopicName("a/b"), payload: "hello"))
///     for await message in client.messages { ... }
/// }
/// ```
///
/// The network runs on a thread of the client's own, where libmosquitto calls back; nothing
/// here blocks a Swift concurrency thread. ``run()`` connects and keeps the connection: after a
/// failed attempt or a lost connection it waits (``Backoff``) and tries again, restoring every
/// subscription, until ``disconnect()`` is called, the task running it is cancelled, or the
/// broker refuses the credentials (then ``run()`` throws).
public final class Client: Sendable {
    /// The settings this client was built with.
    public let configuration: Configuration

    /// Every message received, in the order the broker delivered them. One consumer.
    ///
    /// Nothing is dropped: when the consumer falls ``Configuration/incomingBufferLimit``
    /// messages behind, the network thread stops reading from the broker until it catches up
    /// (see ``Messages``). The sequence finishes when the client stops.
    public let messages: Messages

    let handle: Handle
    let logger: Logger
    let state: Mutex<State>
    /// What ``messages`` delivers.
    let messageSink: MessageQueue
    /// Received messages the consumer has not taken yet.
    let backlog: Backlog
    /// The network thread, also a serial executor (``executor``).
    let eventLoop: EventLoop
    /// Wakes the network thread: work handed to libmosquitto, a stop, the consumer catching up.
    var networkWait: NetworkWait { eventLoop.networkWait }
    /// The network loop's figures (``loopStatistics``).
    let counters = LoopCounters()

    /// Creates the client; nothing connects until ``run()``.
    /// - Throws: ``ConfigurationError`` for settings that cannot work (see ``Configuration``).
    public init(configuration: Configuration, logger: Logger) throws(ConfigurationError) {
        try configuration.validate()
        Library.initialize()
        guard let pointer = mosquitto_new(configuration.clientID, configuration.cleanStart, nil) else {
            throw ConfigurationError("libmosquitto could not create a client (out of memory)")
        }
        self.configuration = configuration
        self.logger = logger
        self.handle = Handle(pointer)
        self.state = Mutex(State(redeliveries: RedeliveryFilter(window: Self.redeliveryWindow(for: configuration.protocolVersion))))
        do {
            eventLoop = try EventLoop(name: "mqtt-\(configuration.clientID)")
        } catch {
            mosquitto_destroy(pointer)
            throw error
        }
        backlog = Backlog(limit: configuration.incomingBufferLimit, wait: eventLoop.networkWait)
        messageSink = MessageQueue(backlog: backlog)
        messages = Messages(messageSink)
        do {
            try Callbacks.install(on: pointer, owner: Unmanaged.passUnretained(self).toOpaque())
            try applyOptions()
        } catch {
            mosquitto_destroy(pointer)
            throw error
        }
    }

    /// The broker of the current (or last) connection attempt.
    var currentURL: BrokerURL { state.withLock { $0.currentURL } ?? configuration.url }

    deinit {
        mosquitto_destroy(handle.pointer)
        messageSink.finish()
        eventLoop.shutDown()
    }

    /// The client's network thread as a serial executor. An actor that runs there
    /// (`unownedExecutor`) handles what the client receives in the same turn of the loop that read
    /// it, and what it publishes is written at the end of that turn: no thread hop either way.
    /// Never block in such an actor: the network waits meanwhile.
    public var executor: EventLoop { eventLoop }

    /// A consumer that takes what the client receives on the network thread, as it happens.
    public struct Consumer: Sendable {
        /// Each received message, as it is read.
        public var message: @Sendable (Message) -> Void
        /// `.connected` when the broker accepted a connection (before any message of it is
        /// read), `.disconnected` when one ended.
        public var connection: @Sendable (ConnectionEvent) -> Void

        public init(message: @escaping @Sendable (Message) -> Void, connection: @escaping @Sendable (ConnectionEvent) -> Void) {
            self.message = message
            self.connection = connection
        }
    }

    /// Hands every received message and every connection change to `consumer` on the network
    /// thread, as they happen, instead of to ``messages`` (nil goes back to ``messages``).
    ///
    /// For a consumer that runs on ``executor`` (an actor whose `unownedExecutor` it is, which
    /// takes them with `assumeIsolated`) and handles a message without suspending. It is the
    /// tightest backpressure there is: the next message is read only once the consumer returned,
    /// so nothing waits in memory, and what it publishes is written at the end of the same turn.
    /// Set it before subscribing. A connection already up when it is set is reported first
    /// (`.connected`, as ``connectionEvents()`` starts), so the consumer always hears of a
    /// connection before its messages.
    ///
    /// Messages received before it is set and not yet taken from ``messages`` go to it next, in
    /// the order received: a broker that kept the session sends what it queued right after its
    /// CONNACK, which may come before the consumer is set (the gateway's engine sets it once the
    /// devices' structure is known). The consumer takes over on the network thread, after the
    /// jobs already handed to it; a ``subscribe(_:)`` called after this comes after it.
    public func deliver(to consumer: Consumer?) {
        guard let consumer else {
            eventLoop.execute { [self] in state.withLock { $0.consumer = nil } }
            return
        }
        eventLoop.execute { [self] in
            // On the network thread, where messages are received and connections announced:
            // nothing falls in between.
            let announced = state.withLock { $0.connectionAnnounced ? ConnectionEvent.connected(sessionPresent: $0.sessionPresent) : nil }
            if let announced { consumer.connection(announced) }
            for message in messageSink.drain() { consumer.message(message) }
            state.withLock { $0.consumer = consumer }
        }
    }

    /// The direct consumer, if any.
    var consumer: Consumer? { state.withLock { $0.consumer } }

    /// What the network loop has done so far: messages received and waiting, and how long
    /// reading was paused because the consumer of ``messages`` or the broker was behind.
    public var loopStatistics: LoopStatistics {
        counters.snapshot(waiting: backlog.count)
    }

    /// Whether the broker has accepted the current connection.
    public var isConnected: Bool {
        state.withLock { $0.isConnected }
    }

    /// A stream of connection changes. It starts with `.connected` if the client is connected
    /// now, and finishes after `.stopped`. Any number of streams may be open; each sees the
    /// events in the order they happened.
    public func connectionEvents() -> AsyncStream<ConnectionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectionEvent.self)
        let id = UUID()
        state.withLock { state in
            guard state.phase != .stopped else {
                continuation.yield(.stopped)
                continuation.finish()
                return
            }
            if state.connectionAnnounced { continuation.yield(.connected(sessionPresent: state.sessionPresent)) }
            state.eventSinks[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.eventSinks.removeValue(forKey: id) }
        }
        return stream
    }

    /// Connects and stays connected until ``disconnect()`` or cancellation; then disconnects
    /// cleanly (the will is not sent) and returns.
    ///
    /// Unreachable brokers and lost connections are retried with ``Configuration/backoff``,
    /// each attempt logged. Call it once; called from a cancelled task it returns at once.
    /// - Throws: ``ClientError`` when the broker refuses the connection for a reason that
    ///   retrying cannot fix (bad user name or password, not authorised, banned, bad client id).
    public func run() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let start: Result<Bool, ClientError> = state.withLock { state in
                    switch state.phase {
                    case .idle:
                        state.phase = .running
                        state.runCompletion = continuation
                        return .success(true)
                    case .stopped where !state.hasRun:
                        return .success(false) // stopped (cancelled) before it started
                    case .running, .stopped:
                        return .failure(ClientError(.alreadyStarted))
                    }
                }
                switch start {
                case .success(true):
                    state.withLock { $0.hasRun = true }
                    eventLoop.runNetwork { [self] in networkLoop() }
                case .success(false):
                    continuation.resume()
                case .failure(let error):
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            requestStop()
        }
    }

    /// Disconnects and waits until ``run()`` has ended. Messages not yet acknowledged by then fail
    /// with ``ClientError/stopped``.
    /// - Parameter sendingWill: false (the default) disconnects cleanly and the broker discards the
    ///   will; true asks the broker to publish the will anyway (MQTT 5 reason code 0x04; with
    ///   MQTT 3.1.1 the connection is dropped without DISCONNECT, to the same effect).
    public func disconnect(sendingWill: Bool = false) async {
        let stream = connectionEvents()
        requestStop(sendingWill: sendingWill)
        for await event in stream where event == .stopped { break }
    }

    /// Publishes a message.
    ///
    /// The message is handed to libmosquitto before the first suspension, on the caller's
    /// executor (`nonisolated(nonsending)`): messages published one after another from one actor
    /// or task reach the broker in that order. QoS 0 returns once the message is written to the
    /// socket. QoS 1 and 2 return once the broker has acknowledged it; such messages published
    /// while the connection is down are kept by libmosquitto (in memory) and sent after the
    /// reconnect.
    /// - Throws: ``ClientError/notConnected`` for QoS 0 without a connection (or if the
    ///   connection drops before it is written); a refusal by the broker (MQTT 5 reason code);
    ///   ``ClientError/stopped`` if the client stops first.
    nonisolated(nonsending) public func publish(_ message: Message) async throws {
        let (mid, handOff, kind) = try handOver(message)
        let code = try await awaitAcknowledgement(of: mid, kind: kind, handOff: handOff).reasonCode
        if code >= 0x80 { throw ClientError(.publishRefused(topic: message.topic.string, code: code)) }
    }

    /// Hands a message to libmosquitto now, in call order, without waiting for the broker: for
    /// a stream of messages (values, acknowledgements) where order matters and the caller must
    /// not wait a round trip per message. QoS 1 and 2 messages are kept across a reconnect as
    /// with ``publish(_:)``; a refusal by the broker is only logged.
    /// - Throws: ``ClientError/notConnected`` for QoS 0 without a connection; a message
    ///   property MQTT cannot carry; a libmosquitto error.
    public func send(_ message: Message) throws(ClientError) {
        let (mid, _, kind) = try handOver(message)
        forgetAcknowledgement(of: mid, kind: kind)
    }

    /// Hands a message to libmosquitto; the caller then waits for, or forgets, its acknowledgement.
    private func handOver(_ message: Message) throws(ClientError) -> (mid: Int32, handOff: HandOff, kind: PendingKind) {
        let properties = try PropertyList(message.properties, protocolVersion: configuration.protocolVersion)
        defer { properties.free() }
        var mid: Int32 = 0
        let handOff = beginHandOff()
        let rc = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(handle.pointer, &mid, message.topic.string, Int32(bytes.count), bytes.baseAddress, message.qos.rawValue, message.retain, properties.list)
        }
        // NO_CONN with QoS > 0: libmosquitto has queued the message and sends it after the reconnect.
        let queued = rc == MOSQ_ERR_SUCCESS.rawValue || (rc == MOSQ_ERR_NO_CONN.rawValue && message.qos != .atMostOnce)
        guard queued else {
            endHandOff()
            throw rc == MOSQ_ERR_NO_CONN.rawValue ? ClientError.notConnected : Library.error("mosquitto_publish_v5", rc)
        }
        wakeNetwork() // libmosquitto only queued it: the network thread writes it
        return (mid, handOff, message.qos == .atMostOnce ? .publishQoS0 : .publishQueued)
    }

    // MARK: - Internals shared with the network thread and the callbacks

    /// Asks the network thread to disconnect and stop.
    func requestStop(sendingWill: Bool = false) {
        let reason = sendingWill ? Self.disconnectWithWill : 0
        let (first, finishedSinks, connecting) = state.withLock { state -> (Bool, [AsyncStream<ConnectionEvent>.Continuation]?, Bool) in
            guard state.stopRequestedAt == nil else { return (false, nil, false) }
            state.stopRequestedAt = ContinuousClock.now
            state.stopReason = reason
            guard state.phase == .idle else { return (true, nil, state.isConnecting) }
            state.phase = .stopped
            state.emit(.stopped)
            return (true, state.takeEventSinks(), false)
        }
        guard first else { return }
        if let finishedSinks { // it never ran: nothing else will finish the streams or the calls
            finishedSinks.forEach { $0.finish() }
            messageSink.finish()
            failAllAcknowledgements()
            return
        }
        sendDisconnect(reason: reason)
        // A connect attempt (up to minutes against a host that drops packets) runs on a thread of
        // its own: the network thread ends the run at once and leaves the attempt to end its
        // connection, if it opens, when it returns.
        if connecting {
            logger.notice("stopping while a connection attempt to \(currentURL) is under way; not waiting for it")
        }
    }

    /// Wakes the network thread to write what was just queued; on that thread it is not needed
    /// (it writes at the end of the turn).
    func wakeNetwork() {
        if !eventLoop.isCurrent { networkWait.signal() }
    }

    /// Asks libmosquitto to send DISCONNECT with `reason`; with MQTT 3.1.1, which cannot ask for
    /// the will, that reason drops the connection instead.
    func sendDisconnect(reason: Int32) {
        if reason == Self.disconnectWithWill && configuration.protocolVersion == .v311 {
            closeSocket()
        } else {
            mosquitto_disconnect_v5(handle.pointer, reason, nil)
        }
        networkWait.signal()
    }

    /// Where Debian keeps the system's trusted certificates.
    static let systemCAFolder = "/etc/ssl/certs"

    /// The Receive Maximum announced in CONNECT (libmosquitto's default, MQTT 5): the broker never
    /// has more QoS 1 and 2 messages to us unacknowledged at once.
    static let receiveMaximum = 20

    /// How many received QoS 1 messages the redelivery filter remembers: with MQTT 5 the Receive
    /// Maximum, which bounds what the broker can re-send; MQTT 3.1.1 announces none, so a bound
    /// above any broker's usual in-flight limit (Mosquitto's `max_inflight_messages`, 20 by
    /// default; 1,000 in the overload tests).
    static func redeliveryWindow(for version: ProtocolVersion) -> Int {
        version == .v5 ? receiveMaximum : 1_000
    }

    /// MQTT 5 DISCONNECT reason code "Disconnect with Will Message".
    static let disconnectWithWill: Int32 = 0x04

    /// Shuts the socket down under libmosquitto's feet, as a crash or a cut cable would: the broker
    /// sees the connection drop without DISCONNECT and publishes the will.
    func closeSocket() {
        let socket = mosquitto_socket(handle.pointer)
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func applyOptions() throws(ConfigurationError) {
        let pointer = handle.pointer
        try Library.check(mosquitto_threaded_set(pointer, true), "mosquitto_threaded_set")
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try Library.check(mosquitto_int_option(pointer, MOSQ_OPT_PROTOCOL_VERSION, version), "protocol version")
        try Library.check(mosquitto_int_option(pointer, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        try Library.check(mosquitto_int_option(pointer, MOSQ_OPT_RECEIVE_MAXIMUM, Int32(Self.receiveMaximum)), "receive maximum")
        if let username = configuration.effectiveUsername {
            try Library.check(mosquitto_username_pw_set(pointer, username, configuration.password?.value), "user name and password")
        }
        if configuration.url.usesTLS {
            let tls = configuration.tls
            if tls.caFile == nil {
                // Trust the system's CAs; libmosquitto then needs no CA file of ours.
                try Library.check(mosquitto_int_option(pointer, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "system CA certificates")
            }
            if tls.caFile != nil || tls.certificateFile != nil {
                // mosquitto_tls_set wants a CA file or folder even with a client certificate only.
                let caFolder = tls.caFile == nil ? Self.systemCAFolder : nil
                try Library.check(mosquitto_tls_set(pointer, tls.caFile, caFolder, tls.certificateFile, tls.privateKeyFile, nil), "TLS files")
            }
        }
        if let will = configuration.will {
            let properties: PropertyList
            do {
                properties = try PropertyList(will.properties, protocolVersion: configuration.protocolVersion)
            } catch {
                throw ConfigurationError("the will message: \(error)")
            }
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(pointer, will.topic.string, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain, properties.list)
            }
            if rc != MOSQ_ERR_SUCCESS.rawValue { properties.free() } // taken over only on success
            try Library.check(rc, "will message")
        }
    }
}

extension Client {
    /// The libmosquitto handle; it lives as long as the client.
    struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    enum Phase: Equatable {
        case idle, running, stopped
    }

    /// Everything the network thread and the callers share, behind one lock.
    struct State: ~Copyable {
        var phase = Phase.idle
        /// The broker accepted the connection (set before the subscriptions are restored).
        var isConnected = false
        /// `.connected` has been emitted for the current connection.
        var connectionAnnounced = false
        var sessionPresent = false
        /// When the broker accepted the current connection.
        var acceptedAt: ContinuousClock.Instant?
        var stopRequestedAt: ContinuousClock.Instant?
        var hasRun = false
        var fatalError: ClientError?
        var lastLibraryError: String?
        var subscriptions: [TopicFilter: Subscription] = [:]
        /// Unsubscriptions a broker that kept our session does not know of yet.
        var unsubscribedWhileDisconnected: Set<TopicFilter> = []
        var acknowledgements = AcknowledgementTable()
        var earlyAcknowledgements: [Int32: Acknowledgement] = [:]
        var handOffsInProgress = 0
        /// Counts connections that ended; a hand-off remembers the one it happened on.
        var connectionNumber = 0
        /// The DISCONNECT reason asked for by a stop (0 normal, 0x04 with the will).
        var stopReason: Int32?
        var eventSinks: [UUID: AsyncStream<ConnectionEvent>.Continuation] = [:]
        /// Who takes messages and connection changes on the network thread (``Client/deliver(to:)``).
        var consumer: Consumer?
        var runCompletion: CheckedContinuation<Void, any Error>?
        /// The network thread is inside libmosquitto's blocking connect (name lookup, TCP).
        var isConnecting = false
        /// The broker of the current (or last) connection attempt.
        var currentURL: BrokerURL?
        /// QoS 1 messages the broker may deliver again after a reconnect (``RedeliveryFilter``).
        var redeliveries: RedeliveryFilter
        /// ``run()`` has been finished (streams ended, calls failed, completion resumed).
        var finished = false

        init(redeliveries: RedeliveryFilter) {
            self.redeliveries = redeliveries
        }

        /// Hands every open connection-event stream an event, under the lock, so that every
        /// stream sees the same order.
        func emit(_ event: ConnectionEvent) {
            for sink in eventSinks.values { sink.yield(event) }
        }

        /// After `.stopped`: the streams to finish, once the lock is released (finishing runs
        /// their termination handlers, which take the lock).
        mutating func takeEventSinks() -> [AsyncStream<ConnectionEvent>.Continuation] {
            defer { eventSinks.removeAll() }
            return Array(eventSinks.values)
        }
    }
}

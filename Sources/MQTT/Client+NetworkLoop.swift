internal import CMosquitto
import Foundation
import Logging
import Synchronization
import Timing

extension Client {
    /// How long a clean disconnect may take before the socket is simply closed.
    static let disconnectGracePeriod = Duration.seconds(2)
    /// How long one wait of the loop may last: libmosquitto's keep-alive is checked at least
    /// this often (any signal, and the socket, wake it earlier).
    static let loopTimeout = Duration.seconds(1)
    /// How long a connection must last, from the broker's CONNACK, for the next reconnect to start
    /// again from the backoff's first wait.
    static let settledConnection = Duration.seconds(10)

    /// The body of the network thread: connect, serve the connection, wait, reconnect, until a
    /// stop is requested or the broker refuses us for good.
    ///
    /// With a list of brokers, an attempt that fails moves on to the next broker at once; the
    /// backoff waits only after the whole list failed, and after a lost connection the list is
    /// tried again from the first.
    func networkLoop() {
        var backoff = configuration.backoff
        let urls = configuration.urls
        var index = 0
        while !stopRequested {
            let url = urls[index]
            let outcome = connectAndServe(url)
            if stopRequested || fatalError != nil { break }
            if outcome.stage == .served {
                // A connection the broker ends right after accepting it (a session it cannot
                // serve, a broker in trouble) is a failed attempt: the waits grow as for a
                // broker that is down, and the gateway never connects more than a few times a
                // second. Only one that lasted resets the backoff.
                if outcome.lasted >= Self.settledConnection { backoff.reset() }
                index = 0
            } else if index + 1 < urls.count {
                logger.warning("cannot reach the MQTT broker at \(url): \(describeDisconnect(outcome)); trying \(urls[index + 1])")
                index += 1
                continue
            } else {
                index = 0
            }
            let reason = describeDisconnect(outcome)
            let delay = backoff.nextDelay()
            logDisconnect(url: url, reason: reason, outcome: outcome, delay: delay, attempt: backoff.attempts)
            let consumer = state.withLock { state in
                state.emit(.disconnected(reason: reason))
                state.emit(.reconnecting(delay: delay, attempt: backoff.attempts + 1))
                return state.consumer
            }
            consumer?.connection(.disconnected(reason: reason))
            if waitBeforeReconnect(delay) == false { break }
        }
        finish()
    }

    /// How one connection attempt ended.
    struct ConnectionOutcome {
        enum Stage {
            /// The TCP (or TLS) connection could not be opened.
            case connectFailed
            /// The connection opened but ended before the broker accepted us.
            case endedBeforeAccepted
            /// The broker accepted us; later the connection ended.
            case served
        }

        let stage: Stage
        /// From the broker's CONNACK to the end (zero unless ``stage`` is `.served`).
        var lasted: Duration = .zero
        /// The libmosquitto result that ended it.
        let code: Int32
        /// `errno` right after, which explains `MOSQ_ERR_ERRNO`.
        let errno: Int32
    }

    /// Opens a connection and runs libmosquitto's loop on it until it ends.
    private func connectAndServe(_ url: BrokerURL) -> ConnectionOutcome {
        // A stop asked for before this point ends the run here; one asked for during the
        // attempt ends it without waiting for the attempt (``connect(to:)``), under the same lock.
        let proceed = state.withLock { state -> Bool in
            guard state.stopRequestedAt == nil else { return false }
            state.isConnecting = true
            state.currentURL = url
            return true
        }
        guard proceed else { return ConnectionOutcome(stage: .connectFailed, code: MOSQ_ERR_NO_CONN.rawValue, errno: 0) }
        logger.debug("connecting to \(url)")
        Callbacks.followLog(on: handle.pointer, true)
        let attempt = connect(to: url)
        state.withLock { $0.isConnecting = false }
        guard let (rc, connectErrno) = attempt else {
            return ConnectionOutcome(stage: .connectFailed, code: MOSQ_ERR_NO_CONN.rawValue, errno: 0)
        }
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            return ConnectionOutcome(stage: .connectFailed, code: rc, errno: connectErrno)
        }
        logger.debug("TCP connection to \(url) open, CONNECT sent")
        if let reason = state.withLock({ $0.stopReason }) {
            // A stop came while connecting; libmosquitto's connect discarded its DISCONNECT.
            sendDisconnect(reason: reason)
        }
        let code = serveConnection()
        let lastErrno = errno
        let (wasConnected, acceptedAt) = state.withLock { state -> (Bool, ContinuousClock.Instant?) in
            defer {
                state.isConnected = false
                state.connectionAnnounced = false
                state.acceptedAt = nil
            }
            return (state.isConnected, state.acceptedAt)
        }
        connectionEnded()
        guard wasConnected else { return ConnectionOutcome(stage: .endedBeforeAccepted, code: code, errno: lastErrno) }
        return ConnectionOutcome(stage: .served, lasted: acceptedAt.map { $0.duration(to: .now) } ?? .zero, code: code, errno: lastErrno)
    }

    /// Runs libmosquitto's blocking connect (name lookup, TCP, TLS) on a thread of its own while
    /// the network thread goes on running jobs. Returns its result and `errno`, or nil when a stop
    /// came first: the run then ends without waiting, and the attempt, when it returns, ends the
    /// connection it may have opened.
    private func connect(to url: BrokerURL) -> (Int32, Int32)? {
        let attempt = ConnectAttempt()
        let keepAlive = Int32(configuration.keepAlive.wholeSeconds)
        let thread = Thread { [self] in
            let properties = connectProperties()
            let rc = mosquitto_connect_bind_v5(handle.pointer, url.host, Int32(url.port), keepAlive, nil, properties.list)
            let connectErrno = errno
            properties.free()
            if attempt.finish(rc, connectErrno) == .abandoned, rc == MOSQ_ERR_SUCCESS.rawValue {
                mosquitto_disconnect_v5(handle.pointer, 0, nil)
                _ = mosquitto_loop_write(handle.pointer, 1) // writes the DISCONNECT and closes
            }
            networkWait.signal()
        }
        thread.name = "mqtt-connect"
        thread.start()
        while true {
            if let result = attempt.result { return result }
            if stopRequested, attempt.abandon() { return nil }
            _ = eventLoop.wait(socket: nil, reading: false, writing: { false }, timeout: Self.loopTimeout)
        }
    }

    /// Runs the open connection until it ends: waits for the socket and for signals, reads what
    /// the broker sent while the consumer keeps up (``Backlog``), writes what is queued, and keeps
    /// the connection alive. Returns the libmosquitto result that ended it.
    ///
    /// Only reading pauses: the broker's acknowledgements of our own messages arrive on the same
    /// socket, so a pause for them could never end. What libmosquitto holds of ours is bounded by
    /// what the consumer publishes per message it takes.
    private func serveConnection() -> Int32 {
        let pointer = handle.pointer
        var paused = false
        while true {
            let socket = mosquitto_socket(pointer)
            guard socket >= 0 else { return MOSQ_ERR_NO_CONN.rawValue }
            let reading = backlog.allowsReading(pausedBefore: paused)
            if reading == paused {
                paused = !reading
                if paused { counters.pauseBegan() } else { counters.pauseEnded() }
            }
            let ready = eventLoop.wait(socket: socket, reading: reading, writing: { mosquitto_want_write(pointer) }, timeout: Self.loopTimeout)
            var code = MOSQ_ERR_SUCCESS.rawValue
            // libmosquitto sends each packet with a write of its own: a turn's acknowledgement and
            // publishes are corked into as few segments as the kernel can make of them.
            let cork = ready.readable ? Cork(socket) : nil
            if ready.readable {
                code = mosquitto_loop_read(pointer, 1)
                eventLoop.runJobs() // the consumer handles what was read; its publishes go out below
            }
            if code == MOSQ_ERR_SUCCESS.rawValue, mosquitto_want_write(pointer) { code = mosquitto_loop_write(pointer, 1) }
            cork?.release()
            if code == MOSQ_ERR_SUCCESS.rawValue { code = mosquitto_loop_misc(pointer) }
            if code != MOSQ_ERR_SUCCESS.rawValue {
                networkWait.forget(socket)
                if paused { counters.pauseEnded() }
                return code
            }
            if let since = state.withLock({ $0.stopRequestedAt }), since.duration(to: .now) > Self.disconnectGracePeriod {
                logger.warning("the broker did not take the DISCONNECT within \(Library.format(Self.disconnectGracePeriod)); closing the connection")
                closeSocket()
                networkWait.forget(socket)
                if paused { counters.pauseEnded() }
                return MOSQ_ERR_CONN_LOST.rawValue
            }
        }
    }

    /// MQTT 5 CONNECT properties: the session expiry when the session is to be kept.
    func connectProperties() -> PropertyList {
        guard configuration.protocolVersion == .v5, !configuration.cleanStart else { return PropertyList() }
        var list = PropertyList()
        let seconds = UInt32(clamping: configuration.sessionExpiry.wholeSeconds)
        mosquitto_property_add_int32(&list.list, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), seconds)
        return list
    }

    /// Sleeps `delay` unless a stop is requested first; false if it was.
    private func waitBeforeReconnect(_ delay: Duration) -> Bool {
        let deadline = ContinuousClock.now + delay
        while !stopRequested {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return true }
            _ = eventLoop.wait(socket: nil, reading: false, writing: { false }, timeout: left)
        }
        return false
    }

    private var stopRequested: Bool {
        state.withLock { $0.stopRequestedAt != nil }
    }

    private var fatalError: ClientError? {
        state.withLock { $0.fatalError }
    }

    private func describeDisconnect(_ outcome: ConnectionOutcome) -> String {
        let libraryDetail = state.withLock { state -> String? in
            defer { state.lastLibraryError = nil }
            return state.lastLibraryError
        }
        var reason = Library.describe(outcome.code, errno: outcome.errno)
        if let libraryDetail { reason += " (\(libraryDetail))" }
        return reason
    }

    private func logDisconnect(url: BrokerURL, reason: String, outcome: ConnectionOutcome, delay: Duration, attempt: Int) {
        let wait = Library.format(delay)
        switch outcome.stage {
        case .connectFailed:
            let which = configuration.fallbackURLs.isEmpty ? "the MQTT broker at \(url)" : "any of the MQTT brokers (\(configuration.urls.map(\.description).joined(separator: ", ")))"
            logger.warning("cannot reach \(which): \(reason); retrying in \(wait) (attempt \(attempt + 1))")
        case .endedBeforeAccepted:
            logger.warning("the MQTT broker at \(url) closed the connection before accepting it: \(reason); retrying in \(wait)")
        case .served:
            logger.warning("lost the connection to the MQTT broker at \(url): \(reason); reconnecting in \(wait)")
        }
    }

    /// Ends the run: fails what can no longer complete, finishes the streams, resumes ``run()``.
    /// Once: a stop during a connect attempt finishes early, and the network thread's own call
    /// when the attempt returns does nothing.
    func finish() {
        guard state.withLock({ state in defer { state.finished = true }; return !state.finished }) else { return }
        failAllAcknowledgements()
        let (completion, fatal, sinks) = state.withLock { state in
            state.phase = .stopped
            state.isConnected = false
            state.connectionAnnounced = false
            state.emit(.stopped)
            defer { state.runCompletion = nil }
            return (state.runCompletion, state.fatalError, state.takeEventSinks())
        }
        sinks.forEach { $0.finish() }
        logger.info("MQTT client stopped")
        messageSink.finish()
        if let fatal {
            completion?.resume(throwing: fatal)
        } else {
            completion?.resume()
        }
    }
}

/// One connection attempt's outcome, between the thread that makes it and the network thread,
/// which may stop waiting for it.
final class ConnectAttempt: Sendable {
    enum Ending { case awaited, abandoned }

    private let outcome = Mutex<(result: (Int32, Int32)?, abandoned: Bool)>((nil, false))

    /// The result, once the attempt returned.
    var result: (Int32, Int32)? { outcome.withLock { $0.result } }

    /// The attempt returned (its thread); says whether anyone still waits for it.
    func finish(_ rc: Int32, _ savedErrno: Int32) -> Ending {
        outcome.withLock { outcome in
            outcome.result = (rc, savedErrno)
            return outcome.abandoned ? .abandoned : .awaited
        }
    }

    /// The network thread stops waiting; false if the result came first (take it instead).
    func abandon() -> Bool {
        outcome.withLock { outcome in
            guard outcome.result == nil else { return false }
            outcome.abandoned = true
            return true
        }
    }
}

/// `TCP_CORK` on a connection's socket for one turn of the loop: what libmosquitto writes packet
/// by packet in that turn (a PUBACK, a value, an acknowledgement) leaves in one segment when
/// ``release()`` uncorks. On a socket that is not TCP the calls fail and change nothing.
struct Cork {
    private let socket: Int32

    init(_ socket: Int32) {
        self.socket = socket
        set(1)
    }

    /// Uncorks: what is queued leaves now.
    func release() {
        set(0)
    }

    private func set(_ on: Int32) {
        var value = on
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}

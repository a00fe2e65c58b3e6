internal import CMosquitto
import Foundation
import Logging
import Timing

/// libmosquitto's callbacks. They run on the client's network thread.
///
/// They are registered from this nonisolated enum on purpose: a C callback closure written inside
/// an actor-isolated method inherits the isolation and traps at run time on libmosquitto's thread.
/// Each callback copies what it needs out of libmosquitto's memory before returning.
enum Callbacks {
    static func install(on pointer: OpaquePointer, owner: UnsafeMutableRawPointer) throws(ConfigurationError) {
        mosquitto_user_data_set(pointer, owner)
        mosquitto_connect_v5_callback_set(pointer) { _, owner, code, flags, _ in
            Callbacks.client(owner).didReceiveConnack(code: code, sessionPresent: flags & 1 == 1)
        }
        mosquitto_publish_v5_callback_set(pointer) { _, owner, mid, reasonCode, _ in
            Callbacks.client(owner).deliver(Client.Acknowledgement(reasonCode: reasonCode), for: mid)
        }
        mosquitto_subscribe_v5_callback_set(pointer) { _, owner, mid, count, granted, _ in
            let codes = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            Callbacks.client(owner).deliver(Client.Acknowledgement(grantedQoS: codes), for: mid)
        }
        mosquitto_unsubscribe_v5_callback_set(pointer) { _, owner, mid, _ in
            Callbacks.client(owner).deliver(Client.Acknowledgement(), for: mid)
        }
        mosquitto_message_v5_callback_set(pointer) { _, owner, message, properties in
            guard let message else { return }
            Callbacks.client(owner).didReceive(message.pointee, properties: properties)
        }
    }

    /// Takes libmosquitto's log lines, or stops taking them. libmosquitto formats a line only
    /// when someone takes them, and it writes a few per packet (`sending PUBLISH ...`,
    /// `received PUBACK ...`): a `malloc`, a `vsnprintf` and a copy each, about a tenth of the
    /// gateway's CPU time per set.
    static func followLog(on pointer: OpaquePointer, _ follow: Bool) {
        guard follow else {
            mosquitto_log_callback_set(pointer, nil)
            return
        }
        mosquitto_log_callback_set(pointer) { _, owner, level, text in
            guard let text else { return }
            Callbacks.client(owner).didLog(level: level, String(cString: text))
        }
    }

    static func client(_ owner: UnsafeMutableRawPointer?) -> Client {
        Unmanaged<Client>.fromOpaque(owner!).takeUnretainedValue()
    }
}

extension Client {
    /// CONNACK: on success bring the broker's subscriptions up to date and announce the
    /// connection; on a refusal that retrying cannot fix, stop.
    func didReceiveConnack(code: Int32, sessionPresent: Bool) {
        guard code == 0 else {
            refuseConnection(code: code)
            return
        }
        // libmosquitto's own lines matter while connecting (a TLS or socket error's detail); once
        // connected they are mostly a line per packet, wanted only at trace level.
        if logger.logLevel > .trace { Callbacks.followLog(on: handle.pointer, false) }
        let (toSubscribe, toUnsubscribe) = state.withLock { state in
            // Every subscription is made again at every connect, also when the broker kept the
            // session: it then sends the retained messages again, as after a clean start.
            // Connected from here on: a subscribe() call after this sends its own SUBSCRIBE.
            let toSubscribe = Array(state.subscriptions.values)
            let toUnsubscribe = sessionPresent ? Array(state.unsubscribedWhileDisconnected) : []
            state.unsubscribedWhileDisconnected.removeAll()
            state.isConnected = true
            state.sessionPresent = sessionPresent
            state.acceptedAt = .now
            state.redeliveries.connectionBegan(sessionPresent: sessionPresent)
            return (toSubscribe, toUnsubscribe)
        }
        // On the network thread, as every subscribe and unsubscribe: nothing falls in between.
        for subscription in toSubscribe { sendSubscribe(subscription, waiter: nil) }
        for filter in toUnsubscribe { sendUnsubscribe(filter, waiter: nil) }
        logger.info("connected to the MQTT broker at \(currentURL) (MQTT \(configuration.protocolVersion.rawValue), client id \(configuration.clientID))")
        let consumer = state.withLock { state in
            state.connectionAnnounced = true
            state.emit(.connected(sessionPresent: sessionPresent))
            return state.consumer
        }
        consumer?.connection(.connected(sessionPresent: sessionPresent)) // before any message of this connection
    }

    private func refuseConnection(code: Int32) {
        let reason = String(cString: configuration.protocolVersion == .v5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code))
        guard ConnackCode.isFatal(code) else {
            state.withLock { $0.lastLibraryError = "broker answered: \(reason)" }
            return
        }
        let error = ClientError(.refused(code: code, reason: reason))
        state.withLock { $0.fatalError = error }
        var message = "the MQTT broker at \(currentURL) refused the connection: \(reason)"
        if error.isAuthenticationFailure {
            message += configuration.effectiveUsername.map { " (user \"\($0)\"); check the user name and password" }
                ?? " (no user name was given); check the broker's credentials"
        }
        logger.error("\(message)")
        mosquitto_disconnect_v5(handle.pointer, 0, nil)
    }

    /// A message from the broker: copy it out and hand it to the direct consumer, if there is
    /// one, or to ``messages`` (never dropped: the network loop stops reading while the consumer
    /// of ``messages`` is behind).
    func didReceive(_ raw: mosquitto_message, properties: OpaquePointer?) {
        guard let topicPointer = raw.topic, let topic = try? TopicName(String(cString: topicPointer)) else {
            logger.warning("dropped a received message whose topic is not valid")
            return
        }
        let payload = raw.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(raw.payloadlen))) } ?? []
        var message = Message(
            topic: topic,
            payload: payload,
            qos: QoS(rawValue: raw.qos) ?? .atMostOnce,
            retain: raw.retain,
            properties: PropertyList.read(properties)
        )
        message.receivedAt = .now
        // One look under the lock: whether it is new, and who takes it.
        let (isNew, consumer) = state.withLock { state in
            (raw.qos != QoS.atLeastOnce.rawValue || state.redeliveries.admit(mid: raw.mid, message), state.consumer)
        }
        guard isNew else {
            // Handed on at its first delivery; libmosquitto has acknowledged it again.
            counters.redelivered()
            logger.debug("the broker delivered message \(raw.mid) on \(topic) again after the reconnect; it was handled at its first delivery")
            return
        }
        counters.received()
        if let consumer {
            consumer.message(message)
        } else {
            messageSink.push(message)
        }
    }

    /// libmosquitto's own log lines: errors are kept to explain the next disconnect.
    func didLog(level: Int32, _ text: String) {
        switch level {
        case MOSQ_LOG_ERR:
            state.withLock { $0.lastLibraryError = text }
            logger.debug("libmosquitto: \(text)")
        case MOSQ_LOG_WARNING:
            logger.debug("libmosquitto: \(text)")
        default:
            logger.trace("libmosquitto: \(text)")
        }
    }
}

/// Process-wide libmosquitto set-up and error texts.
enum Library {
    private static let initialized: Void = {
        mosquitto_lib_init()
    }()

    /// Calls `mosquitto_lib_init` once per process.
    static func initialize() {
        _ = initialized
    }

    static func check(_ rc: Int32, _ what: String) throws(ConfigurationError) {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw ConfigurationError("libmosquitto refused the \(what) setting: \(describe(rc, errno: errno))")
    }

    static func error(_ function: String, _ rc: Int32) -> ClientError {
        ClientError(.library(function: function, code: rc, message: describe(rc, errno: errno)))
    }

    /// A libmosquitto result code in words; `MOSQ_ERR_ERRNO` is explained by the saved errno.
    static func describe(_ rc: Int32, errno savedErrno: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue {
            return String(cString: strerror(savedErrno)).lowercased()
        }
        if rc == MOSQ_ERR_NO_CONN.rawValue { return "the connection was closed" }
        if rc == MOSQ_ERR_CONN_LOST.rawValue { return "the connection was lost" }
        if rc == MOSQ_ERR_KEEPALIVE.rawValue { return "the broker stopped answering (keep-alive timeout)" }
        return String(cString: mosquitto_strerror(rc)).lowercased()
    }

    /// `1.5 s`, `250 ms`.
    static func format(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        let seconds = Double(milliseconds) / 1000
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

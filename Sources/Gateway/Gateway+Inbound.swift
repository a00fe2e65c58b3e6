import Foundation
import HomeModel
import MQTT
import Wire

/// Inbound routing: every message under the base lands here first.
extension Gateway {
    /// Routes one received message: the synchronisation marker, management requests, sets and
    /// gets; retained messages seen while synchronising are remembered for the comparison.
    func handle(_ message: Message) {
        let topic = message.topic.string
        guard topic.hasPrefix(base + "/") else {
            if let prefix = configuration.homeAssistantPrefix, topic == "\(prefix)/status", message.payloadString == "online" {
                republishDiscovery()
            }
            return
        }
        let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard let first = levels.first else { return }
        if first == "$sync" {
            if levels.count == 2, String(levels[1]) == sync?.marker { finishSync() }
            return
        }
        if message.retain {
            // What the broker holds retained (compared with the tree at the next sync marker).
            seenRetained[topic] = message.payload.isEmpty ? nil : message.payload
        }
        let isRequest = first == "$request"
        guard isRequest || levels.last == "set" || levels.last == "get" || levels.last == "execute" else { return }
        if message.retain {
            if message.payload.isEmpty || isReplay(topic, message.payload) { return } // our own clearing, or a second copy
        }
        if isRequest {
            handleRequest(levels: Array(levels.dropFirst()), message: message)
            return
        }
        if handleShortcut(levels: Array(levels), message: message) { return }
        let last = levels[levels.count - 1]
        guard last != "execute" else { return }
        handleCommand(last == "set" ? .set : .get, levels: Array(levels.dropLast()), message: message)
    }

    /// Whether a retained command or request is a second copy of one already run on this
    /// connection: while a connection synchronises, one sent while the gateway was away can arrive
    /// twice (queued in the kept session, then again as retained when the subscription is made).
    /// After the synchronisation every retained command runs.
    private func isReplay(_ topic: String, _ payload: [UInt8]) -> Bool {
        guard sync != nil else { return false }
        return !executedRetainedCommands.insert(topic + "\u{0}" + String(decoding: payload, as: UTF8.self)).inserted
    }

    /// Where and how a command's acknowledgement goes.
    struct Reply: Sendable {
        /// The command's topic plus `/result`, as the sender spelled it.
        let resultTopic: String
        let responseTopic: TopicName?
        let correlationData: [UInt8]?
        /// The `id` the sender gave, echoed.
        let id: JSON?
        let retained: Bool
        /// When the MQTT client received the command.
        let received: ContinuousClock.Instant

        init(to message: Message, id: JSON?) {
            resultTopic = message.topic.string + "/result"
            responseTopic = message.properties.responseTopic
            correlationData = message.properties.correlationData
            self.id = id.flatMap { $0.isScalar ? $0 : nil }
            retained = message.retain
            received = message.receivedAt ?? .now
        }
    }

    /// Sends an acknowledgement on the result topic and, when asked for, the response topic.
    func acknowledge(_ reply: Reply, _ body: [String: JSON], status: HAPStatus = .success) {
        var body = body
        if let id = reply.id { body["id"] = id }
        if reply.retained { body["retained"] = true }
        let payload = JSON.object(body).encoded()
        send(reply.resultTopic, payload, retain: false)
        if let responseTopic = reply.responseTopic {
            send(responseTopic.string, payload, retain: false, properties: .init(correlationData: reply.correlationData, contentType: "application/json"))
        }
        let duration = reply.received.duration(to: .now)
        timings.record(duration)
        metrics.recordAcknowledgement(status: status.rawValue, seconds: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// A failed command's acknowledgement: `{"ok": false, "status", "error", "message"}`.
    func acknowledge(_ reply: Reply, failure status: HAPStatus, _ message: String) {
        acknowledge(reply, ["ok": false, "status": .int(status.rawValue), "error": .string(status.name), "message": .string(message)], status: status)
    }

    /// Names the first level of an unresolved topic for the -70409 message.
    func describeUnresolved(levels: [Substring], index: Int, segment: String) -> String {
        let kinds = ["home", "room", "accessory", "service", "characteristic"]
        guard index < kinds.count else {
            return "\(levels.joined(separator: "/")) has more levels than <home>/<room>/<accessory>/<service>/<characteristic>"
        }
        let parent = index == 0 ? "under \(base)" : "in \(levels[0..<index].joined(separator: "/"))"
        return "no \(kinds[index]) \"\(segment)\" \(parent)"
    }
}

extension JSON {
    /// A command's or request's body: the payload as a JSON object, if it is one.
    static func body(_ payload: [UInt8]) -> [String: JSON]? {
        guard let first = payload.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }), first == UInt8(ascii: "{") else { return nil }
        return (try? JSON.parse(payload))?.object
    }

    /// Whether this is a scalar (an `id` or `transaction` to echo).
    var isScalar: Bool {
        switch self {
        case .array, .object, .null: false
        default: true
        }
    }
}

extension JSON {
    /// A characteristic's value as JSON, or null.
    static func value(_ value: HomeModel.Value?) -> JSON {
        value?.json ?? .null
    }
}

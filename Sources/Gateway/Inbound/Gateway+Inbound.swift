import Foundation
import HomeModel
import MQTT
import Wire

/// Inbound routing: every message reaches the engine here, is decoded once by the
/// ``InboundCodec`` and goes to its handler.
extension Gateway {
    /// Routes one received message. Retained messages under the base are remembered for the
    /// synchronisation; a retained command is cleared and runs once.
    func handle(_ message: Message) {
        let inbound = codec.decode(message)
        switch inbound {
        case .foreign:
            return
        case .homeAssistantOnline:
            republishDiscovery()
            return
        case .syncMarker(let marker):
            finishSync(marker: marker)
            return
        default:
            break
        }
        if message.retain {
            brokerHadLastSeen(message)
            // What the broker holds retained (compared with the tree at the next sync marker).
            switch retained.retainedArrived(topic: message.topic.string, payload: message.payload, isCommand: inbound.isCommand) {
            case .recorded: break
            case .skip: return // our own clearing, or a second copy
            case .clearThenRun: send(message.topic, [], retain: true) // a retained command runs once: clear it so it never fires again
            }
        }
        switch inbound {
        case .command(let command): handle(command, from: message)
        case .request(let request): handle(request, from: message)
        case .shortcut(let shortcut): handle(shortcut, from: message)
        case .state, .foreign, .homeAssistantOnline, .syncMarker: break
        }
    }

    /// Where and how a command's acknowledgement goes.
    struct Reply: Sendable {
        /// The command's topic plus `/result`, as the sender spelled it.
        let resultTopic: TopicName
        let responseTopic: TopicName?
        let correlationData: [UInt8]?
        /// The `id` the sender gave, echoed.
        let id: JSON?
        let retained: Bool
        /// When the MQTT client received the command.
        let received: ContinuousClock.Instant

        init(to message: Message, id: JSON?) {
            // A received topic and one more valid level: checked only for length.
            let topic = message.topic.string
            resultTopic = topic.utf8.count <= Self.longestResultPrefix ? TopicName(trusted: topic + "/result") : message.topic
            responseTopic = message.properties.responseTopic
            correlationData = message.properties.correlationData
            self.id = id.flatMap { $0.isScalar ? $0 : nil }
            retained = message.retain
            received = message.receivedAt ?? .now
        }

        /// MQTT's longest topic (65,535 bytes) less `/result`.
        private static let longestResultPrefix = 65_535 - "/result".utf8.count
    }

    /// Sends an acknowledgement on the result topic and, when asked for, the response topic.
    func acknowledge(_ reply: Reply, _ body: [String: JSON], status: HAPStatus = .success) {
        var body = body
        if let id = reply.id { body["id"] = id }
        if reply.retained { body["retained"] = true }
        acknowledge(reply, payload: JSON.object(body).encoded(), status: status)
    }

    /// Sends an acknowledgement's payload, made by the caller with `id` and `retained` in it.
    func acknowledge(_ reply: Reply, payload: [UInt8], status: HAPStatus) {
        send(reply.resultTopic, payload, retain: false)
        if let responseTopic = reply.responseTopic {
            send(responseTopic, payload, retain: false, properties: .init(correlationData: reply.correlationData, contentType: "application/json"))
        }
        let duration = reply.received.duration(to: .now)
        timings.record(duration)
        metrics.recordAcknowledgement(status, after: duration)
    }

    /// A failed command's acknowledgement: `{"ok": false, "status", "error", "message"}`.
    func acknowledge(_ reply: Reply, failure status: HAPStatus, _ message: String) {
        acknowledge(reply, ["ok": false, "status": .int(status.rawValue), "error": .string(status.name), "message": .string(message)], status: status)
    }
}

extension TopicMap {
    /// Names the first level of an unresolved topic (under `base`) for the -70409 message, with
    /// the closest existing segments (`did you mean "brightness"?`) and, when there are few, the
    /// valid ones.
    func describeUnresolved(levels: [Substring], index: Int, segment: String, base: String) -> String {
        let kinds = ["home", "room", "accessory", "service", "characteristic"]
        guard index < kinds.count else {
            return "\(levels.joined(separator: "/")) has more levels than <home>/<room>/<accessory>/<service>/<characteristic>"
        }
        let parent = index == 0 ? "under \(base)" : "in \(levels[0..<index].joined(separator: "/"))"
        let candidates = segments(after: Array(levels[0..<index]))
        var message = "no \(kinds[index]) \"\(segment)\" \(parent)"
        let close = Suggestions.closest(to: segment, among: candidates)
        if !close.isEmpty { message += "; did you mean \(close.map { "\"\($0)\"" }.joined(separator: " or "))?" }
        if !candidates.isEmpty, candidates.count <= 12 { message += " (there: \(candidates.joined(separator: ", ")))" }
        return message
    }
}

/// The names closest to a mistyped one, by edit distance on their canonical forms.
enum Suggestions {
    /// At most three, each within a third of the name's length (at least 2 edits).
    static func closest(to name: String, among candidates: [String]) -> [String] {
        let key = Array(Slug.canonical(name).unicodeScalars)
        guard !key.isEmpty else { return [] }
        let limit = max(2, key.count / 3)
        let scored = candidates.map { ($0, distance(key, Array(Slug.canonical($0).unicodeScalars))) }.filter { $0.1 <= limit }
        return scored.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    /// Levenshtein distance.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension JSON {
    /// A characteristic's value as JSON, or null.
    static func value(_ value: HomeModel.Value?) -> JSON {
        value?.json ?? .null
    }
}

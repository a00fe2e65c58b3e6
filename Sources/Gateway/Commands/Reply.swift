import HomeModel
import MQTT
import Timing
import Wire

/// Where and how a command's acknowledgement goes, and its payload: the body with the sender's
/// `id` echoed and `retained` for a command that came retained, keys in JSON's sorted order.
/// The engine sends it (`Gateway+Commands.swift`, "Acknowledgements").
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

    /// Milliseconds since the command arrived, to a tenth (an acknowledgement's `ms`).
    var millisecondsSinceReceived: Double {
        let milliseconds = received.duration(to: .now).millisecondsValue
        return (milliseconds * 10).rounded() / 10
    }

    /// An acknowledgement's payload: `body` with `id` and `retained`.
    func payload(_ body: [String: JSON]) -> [UInt8] {
        var body = body
        if let id { body["id"] = id }
        if retained { body["retained"] = true }
        return JSON.object(body).encoded()
    }

    /// A failure's payload: `{"ok": false, "status", "error", "message"}` (HAP's status, its name, in words).
    func failurePayload(_ status: HAPStatus, _ message: String) -> [UInt8] {
        payload(["ok": false, "status": .int(status.rawValue), "error": .string(status.name), "message": .string(message)])
    }

    /// A set's or get's success, `{"id", "label", "ms", "ok": true, "retained", "value"}`, written
    /// straight in the order JSON's sorted keys give (the same bytes as ``payload(_:)`` makes of
    /// the object, without building it: every set has one).
    func successPayload(_ value: Value, label: String?, milliseconds: Double) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(64)
        payload.append(UInt8(ascii: "{"))
        if let id {
            payload.append(contentsOf: #""id":"#.utf8)
            id.write(into: &payload)
            payload.append(UInt8(ascii: ","))
        }
        if let label {
            payload.append(contentsOf: #""label":"#.utf8)
            JSON.writeString(label, into: &payload)
            payload.append(UInt8(ascii: ","))
        }
        payload.append(contentsOf: #""ms":"#.utf8)
        payload.append(contentsOf: Self.tenthsText(milliseconds).utf8)
        payload.append(contentsOf: #","ok":true,"#.utf8)
        if retained { payload.append(contentsOf: #""retained":true,"#.utf8) }
        payload.append(contentsOf: #""value":"#.utf8)
        payload.append(contentsOf: value.encoded)
        payload.append(UInt8(ascii: "}"))
        return payload
    }

    /// A number rounded to tenths (``millisecondsSinceReceived``) as JSON writes it (`12`, `0.4`,
    /// `1234.5`), from whole numbers: formatting the double was a twentieth of a set's
    /// acknowledgement.
    static func tenthsText(_ value: Double) -> String {
        guard value >= 0, value < 1e12 else { return JSON.text(of: value) }
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(tenths % 10)"
    }
}

extension CommandMachine.Outcome {
    /// The failure's message as an aggregated acknowledgement lists it; nil for a success.
    var failureMessage: String? {
        switch self {
        case .written, .read: nil
        case .failed(let error): error.message
        case .timedOut(.write): "the device did not confirm the write in time"
        case .timedOut(.read): "the device did not answer the read in time"
        }
    }
}

extension Duration {
    /// The duration as an acknowledgement says it: `5 s`, `2.5 s`.
    var inSeconds: String {
        let value = secondsValue
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

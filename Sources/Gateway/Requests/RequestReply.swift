import MQTT
import Wire

/// Where and how a request's answer goes, as ``Reply`` is for a set: on
/// `<base>/$response/<object>/<verb>` and, when the request gave one, its MQTT 5 Response Topic
/// with its Correlation Data; the answer echoes the request's `transaction`. The engine sends it
/// (`Gateway+Requests.swift`).
struct RequestReply: Sendable {
    /// `<base>/$response/<the request's path>`.
    let responseTopic: String
    let replyTopic: TopicName?
    let correlationData: [UInt8]?
    /// The `transaction` the request gave (a JSON scalar), echoed.
    let transaction: JSON?

    init(to request: Inbound.Request, message: Message, base: String) {
        responseTopic = TopicGrammar.topic(base, .response, request.path)
        replyTopic = message.properties.responseTopic
        correlationData = message.properties.correlationData
        transaction = request.body?["transaction"].flatMap { $0.isScalar ? $0 : nil }
    }

    /// The answer's payload: `answer` with `transaction`.
    func payload(_ answer: [String: JSON]) -> [UInt8] {
        var answer = answer
        if let transaction { answer["transaction"] = transaction }
        return JSON.object(answer).encoded()
    }
}

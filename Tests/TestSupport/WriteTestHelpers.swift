import Foundation
import MQTT

/// Helpers for the end-to-end tests of writes, reads and their acknowledgements.
extension GatewayFixture {
    /// A client of the test's own, connected to the fixture's broker.
    public func client(_ id: String) async throws -> TestClient {
        try await TestClient.connect(TestClient.configuration(broker.url, id: id))
    }

    /// Publishes `payload` to `topic` (a set or get) and returns the acknowledgement from
    /// `<topic>/result` with its JSON text.
    public func acknowledgement(_ topic: String, _ payload: String, retain: Bool = false,
                                timeout: Duration = HangGuard.standard) async throws -> JSONReply {
        let client = try await client("commander")
        try await client.subscribe("\(topic)/result")
        try await client.publish(topic, payload, qos: .atLeastOnce, retain: retain)
        let message = try await client.inbox.first(on: "\(topic)/result", timeout: timeout)
        await client.stop()
        return try JSONReply(message)
    }

    /// Sends `$request/<path>` with `body` and waits for the answer on `$response/<path>`.
    public func answer(_ path: String, _ body: String) async throws -> JSONReply {
        let client = try await client("requester")
        try await client.subscribe("\(base)/$response/\(path)")
        try await client.publish("\(base)/$request/\(path)", body)
        let message = try await client.inbox.first(on: "\(base)/$response/\(path)")
        await client.stop()
        return try JSONReply(message)
    }

    /// The `iid` of the characteristic at `topic`, from the retained `$layout`.
    public func iid(ofCharacteristicAt topic: String) async throws -> Int {
        let layout = try await layout()
        for home in layout["homes"] as? [[String: Any]] ?? [] {
            for accessory in home["accessories"] as? [[String: Any]] ?? [] {
                for service in accessory["services"] as? [[String: Any]] ?? [] {
                    for characteristic in service["characteristics"] as? [[String: Any]] ?? []
                    where characteristic["topic"] as? String == topic {
                        if let iid = (characteristic["iid"] as? NSNumber)?.intValue { return iid }
                    }
                }
            }
        }
        throw FixtureError("$layout has no characteristic with topic \(topic)")
    }

}

/// A JSON object received over MQTT (an acknowledgement or a request's answer): the message,
/// its text, and its fields, with their JSON spelling kept apart (`true` is not `1`).
public struct JSONReply: CustomStringConvertible {
    public let message: Message
    public let text: String
    public let object: [String: Any]

    public init(_ message: Message) throws {
        self.message = message
        text = message.payloadString
        object = try GatewayFixture.decode(message.payload)
    }

    public subscript(key: String) -> Any? { object[key] }

    /// The field `key` as JSON text (`true`, `80`, `21.5`, `"abc"`, `null`), nil when absent.
    public func json(_ key: String) -> String? {
        object[key].map(JSONText.of)
    }

    public var ok: Bool? { json("ok").flatMap { $0 == "true" ? true : $0 == "false" ? false : nil } }
    public var status: Int? { (object["status"] as? NSNumber)?.intValue }
    public var error: String? { object["error"] as? String }
    public var messageText: String? { object["message"] as? String }

    public var description: String { "\(message.topic.string): \(text)" }
}

/// JSON text of decoded JSON values, telling booleans from numbers.
public enum JSONText {
    public static func of(_ value: Any) -> String {
        switch value {
        case is NSNull:
            return "null"
        case let text as String:
            return "\"\(text)\""
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return number.boolValue ? "true" : "false" }
            let double = number.doubleValue
            if double == double.rounded(), abs(double) < 1e15 { return String(Int64(double)) }
            return "\(double)"
        default:
            if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) {
                return String(decoding: data, as: UTF8.self)
            }
            return "\(value)"
        }
    }
}

/// Runs `mosquitto_rr` (the Mosquitto request/response client) to completion.
public enum MosquittoRR {
    /// Runs it with `arguments`; returns its exit status and output.
    public static func run(_ arguments: [String], timeout: Duration = HangGuard.standard) async throws -> (status: Int32, output: String) {
        let binary = try Executable.locate("mosquitto_rr", install: "run scripts/setup")
        let process = try ChildProcess(binary, arguments)
        let status = try await process.waitForExit(timeout: timeout)
        // The exit is seen by its own thread; the output thread may still be finishing the last
        // read: wait for the end of the line it prints.
        let output = try await process.output.wait(timeout: HangGuard.standard, for: "mosquitto_rr's output") { $0.hasSuffix("\n") ? $0 : nil }
        return (status, output)
    }
}

extension TestClient {
    /// Sets `characteristic` (a value topic) to `value` at QoS 2 with a response topic and its own
    /// correlation data, and checks it is acknowledged ok exactly once: a second set, sent after
    /// the first was answered, is answered after any copy of the first answer would have come.
    /// The client must be subscribed to `replies`.
    public func setExactlyOnce(_ characteristic: String, value: Int, replies: String) async throws {
        func send(_ tag: String, _ value: Int) async throws {
            var properties = Message.Properties()
            properties.responseTopic = try TopicName(replies)
            properties.correlationData = Array(tag.utf8)
            try await publish("\(characteristic)/set", "\(value)", qos: .exactlyOnce, properties: properties)
        }
        let first = Array("first-\(value)".utf8), second = Array("second-\(value)".utf8)
        try await send("first-\(value)", value)
        let answer = try await inbox.first(timeout: HangGuard.standard) { $0.properties.correlationData == first }
        guard answer.payloadString.contains("\"ok\":true") else { throw FixtureError("the set of \(value) failed: \(answer.payloadString)") }
        try await send("second-\(value)", value + 1)
        _ = try await inbox.first(timeout: HangGuard.standard) { $0.properties.correlationData == second }
        let copies = inbox.all.filter { $0.properties.correlationData == first }.count
        guard copies == 1 else { throw FixtureError("the set of \(value) was acknowledged \(copies) times") }
    }
}

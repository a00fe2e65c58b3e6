import Foundation
import MQTT

/// Helpers for the end-to-end tests of the MQTT tree (`Tests/EndToEndTests/TreeContractTests.swift`):
/// waiting for what the gateway publishes without sleeping, reading `$layout`, editing
/// configuration texts.
extension GatewayFixture {
    /// A round trip through the gateway: a `$request` it does not know, answered at once. The
    /// gateway publishes everything on one connection, in order, and the broker hands one
    /// publisher's messages to a subscriber in order; so once the answer is back, and the watcher
    /// (subscribed to the whole base) has it too, the broker has stored everything the gateway
    /// published before it handled the request, and the watcher has received it.
    public func roundTrip() async throws {
        let transaction = UUID().uuidString
        let answer = try await request("tree-test/round-trip", "{\"transaction\": \"\(transaction)\"}")
        guard answer["error"] as? String == "unknown-request", answer["transaction"] as? String == transaction else {
            throw FixtureError("the round trip was answered unexpectedly: \(answer)")
        }
        let topic = "\(base)/$response/tree-test/round-trip"
        _ = try await watcher.inbox.first { $0.topic.string == topic && $0.payloadString.contains(transaction) }
    }

    /// Waits until `topic` holds a retained message with `payload`, as a fresh subscriber sees it
    /// (at once if the broker has it already, else when the gateway publishes it).
    public func waitUntilRetained(_ topic: String, equals payload: String, timeout: Duration = HangGuard.standard) async throws {
        let reader = try await TestClient.connect(TestClient.configuration(broker.url, id: "tree-reader"))
        let outcome: Result<Message, any Error>
        do {
            try await reader.subscribe(topic, retainAsPublished: true)
            outcome = .success(try await reader.inbox.first(timeout: timeout) { $0.topic.string == topic && $0.retain && $0.payloadString == payload })
        } catch {
            outcome = .failure(error)
        }
        await reader.stop()
        _ = try outcome.get()
    }

    /// Publishes as a client of its own (not the gateway, not the watcher), QoS 1, and waits for
    /// the broker's acknowledgement.
    public func publishAsAnotherClient(_ topic: String, _ payload: String, retain: Bool = false) async throws {
        let other = try await TestClient.connect(TestClient.configuration(broker.url, id: "tree-other"))
        try await other.publish(topic, payload, qos: .atLeastOnce, retain: retain)
        await other.stop()
    }

    /// The watcher's messages so far that satisfy `predicate`.
    public func watched(where predicate: (Message) -> Bool) -> [Message] {
        watcher.inbox.all.filter(predicate)
    }

    /// Waits for the watcher's next message satisfying `predicate` after the `already` ones it
    /// had (count them with ``watched(where:)`` before causing the message).
    @discardableResult
    public func nextWatched(after already: Int, timeout: Duration = HangGuard.standard,
                            where predicate: @escaping @Sendable (Message) -> Bool) async throws -> Message {
        let matches = try await watcher.inbox.collect(already + 1, timeout: timeout, where: predicate)
        return matches[already]
    }

    /// The `$events` the watcher received, decoded, of `kind` (all kinds when nil).
    public func events(_ kind: String? = nil) -> [[String: Any]] {
        watcher.inbox.all.filter { $0.topic.string == "\(base)/$events" }.compactMap { message in
            guard let event = try? Self.decode(message.payload) else { return nil }
            return kind == nil || event["event"] as? String == kind ? event : nil
        }
    }

    /// Waits until the watcher received an `$events` message of `kind` that satisfies `predicate`.
    @discardableResult
    public func waitForEvent(_ kind: String, timeout: Duration = HangGuard.standard,
                             where predicate: @escaping @Sendable ([String: Any]) -> Bool = { _ in true }) async throws -> [String: Any] {
        let topic = "\(base)/$events"
        let message = try await watcher.inbox.first(timeout: timeout) { message in
            guard message.topic.string == topic, let event = try? GatewayFixture.decode(message.payload) else { return false }
            return event["event"] as? String == kind && predicate(event)
        }
        return try Self.decode(message.payload)
    }

    /// A predicate for ``watched(where:)`` and ``nextWatched(after:timeout:where:)``: a message on
    /// `topic` with `payload`, retained or not as `retained` says (either when nil).
    public static func isMessage(on topic: String, payload: String, retained: Bool? = nil) -> @Sendable (Message) -> Bool {
        { message in
            message.topic.string == topic && message.payloadString == payload && (retained == nil || message.retain == retained)
        }
    }

    /// After the gateway exited by itself or was killed: stops the watcher, and the broker unless
    /// `keepBroker` (``stop(keepBroker:)`` would signal a process that is gone).
    public func stopAfterGatewayExit(keepBroker: Bool = false) async {
        await watcher.stop()
        if !keepBroker { await broker.stop() }
    }
}

extension HomeGateProcess {
    /// Waits until the output contains `text` at least `times` times (a line logged again, after
    /// a reconnect or a reload).
    @discardableResult
    public func waitForOutput(containing text: String, times: Int, timeout: Duration = HangGuard.standard) async throws -> String {
        try await child.output.wait(timeout: timeout, for: "homegate to print \"\(text)\" \(times) times") { output in
            output.components(separatedBy: text).count - 1 >= times ? output : nil
        }
    }

    /// How many times the output contains `text` so far.
    public func occurrences(of text: String) -> Int {
        output.components(separatedBy: text).count - 1
    }
}

/// Reading a decoded `$layout`.
public enum TreeLayout {
    public typealias Object = [String: Any]

    public static func homes(_ layout: Object) -> [Object] {
        layout["homes"] as? [Object] ?? []
    }

    public static func accessories(_ layout: Object) -> [Object] {
        homes(layout).flatMap { $0["accessories"] as? [Object] ?? [] }
    }

    public static func accessory(_ id: String, in layout: Object) -> Object? {
        accessories(layout).first { $0["id"] as? String == id }
    }

    public static func services(_ accessory: Object) -> [Object] {
        accessory["services"] as? [Object] ?? []
    }

    public static func characteristics(_ service: Object) -> [Object] {
        service["characteristics"] as? [Object] ?? []
    }

    /// The first characteristic of `type` of accessory `id`.
    public static func characteristic(_ type: String, of id: String, in layout: Object) -> Object? {
        guard let accessory = accessory(id, in: layout) else { return nil }
        return services(accessory).flatMap(characteristics).first { $0["type"] as? String == type }
    }

    /// Every topic in the layout (homes, rooms, accessories, services, characteristics).
    public static func allTopics(_ layout: Object) -> [String] {
        var topics: [String] = []
        for home in homes(layout) {
            topics += [home["topic"] as? String].compactMap { $0 }
            topics += (home["rooms"] as? [Object] ?? []).compactMap { $0["topic"] as? String }
            for accessory in home["accessories"] as? [Object] ?? [] {
                topics += [accessory["topic"] as? String].compactMap { $0 }
                for service in services(accessory) {
                    topics += [service["topic"] as? String].compactMap { $0 }
                    topics += characteristics(service).compactMap { $0["topic"] as? String }
                }
            }
        }
        return topics
    }
}

/// JSON text helpers for the tree tests.
public enum TreeJSON {
    /// A decoded JSON boolean (nil for numbers, even 0 and 1, and everything else).
    public static func bool(_ value: Any?) -> Bool? {
        guard isBool(value), let number = value as? NSNumber else { return nil }
        return number.boolValue
    }

    /// Whether a decoded JSON value is a boolean (not a number).
    public static func isBool(_ value: Any?) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    /// A decoded JSON number as a Double (nil for booleans and everything else).
    public static func number(_ value: Any?) -> Double? {
        guard let number = value as? NSNumber, !isBool(number) else { return nil }
        return number.doubleValue
    }

    /// The JSON text of a decoded JSON value (nil when absent), to compare values of any kind.
    public static func text(of value: Any?) -> String? {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON scalar payload (`true`, `42`, `21.5`, `"text"`), decoded.
    public static func scalar(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
}

/// Configuration texts for the tree tests.
public enum TreeConfig {
    /// `text` with each `(old, new)` replaced (every occurrence); fails if an `old` is not in it,
    /// so an edit can never silently do nothing.
    public static func edit(_ text: String, _ replacements: [(String, String)]) throws -> String {
        var result = text
        for (old, new) in replacements {
            guard result.contains(old) else { throw FixtureError("the configuration has no \"\(old)\" to replace") }
            result = result.replacingOccurrences(of: old, with: new)
        }
        return result
    }

    /// The text of `config/demo.yml`.
    public static func demo() throws -> String {
        try GatewayFixture.demoText()
    }

    /// A configuration with one home, `Test Home` (rooms `rooms`), the given accessories (YAML
    /// list items indented by 6 spaces) and optional top-level sections.
    public static func home(rooms: [String], accessories: String, sections: String = "") -> String {
        """
        base_topic: homegate
        log_level: info
        mqtt:
          url: mqtt://127.0.0.1:1883
        \(sections)
        homes:
          - name: Test Home
            primary: true
            rooms: [\(rooms.joined(separator: ", "))]
            accessories:
        \(accessories)
        """
    }
}

import Foundation
import MQTT
import Testing
import TestSupport

/// The MQTT contract's lines about writes, reads and acknowledgements (design sections 3, 4 and
/// 9), each proved against a real Mosquitto and the real `homegate run`.
@Suite("writes, gets and acknowledgements, end to end", .startsProcesses)
struct WriteContractTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb"
    static let readingLamp = "homegate/demo-home/living-room/reading-lamp/lightbulb"
    static let lock = "homegate/demo-home/hallway/front-door-lock/lock-mechanism"
    static let thermostat = "homegate/demo-home/bedroom/bedroom-thermostat/thermostat"
    static let bedsideLamp = "homegate/demo-home/bedroom/bedside-lamp"
    static let ceilingLight = "homegate/demo-home/living-room/ceiling-light"

    /// A small home of two lamps: `slow-lamp` takes `latency` ms to confirm a write,
    /// `quick-lamp` answers at once; `gateway` is the `gateway:` section's flow mapping.
    static func labHome(gateway: String, latency: Int) -> String {
        """
        base_topic: homegate
        gateway: \(gateway)
        homes:
          - name: Test Home
            primary: true
            rooms: [Lab]
            accessories:
              - id: slow-lamp
                name: Slow Lamp
                room: Lab
                latency_ms: \(latency)
                services:
                  - type: lightbulb
                    characteristics:
                      on: false
                      brightness: 10
              - id: quick-lamp
                name: Quick Lamp
                room: Lab
                services:
                  - type: lightbulb
                    characteristics:
                      on: false
        """
    }

    static let slowBrightness = "homegate/test-home/lab/slow-lamp/lightbulb/brightness"
    static let quickOn = "homegate/test-home/lab/quick-lamp/lightbulb/on"

    /// Checks a failed acknowledgement: `ok` false, the HAP status and its name, a message.
    static func expectFailure(_ ack: JSONReply, _ status: Int, _ error: String, _ what: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ack.ok == false, "\(what): \(ack)", sourceLocation: sourceLocation)
        #expect(ack.status == status, "\(what): \(ack)", sourceLocation: sourceLocation)
        #expect(ack.error == error, "\(what): \(ack)", sourceLocation: sourceLocation)
        #expect(ack.messageText?.isEmpty == false, "\(what): \(ack)", sourceLocation: sourceLocation)
        #expect(ack["value"] == nil, "\(what): a failure carries no value: \(ack)", sourceLocation: sourceLocation)
    }

    /// Messages the fixture's watcher received on `topic` so far.
    static func received(_ fixture: GatewayFixture, on topic: String) -> [Message] {
        fixture.watcher.inbox.all.filter { $0.topic.string == topic }
    }

    /// Waits until the watcher saw the acknowledgement on `resultTopic` carrying `id` (JSON text).
    @discardableResult
    static func watchedAcknowledgement(_ fixture: GatewayFixture, on resultTopic: String, id: String) async throws -> Message {
        try await fixture.watcher.inbox.first { message in
            message.topic.string == resultTopic && (try? JSONReply(message))?.json("id") == id
        }
    }

    // MARK: - Sets and their payload forms

    @Test("set: JSON scalars, on/off/true/false/1/0 in any case, {\"value\", \"id\"} with a text or numeric id, floats, uint8 valid values")
    func payloadForms() async throws {
        let fixture = try await GatewayFixture.demo()
        let on = Self.lamp + "/on"
        let forms: [(payload: String, value: String)] = [
            ("on", "true"), ("off", "false"), ("ON", "true"), ("Off", "false"), ("1", "true"), ("0", "false"),
            ("true", "true"), ("false", "false"), ("TRUE", "true"), ("False", "false"), ("oN", "true"), ("OFF", "false"),
            (#"{"value": true, "id": "b1"}"#, "true"), (#"{"value": "off"}"#, "false"),
        ]
        for form in forms {
            let ack = try await fixture.acknowledgement(on + "/set", form.payload)
            #expect(ack.ok == true, "payload \(form.payload): \(ack)")
            #expect(ack.json("value") == form.value, "payload \(form.payload): \(ack)")
            #expect(ack["ms"] is NSNumber, "payload \(form.payload): \(ack)")
            #expect(ack["retained"] == nil, "payload \(form.payload): \(ack)")
            #expect(try await fixture.retained()[on] == form.value, "payload \(form.payload)")
        }

        let brightness = Self.lamp + "/brightness"
        var ack = try await fixture.acknowledgement(brightness + "/set", "80")
        #expect(ack.ok == true && ack.json("value") == "80" && ack["id"] == nil, "\(ack)")
        #expect(try await fixture.retained()[brightness] == "80")

        ack = try await fixture.acknowledgement(brightness + "/set", #"{"value": 55, "id": "abc"}"#)
        #expect(ack.ok == true && ack.json("value") == "55" && ack.json("id") == #""abc""#, "\(ack)")
        #expect(try await fixture.retained()[brightness] == "55")

        ack = try await fixture.acknowledgement(brightness + "/set", #"{"value": 56, "id": 7}"#)
        #expect(ack.ok == true && ack.json("value") == "56" && ack.json("id") == "7", "a numeric id is echoed as a number: \(ack)")
        #expect(try await fixture.retained()[brightness] == "56")

        let hue = Self.lamp + "/hue"
        ack = try await fixture.acknowledgement(hue + "/set", "215.0")
        #expect(ack.ok == true && ack.json("value") == "215", "\(ack)")
        #expect(try await fixture.retained()[hue] == "215")

        let target = Self.thermostat + "/target-temperature"
        ack = try await fixture.acknowledgement(target + "/set", "21.5")
        #expect(ack.ok == true && ack.json("value") == "21.5", "\(ack)")
        #expect(try await fixture.retained()[target] == "21.5")

        let lockTarget = Self.lock + "/lock-target-state"
        ack = try await fixture.acknowledgement(lockTarget + "/set", "0")
        #expect(ack.ok == true && ack.json("value") == "0", "\(ack)")
        #expect(try await fixture.retained()[lockTarget] == "0")
        try await fixture.stop()
    }

    // MARK: - Where and when acknowledgements arrive

    @Test("the acknowledgement arrives on <topic>/result and on the MQTT 5 Response Topic with the Correlation Data echoed, never retained")
    func responseTopic() async throws {
        let fixture = try await GatewayFixture.demo()
        let client = try await fixture.client("rpc")
        let reply = "replies/\(UUID().uuidString)"
        try await client.subscribe(reply)
        let cases: [(topic: String, payload: String, ok: Bool)] = [
            (Self.lamp + "/on/set", "on", true),
            (Self.lamp + "/brightness/set", #"{"value": 150, "id": "too-bright"}"#, false),
            (Self.lamp + "/brightness/get", "", true),
            (Self.lamp + "/nothing/set", "1", false),
        ]
        let replyTopic = try TopicName(reply)
        for (number, item) in cases.enumerated() {
            try await client.subscribe(item.topic + "/result")
            let correlation: [UInt8] = [0x00, 0xFF, UInt8(number), 0x7B]
            try await client.publish(item.topic, item.payload, properties: .init(responseTopic: replyTopic, correlationData: correlation))
            let answer = try await client.inbox.first { $0.topic.string == reply && $0.properties.correlationData == correlation }
            let result = try await client.inbox.first(on: item.topic + "/result")
            #expect(answer.payload == result.payload, "\(item.topic): the same acknowledgement on both paths")
            #expect(try JSONReply(answer).ok == item.ok, "\(item.topic): \(answer.payloadString)")
            #expect(!answer.retain && !result.retain)
            let watched = try await fixture.watcher.inbox.first(on: item.topic + "/result")
            #expect(!watched.retain, "\(item.topic)/result is not retained (Retain-As-Published)")
        }
        let answers = client.inbox.all.filter { $0.topic.string == reply }
        #expect(answers.count == cases.count, "one answer per command on the Response Topic")
        let retained = try await fixture.retained()
        #expect(!retained.keys.contains { $0.hasSuffix("/result") }, "no acknowledgement is retained: \(retained.keys.filter { $0.hasSuffix("/result") })")
        await client.stop()
        try await fixture.stop()
    }

    @Test("mosquitto_rr gets the acknowledgement through the Response Topic")
    func mosquittoRR() async throws {
        let fixture = try await GatewayFixture.demo()
        let port = String(fixture.broker.port)
        var run = try await MosquittoRR.run(["-h", "127.0.0.1", "-p", port, "-t", Self.lamp + "/on/set", "-e", "rr/reply/1", "-m", "on", "-W", "5"])
        #expect(run.status == 0, "\(run.output)")
        var ack = try JSONReply(Message(topic: TopicName("rr/reply/1"), payload: run.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(ack.ok == true && ack.json("value") == "true", "\(ack)")
        #expect(try await fixture.retained()[Self.lamp + "/on"] == "true")

        run = try await MosquittoRR.run(["-h", "127.0.0.1", "-p", port, "-t", Self.lamp + "/brightness/set", "-e", "rr/reply/2", "-m", "150", "-W", "5"])
        #expect(run.status == 0, "\(run.output)")
        ack = try JSONReply(Message(topic: TopicName("rr/reply/2"), payload: run.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        Self.expectFailure(ack, -70410, "invalid-value", "brightness 150 through mosquitto_rr")
        #expect(ack.messageText == "brightness must be within 0...100, got 150")

        run = try await MosquittoRR.run(["-h", "127.0.0.1", "-p", port, "-t", Self.lamp + "/brightness/get", "-e", "rr/reply/3", "-m", "now", "-W", "5"])
        #expect(run.status == 0, "\(run.output)")
        ack = try JSONReply(Message(topic: TopicName("rr/reply/3"), payload: run.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(ack.ok == true && ack.json("value") == "40", "\(ack)")
        try await fixture.stop()
    }

    @Test("the acknowledgement comes after the retained value was updated")
    func acknowledgementAfterValue() async throws {
        let fixture = try await GatewayFixture.demo()
        let steps: [(topic: String, payload: String, value: String)] = [
            (Self.lamp + "/brightness", "10", "10"), (Self.lamp + "/brightness", "20", "20"), (Self.lamp + "/on", "true", "true"),
            (Self.lamp + "/hue", "100", "100"), (Self.lamp + "/brightness", "30", "30"), (Self.thermostat + "/target-temperature", "22.5", "22.5"),
        ]
        for (number, step) in steps.enumerated() {
            let id = "\"order-\(number)\""
            let ack = try await fixture.acknowledgement(step.topic + "/set", #"{"value": \#(step.payload), "id": \#(id)}"#)
            #expect(ack.ok == true, "\(ack)")
            try await Self.watchedAcknowledgement(fixture, on: step.topic + "/set/result", id: id)
            let all = fixture.watcher.inbox.all
            let ackIndex = all.firstIndex { $0.topic.string == step.topic + "/set/result" && (try? JSONReply($0))?.json("id") == id }
            let valueIndex = all.firstIndex { $0.topic.string == step.topic && $0.payloadString == step.value && $0.retain }
            #expect(valueIndex != nil, "the watcher saw \(step.topic) = \(step.value), retained")
            if let ackIndex, let valueIndex {
                #expect(valueIndex < ackIndex, "\(step.topic) = \(step.value) (message \(valueIndex)) came before its acknowledgement (message \(ackIndex))")
            }
        }
        try await fixture.stop()
    }

    // MARK: - Every refusal, with the retained value left alone

    @Test("a read-only characteristic: -70404, nothing changes")
    func readOnly() async throws {
        let fixture = try await GatewayFixture.demo()
        let topic = Self.thermostat + "/current-temperature"
        let before = try await fixture.retained()[topic]
        #expect(before == "19.5")
        let ack = try await fixture.acknowledgement(topic + "/set", #"{"value": 25, "id": "ro"}"#)
        Self.expectFailure(ack, -70404, "read-only", "current-temperature")
        #expect(ack.json("id") == #""ro""#)
        #expect(ack.messageText?.contains("current-temperature") == true, "\(ack)")
        #expect(try await fixture.retained()[topic] == before)
        try await fixture.stop()
    }

    @Test("invalid values: max, min, step, valid values, format, boolean nonsense, an object without value: -70410, nothing changes")
    func invalidValues() async throws {
        let fixture = try await GatewayFixture.demo()
        let brightness = Self.lamp + "/brightness"
        let cases: [(topic: String, payload: String, mentions: [String])] = [
            (brightness, "150", ["brightness", "0...100", "150"]),
            (brightness, #"{"value": 150, "id": "max"}"#, ["brightness", "0...100", "150"]),
            (brightness, "-1", ["brightness", "0...100", "-1"]),
            (brightness, "50.5", ["brightness", "50.5"]),
            (Self.lamp + "/hue", "361", ["hue", "360", "361"]),
            (Self.thermostat + "/target-temperature", "20.3", ["target-temperature", "0.5", "20.3"]),
            (Self.thermostat + "/target-temperature", "9.5", ["target-temperature", "10", "9.5"]),
            (Self.lock + "/lock-target-state", "5", ["lock-target-state", "5"]),
            (brightness, "bright", ["brightness", "bright"]),
            (brightness, "\"80\"", ["brightness", "80"]),
            (brightness, "true", ["brightness", "true"]),
            (Self.lamp + "/on", "maybe", ["on", "maybe"]),
            (Self.lamp + "/on", "2", ["on", "2"]),
            (Self.lamp + "/on", #"{"value": "maybe", "id": 3}"#, ["on", "maybe"]),
            (brightness, #"{"id": "no-value"}"#, ["value"]),
            (brightness, #"{"value": null}"#, ["brightness"]),
            (brightness, #"{"value": [80]}"#, ["brightness"]),
        ]
        let before = try await fixture.retained()
        for item in cases {
            let ack = try await fixture.acknowledgement(item.topic + "/set", item.payload)
            Self.expectFailure(ack, -70410, "invalid-value", "\(item.topic) <- \(item.payload)")
            for word in item.mentions {
                #expect(ack.messageText?.contains(word) == true, "\(item.topic) <- \(item.payload): the message mentions \(word): \(ack)")
            }
        }
        let first = try await fixture.acknowledgement(brightness + "/set", "150")
        #expect(first.messageText == "brightness must be within 0...100, got 150")
        let withID = try await fixture.acknowledgement(brightness + "/set", #"{"value": 150, "id": "max"}"#)
        #expect(withID.messageText == "brightness must be within 0...100, got 150")
        #expect(withID.json("id") == #""max""#)
        let noValue = try await fixture.acknowledgement(brightness + "/set", #"{"id": "no-value"}"#)
        #expect(noValue.json("id") == #""no-value""#, "the id is echoed on a refusal too: \(noValue)")
        let numeric = try await fixture.acknowledgement(Self.lamp + "/on/set", #"{"value": "maybe", "id": 3}"#)
        #expect(numeric.json("id") == "3", "\(numeric)")

        let after = try await fixture.retained()
        for topic in Set(cases.map(\.topic)) {
            #expect(after[topic] == before[topic], "\(topic) unchanged: \(before[topic] ?? "nil") -> \(after[topic] ?? "nil")")
        }
        // A rejected write never reached the device: a read answers the old value.
        let read = try await fixture.acknowledgement(brightness + "/get", "")
        #expect(read.json("value") == "40", "\(read)")
        try await fixture.stop()
    }

    @Test("unknown paths: -70409 on <topic as sent>/result, naming the first segment that did not resolve")
    func unknownPaths() async throws {
        let fixture = try await GatewayFixture.demo()
        let cases: [(topic: String, mentions: [String])] = [
            ("homegate/No-Such-Home/living-room/floor-lamp/lightbulb/on/set", ["home", "\"No-Such-Home\""]),
            ("homegate/demo-home/Attic/floor-lamp/lightbulb/on/set", ["room", "\"Attic\""]),
            ("homegate/demo-home/living-room/Desk Lamp/lightbulb/on/set", ["accessory", "\"Desk Lamp\""]),
            ("homegate/demo-home/kitchen/floor-lamp/lightbulb/on/set", ["accessory", "\"floor-lamp\""]),
            ("homegate/demo-home/living-room/floor-lamp/fan/on/set", ["service", "\"fan\""]),
            ("homegate/demo-home/living-room/floor-lamp/lightbulb/colour/set", ["characteristic", "\"colour\""]),
            ("homegate/No-Such-Home/living-room/floor-lamp/lightbulb/on/get", ["home", "\"No-Such-Home\""]),
            ("homegate/demo-home/living-room/floor-lamp/lightbulb/colour/get", ["characteristic", "\"colour\""]),
            ("homegate/demo-home/set", []),
            ("homegate/demo-home/living-room/floor-lamp/set", []),
            ("homegate/demo-home/living-room/floor-lamp/lightbulb/get", []),
            ("homegate/demo-home/living-room/floor-lamp/lightbulb/on/extra/set", []),
        ]
        let on = Self.lamp + "/on"
        let before = try await fixture.retained()[on]
        for item in cases {
            let ack = try await fixture.acknowledgement(item.topic, #"{"value": true, "id": "path"}"#)
            Self.expectFailure(ack, -70409, "no-such-resource", item.topic)
            #expect(ack.json("id") == #""path""#, "\(item.topic): \(ack)")
            for word in item.mentions {
                #expect(ack.messageText?.contains(word) == true, "\(item.topic): the message names \(word): \(ack)")
            }
        }
        #expect(try await fixture.retained()[on] == before)
        try await fixture.stop()
    }

    @Test("a set or get on the base itself (homegate/set) is answered -70409 too")
    func setOnTheBase() async throws {
        let fixture = try await GatewayFixture.demo()
        let client = try await fixture.client("base")
        let topics = ["homegate/set", "homegate/get"]
        for topic in topics {
            try await client.subscribe(topic + "/result")
            try await client.publish(topic, "on")
        }
        // Both were sent before either is awaited: one wait covers both.
        _ = try? await client.inbox.collect(topics.count, timeout: .seconds(5)) { $0.topic.string.hasSuffix("/result") }
        for topic in topics {
            let answers = client.inbox.all.filter { $0.topic.string == topic + "/result" }
            #expect(answers.count == 1, "one acknowledgement on \(topic)/result, got \(answers.count)")
            if let answer = answers.first {
                Self.expectFailure(try JSONReply(answer), -70409, "no-such-resource", topic)
            }
        }
        await client.stop()
        try await fixture.stop()
    }

    @Test("unreachable: the Reading Lamp (unreachable from the start) and an accessory taken off the network answer -70402")
    func unreachable() async throws {
        let fixture = try await GatewayFixture.demo()
        var retained = try await fixture.retained()
        #expect(retained["homegate/demo-home/living-room/reading-lamp/$reachable"] == "false")
        let readingBefore = retained[Self.readingLamp + "/on"]
        var ack = try await fixture.acknowledgement(Self.readingLamp + "/on/set", "on")
        Self.expectFailure(ack, -70402, "communication-failure", "the Reading Lamp")
        ack = try await fixture.acknowledgement(Self.readingLamp + "/brightness/get", #"{"id": "r"}"#)
        Self.expectFailure(ack, -70402, "communication-failure", "a read of the Reading Lamp")
        #expect(try await fixture.retained()[Self.readingLamp + "/on"] == readingBefore)

        let answer = try await fixture.answer("simulator/reachability", #"{"accessory": "sim-lamp-1", "reachable": false}"#)
        #expect(answer.ok == true, "\(answer)")
        _ = try await fixture.watcher.inbox.first(on: "homegate/demo-home/living-room/floor-lamp/$reachable", payload: "false")
        retained = try await fixture.retained()
        #expect(retained["homegate/demo-home/living-room/floor-lamp/$reachable"] == "false")
        ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "on")
        Self.expectFailure(ack, -70402, "communication-failure", "the Floor Lamp while off the network")
        ack = try await fixture.acknowledgement(Self.lamp + "/brightness/set", "90")
        Self.expectFailure(ack, -70402, "communication-failure", "the Floor Lamp while off the network")
        let after = try await fixture.retained()
        #expect(after[Self.lamp + "/on"] == "false" && after[Self.lamp + "/brightness"] == "40")

        _ = try await fixture.answer("simulator/reachability", #"{"accessory": "sim-lamp-1", "reachable": true}"#)
        _ = try await fixture.watcher.inbox.first(on: "homegate/demo-home/living-room/floor-lamp/$reachable", payload: "true")
        ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "on")
        #expect(ack.ok == true, "back on the network: \(ack)")
        #expect(try await fixture.retained()[Self.lamp + "/on"] == "true")
        try await fixture.stop()
    }

    @Test("a device that refuses (behaviour fail_status -70403) is acknowledged with its status; fail_status null lets writes through again")
    func deviceFailure() async throws {
        let fixture = try await GatewayFixture.demo()
        var answer = try await fixture.answer("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": -70403}"#)
        #expect(answer.ok == true, "\(answer)")
        var ack = try await fixture.acknowledgement(Self.lamp + "/on/set", #"{"value": "on", "id": "refused"}"#)
        Self.expectFailure(ack, -70403, "busy", "a refused write")
        #expect(ack.json("id") == #""refused""#)
        ack = try await fixture.acknowledgement(Self.lamp + "/brightness/set", "90")
        Self.expectFailure(ack, -70403, "busy", "a refused write")
        var retained = try await fixture.retained()
        #expect(retained[Self.lamp + "/on"] == "false" && retained[Self.lamp + "/brightness"] == "40")

        answer = try await fixture.answer("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": -70402}"#)
        #expect(answer.ok == true, "\(answer)")
        ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "on")
        Self.expectFailure(ack, -70402, "communication-failure", "a write failing with -70402")

        answer = try await fixture.answer("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": null}"#)
        #expect(answer.ok == true, "\(answer)")
        ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "on")
        #expect(ack.ok == true && ack.json("value") == "true", "\(ack)")
        retained = try await fixture.retained()
        #expect(retained[Self.lamp + "/on"] == "true")
        try await fixture.stop()
    }

    @Test("a write the device does not confirm in time: -70408; the retained value follows the late confirmation, with no second acknowledgement")
    func writeTimeout() async throws {
        let fixture = try await GatewayFixture.start(config: Self.labHome(gateway: "{write_timeout: 0.5}", latency: 3000))
        let client = try await fixture.client("slow")
        try await client.subscribe(Self.slowBrightness + "/set/result")
        let start = ContinuousClock.now
        try await client.publish(Self.slowBrightness + "/set", #"{"value": 80, "id": "slow"}"#)
        let ack = try JSONReply(try await client.inbox.first(on: Self.slowBrightness + "/set/result", timeout: HangGuard.standard))
        let waited = start.duration(to: .now)
        await client.stop()
        Self.expectFailure(ack, -70408, "timed-out", "a slow write")
        #expect(ack.json("id") == #""slow""#)
        #expect(ack.messageText?.contains("did not confirm") == true, "\(ack)")
        #expect(waited >= .milliseconds(500), "not before the 0.5 s timeout: after \(waited)")

        // The device confirms about 3 s after the set: the retained value follows it, after the
        // acknowledgement (which came at the timeout, not when the device answered).
        let late = try await fixture.watcher.inbox.first(on: Self.slowBrightness, payload: "80", timeout: HangGuard.standard)
        let seen = fixture.watcher.inbox.all
        let acknowledged = seen.firstIndex { $0.topic.string == Self.slowBrightness + "/set/result" }
        let confirmed = seen.firstIndex { $0.topic.string == Self.slowBrightness && $0.payloadString == "80" }
        #expect(acknowledged != nil && confirmed != nil && acknowledged! < confirmed!,
                "the acknowledgement came before the device's confirmation: \(Self.received(fixture, on: Self.slowBrightness).map { "\($0.payloadString) retain=\($0.retain)" })")
        #expect(late.retain)
        #expect(try await fixture.retained()[Self.slowBrightness] == "80")
        // A later command's acknowledgement marks the point by which a second one would have come.
        let marker = try await fixture.acknowledgement(Self.quickOn + "/set", #"{"value": true, "id": "marker"}"#)
        #expect(marker.ok == true, "\(marker)")
        try await Self.watchedAcknowledgement(fixture, on: Self.quickOn + "/set/result", id: #""marker""#)
        let acks = Self.received(fixture, on: Self.slowBrightness + "/set/result")
        #expect(acks.count == 1, "exactly one acknowledgement: \(acks.map(\.payloadString))")
        try await fixture.stop()
    }

    @Test("a full queue (queue_limit 2) answers -70403 \"already waiting\"; every set gets exactly one acknowledgement")
    func queueFull() async throws {
        let fixture = try await GatewayFixture.start(config: Self.labHome(gateway: "{queue_limit: 2, write_timeout: 0.5}", latency: 2000))
        let client = try await fixture.client("burst")
        let result = Self.slowBrightness + "/set/result"
        try await client.subscribe(result)
        for number in 1...4 {
            try client.client.send(Message(topic: TopicName(Self.slowBrightness + "/set"), payload: #"{"value": \#(20 + number), "id": "q\#(number)"}"#, qos: .atLeastOnce))
        }
        let acks = try await client.inbox.collect(4, timeout: HangGuard.standard) { $0.topic.string == result }.map(JSONReply.init)
        #expect(Set(acks.compactMap { $0.json("id") }) == [#""q1""#, #""q2""#, #""q3""#, #""q4""#], "\(acks)")
        let busy = acks.filter { $0.status == -70403 }
        #expect(!busy.isEmpty, "at least one set answered busy: \(acks)")
        for ack in busy {
            Self.expectFailure(ack, -70403, "busy", "a set beyond the queue")
            #expect(ack.messageText?.contains("already waiting") == true, "\(ack)")
        }
        for ack in acks where ack.status != -70403 {
            Self.expectFailure(ack, -70408, "timed-out", "a queued set on a slow device")
        }
        // A read queued behind them: by its answer, no further acknowledgement may come.
        let read = try await fixture.acknowledgement(Self.slowBrightness + "/get", "")
        #expect(read.ok == true, "\(read)")
        #expect(client.inbox.all.filter { $0.topic.string == result }.count == 4)
        await client.stop()
        try await fixture.stop()
    }

    // MARK: - Order and volume

    @Test("100 rapid sets to one characteristic: 100 acknowledgements in order, the last value retained")
    func hundredRapidSets() async throws {
        let fixture = try await GatewayFixture.demo()
        let brightness = Self.lamp + "/brightness"
        let client = try await fixture.client("rapid")
        try await client.subscribe(brightness + "/set/result")
        let setTopic = try TopicName(brightness + "/set")
        for value in 0..<100 {
            try client.client.send(Message(topic: setTopic, payload: "\(value)", qos: .atLeastOnce))
        }
        let acks = try await client.inbox.collect(100, timeout: .seconds(30)) { $0.topic.string == brightness + "/set/result" }.map(JSONReply.init)
        #expect(acks.allSatisfy { $0.ok == true }, "\(acks.filter { $0.ok != true })")
        #expect(acks.map { $0.json("value") ?? "-" } == (0..<100).map(String.init), "in arrival order")
        let read = try await fixture.acknowledgement(brightness + "/get", "")
        #expect(read.json("value") == "99")
        #expect(client.inbox.all.filter { $0.topic.string == brightness + "/set/result" }.count == 100, "exactly 100 acknowledgements")
        #expect(try await fixture.retained()[brightness] == "99")
        await client.stop()
        try await fixture.stop()
    }

    @Test("canonical spellings reach the lamp; the acknowledgement goes to the topic as sent plus /result")
    func canonicalSpellings() async throws {
        let fixture = try await GatewayFixture.demo()
        let canonical = Self.lamp + "/on"
        let spellings: [(topic: String, payload: String, value: String)] = [
            ("homegate/demo-home/Living Room/floor-lamp/lightbulb/on", "on", "true"),
            ("homegate/demo-home/livingroom/FloorLamp/lightbulb/on", "off", "false"),
            ("homegate/demo-home/living_room/floor-lamp/lightbulb/on", "on", "true"),
            ("homegate/Demo Home/LIVING-ROOM/Floor Lamp/Lightbulb/On", "off", "false"),
            ("homegate/demo-home/living'room/floor_lamp/light-bulb/on", "on", "true"),
        ]
        for spelling in spellings {
            let ack = try await fixture.acknowledgement(spelling.topic + "/set", spelling.payload)
            #expect(ack.message.topic.string == spelling.topic + "/set/result")
            #expect(ack.ok == true && ack.json("value") == spelling.value, "\(spelling.topic): \(ack)")
            #expect(try await fixture.retained()[canonical] == spelling.value, "\(spelling.topic)")
        }
        let get = try await fixture.acknowledgement("homegate/demo-home/Living Room/Floor Lamp/lightbulb/brightness/get", "")
        #expect(get.ok == true && get.json("value") == "40", "\(get)")
        #expect(Self.received(fixture, on: canonical + "/set/result").isEmpty, "nothing on the canonical result topic when another spelling was used")
        try await fixture.stop()
    }

    // MARK: - Reads

    @Test("get: any payload or {\"id\"}; answers the device's value on .../get/result; publishes only a changed value")
    func get() async throws {
        let fixture = try await GatewayFixture.demo()
        let brightness = Self.lamp + "/brightness"
        for payload in ["", "now", "{}", "1", #"{"id": "x"}"#] {
            let ack = try await fixture.acknowledgement(brightness + "/get", payload)
            #expect(ack.message.topic.string == brightness + "/get/result")
            #expect(ack.ok == true && ack.json("value") == "40", "payload \(payload): \(ack)")
            #expect(ack["ms"] is NSNumber, "\(ack)")
            if payload.contains("id") { #expect(ack.json("id") == #""x""#, "\(ack)") }
        }
        // The value did not change: reads publish nothing (the watcher would see it before the answer).
        let before = Self.received(fixture, on: brightness).count
        let ack = try await fixture.acknowledgement(brightness + "/get", #"{"id": "unchanged"}"#)
        #expect(ack.ok == true)
        try await Self.watchedAcknowledgement(fixture, on: brightness + "/get/result", id: #""unchanged""#)
        let published = Self.received(fixture, on: brightness)
        #expect(published.count == before, "an unchanged value is not published again: \(published.map(\.payloadString))")

        // After a set, the read answers the device's new value, which is the retained one.
        #expect(try await fixture.acknowledgement(brightness + "/set", "80").ok == true)
        var read = try await fixture.acknowledgement(brightness + "/get", #"{"id": 9}"#)
        #expect(read.ok == true && read.json("value") == "80" && read.json("id") == "9", "\(read)")
        #expect(try await fixture.retained()[brightness] == "80")

        // After a change on the device, too.
        let answer = try await fixture.answer("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "brightness", "value": 55}"#)
        #expect(answer.ok == true, "\(answer)")
        _ = try await fixture.watcher.inbox.first(on: brightness, payload: "55")
        read = try await fixture.acknowledgement(brightness + "/get", "")
        #expect(read.json("value") == "55", "\(read)")
        #expect(try await fixture.retained()[brightness] == "55")

        // Read-only characteristics can be read.
        read = try await fixture.acknowledgement(Self.thermostat + "/current-temperature/get", "")
        #expect(read.ok == true && read.json("value") == "19.5", "\(read)")

        read = try await fixture.acknowledgement(Self.lamp + "/colour/get", #"{"id": "nope"}"#)
        Self.expectFailure(read, -70409, "no-such-resource", "a get on an unknown characteristic")
        #expect(read.message.topic.string == Self.lamp + "/colour/get/result")
        #expect(read.messageText?.contains("\"colour\"") == true, "\(read)")
        try await fixture.stop()
    }

    // MARK: - Retained sets

    @Test("a retained set runs once, is acknowledged with retained: true, is cleared, and does not run again after a restart")
    func retainedSet() async throws {
        let fixture = try await GatewayFixture.demo()
        let on = Self.lamp + "/on"
        let ack = try await fixture.acknowledgement(on + "/set", #"{"value": true, "id": "sticky"}"#, retain: true)
        #expect(ack.ok == true && ack.json("value") == "true" && ack.json("retained") == "true" && ack.json("id") == #""sticky""#, "\(ack)")
        var retained = try await fixture.retained()
        #expect(retained[on + "/set"] == nil, "the retained set was cleared")
        #expect(retained[on] == "true")
        #expect(!retained.keys.contains { $0.hasSuffix("/set") || $0.hasSuffix("/result") }, "\(retained.keys.sorted())")
        #expect(Self.received(fixture, on: on + "/set/result").count == 1)
        let broker = fixture.broker
        try await fixture.stop(keepBroker: true)

        // The same broker and data folder: the gateway comes back with a fresh device (the lamp off).
        let again = try await GatewayFixture.start(config: GatewayFixture.demoText(), broker: broker, folder: fixture.folder)
        #expect(!again.watcher.inbox.all.contains { $0.topic.string == on + "/set" && !$0.payload.isEmpty }, "no retained set left on the broker")
        // A command to the same characteristic queues behind anything the restart might have run.
        let marker = try await again.acknowledgement(on + "/set", #"{"value": false, "id": "marker"}"#)
        #expect(marker.ok == true && marker["retained"] == nil, "\(marker)")
        try await Self.watchedAcknowledgement(again, on: on + "/set/result", id: #""marker""#)
        let acks = Self.received(again, on: on + "/set/result")
        #expect(acks.count == 1, "only the marker's acknowledgement after the restart: \(acks.map(\.payloadString))")
        retained = try await again.retained()
        #expect(retained[on + "/set"] == nil)
        try await again.stop()
    }

    @Test("a retained set published while the gateway is down runs exactly once when it comes back")
    func retainedSetWhileDown() async throws {
        let first = try await GatewayFixture.demo()
        let broker = first.broker
        try await first.stop(keepBroker: true)
        let brightness = Self.lamp + "/brightness"
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "mistake"))
        try await publisher.publish(brightness + "/set", #"{"value": 66, "id": "while-down"}"#, retain: true)
        await publisher.stop()

        let fixture = try await GatewayFixture.start(config: GatewayFixture.demoText(), broker: broker, folder: first.folder)
        let ack = try JSONReply(try await Self.watchedAcknowledgement(fixture, on: brightness + "/set/result", id: #""while-down""#))
        #expect(ack.ok == true && ack.json("value") == "66" && ack.json("retained") == "true", "\(ack)")
        // A read of the same characteristic queues behind any second run of the retained set.
        let read = try await fixture.acknowledgement(brightness + "/get", #"{"id": "marker"}"#)
        #expect(read.json("value") == "66", "\(read)")
        try await Self.watchedAcknowledgement(fixture, on: brightness + "/get/result", id: #""marker""#)
        let acks = Self.received(fixture, on: brightness + "/set/result")
        #expect(acks.count == 1, "the retained set ran once: \(acks.map(\.payloadString))")
        let retained = try await fixture.retained()
        #expect(retained[brightness + "/set"] == nil, "cleared")
        #expect(retained[brightness] == "66")
        try await fixture.stop()
    }

    @Test("a retained set already on the broker when the gateway first starts runs exactly once")
    func retainedSetBeforeFirstStart() async throws {
        let broker = try await Mosquitto.start()
        let brightness = Self.lamp + "/brightness"
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "mistake"))
        try await publisher.publish(brightness + "/set", #"{"value": 67, "id": "before-start"}"#, retain: true)
        await publisher.stop()

        let fixture = try await GatewayFixture.start(config: GatewayFixture.demoText(), broker: broker)
        let ack = try JSONReply(try await Self.watchedAcknowledgement(fixture, on: brightness + "/set/result", id: #""before-start""#))
        #expect(ack.ok == true && ack.json("value") == "67" && ack.json("retained") == "true", "\(ack)")
        let read = try await fixture.acknowledgement(brightness + "/get", #"{"id": "marker"}"#)
        #expect(read.json("value") == "67", "\(read)")
        try await Self.watchedAcknowledgement(fixture, on: brightness + "/get/result", id: #""marker""#)
        let acks = Self.received(fixture, on: brightness + "/set/result")
        #expect(acks.count == 1, "the retained set ran once: \(acks.map(\.payloadString))")
        let retained = try await fixture.retained()
        #expect(retained[brightness + "/set"] == nil, "cleared")
        #expect(retained[brightness] == "67")
        try await fixture.stop()
    }

    // MARK: - The simulator's controls (section 9)

    @Test("simulator/update by iid and by characteristic (with or without service): the value reaches MQTT, retained")
    func simulatorUpdate() async throws {
        let fixture = try await GatewayFixture.demo()
        let brightness = Self.lamp + "/brightness"
        let iid = try await fixture.iid(ofCharacteristicAt: brightness)
        var answer = try await fixture.answer("simulator/update", #"{"accessory": "sim-lamp-1", "iid": \#(iid), "value": 55, "transaction": "u1"}"#)
        #expect(answer.ok == true && answer.json("transaction") == #""u1""#, "\(answer)")
        let data = answer["data"] as? [String: Any] ?? [:]
        #expect(data["value"].map(JSONText.of) == "55" && data["iid"].map(JSONText.of) == "\(iid)", "\(answer)")
        var message = try await fixture.watcher.inbox.first(on: brightness, payload: "55")
        #expect(message.retain)
        #expect(try await fixture.retained()[brightness] == "55")

        answer = try await fixture.answer("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "hue", "value": 120}"#)
        #expect(answer.ok == true, "\(answer)")
        message = try await fixture.watcher.inbox.first(on: Self.lamp + "/hue", payload: "120")
        #expect(message.retain)

        answer = try await fixture.answer("simulator/update", #"{"accessory": "sim-thermostat", "service": "thermostat", "characteristic": "current-temperature", "value": 22.5}"#)
        #expect(answer.ok == true, "\(answer)")
        message = try await fixture.watcher.inbox.first(on: Self.thermostat + "/current-temperature", payload: "22.5")
        #expect(message.retain)

        answer = try await fixture.answer("simulator/update", #"{"accessory": "sim-hue-ceiling", "characteristic": "on", "value": false}"#)
        #expect(answer.ok == true, "\(answer)")
        _ = try await fixture.watcher.inbox.first(on: Self.ceilingLight + "/lightbulb/on", payload: "false")

        let retained = try await fixture.retained()
        #expect(retained[Self.lamp + "/hue"] == "120")
        #expect(retained[Self.thermostat + "/current-temperature"] == "22.5")
        #expect(retained[Self.ceilingLight + "/lightbulb/on"] == "false")
        try await fixture.stop()
    }

    @Test("simulator/reachability on a bridge: it and everything behind it unreachable, writes -70402, then back with values refreshed")
    func simulatorBridgeReachability() async throws {
        let fixture = try await GatewayFixture.demo()
        let bridge = "homegate/demo-home/hallway/hue-bridge"
        let reading = "homegate/demo-home/living-room/reading-lamp"
        var answer = try await fixture.answer("simulator/reachability", #"{"accessory": "sim-hue-bridge", "reachable": false, "transaction": 1}"#)
        #expect(answer.ok == true && answer.json("transaction") == "1", "\(answer)")
        for accessory in [bridge, Self.bedsideLamp, Self.ceilingLight] {
            _ = try await fixture.watcher.inbox.first(on: accessory + "/$reachable", payload: "false")
        }
        var retained = try await fixture.retained()
        for accessory in [bridge, Self.bedsideLamp, Self.ceilingLight, reading] {
            #expect(retained[accessory + "/$reachable"] == "false", "\(accessory)")
        }
        var ack = try await fixture.acknowledgement(Self.bedsideLamp + "/lightbulb/on/set", "on")
        Self.expectFailure(ack, -70402, "communication-failure", "a lamp behind an unreachable bridge")
        ack = try await fixture.acknowledgement(Self.ceilingLight + "/lightbulb/brightness/get", "")
        Self.expectFailure(ack, -70402, "communication-failure", "a read behind an unreachable bridge")

        // A change on an unreachable device is silent; the refresh when it is back publishes it.
        answer = try await fixture.answer("simulator/update", #"{"accessory": "sim-hue-bedside", "characteristic": "brightness", "value": 33}"#)
        #expect(answer.ok == true, "\(answer)")
        let marker = try await fixture.acknowledgement(Self.lamp + "/on/set", "on")
        #expect(marker.ok == true)
        #expect(!Self.received(fixture, on: Self.bedsideLamp + "/lightbulb/brightness").contains { $0.payloadString == "33" }, "not published while unreachable")

        answer = try await fixture.answer("simulator/reachability", #"{"accessory": "sim-hue-bridge", "reachable": true}"#)
        #expect(answer.ok == true, "\(answer)")
        for accessory in [bridge, Self.bedsideLamp, Self.ceilingLight] {
            _ = try await fixture.watcher.inbox.first(on: accessory + "/$reachable", payload: "true")
        }
        _ = try await fixture.watcher.inbox.first(on: Self.bedsideLamp + "/lightbulb/brightness", payload: "33")
        retained = try await fixture.retained()
        for accessory in [bridge, Self.bedsideLamp, Self.ceilingLight] {
            #expect(retained[accessory + "/$reachable"] == "true", "\(accessory)")
        }
        #expect(retained[reading + "/$reachable"] == "false", "the Reading Lamp is off the network by itself")
        #expect(retained[Self.bedsideLamp + "/lightbulb/brightness"] == "33")
        ack = try await fixture.acknowledgement(Self.bedsideLamp + "/lightbulb/on/set", "on")
        #expect(ack.ok == true, "\(ack)")
        try await fixture.stop()
    }

    @Test("simulator/behaviour latency_ms: writes take that long; each call changes only the keys it is given")
    func simulatorBehaviourLatency() async throws {
        let fixture = try await GatewayFixture.demo()
        var answer = try await fixture.answer("simulator/behaviour", #"{"accessory": "sim-lamp-1", "latency_ms": 400}"#)
        #expect(answer.ok == true, "\(answer)")
        var ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "on")
        #expect(ack.ok == true, "\(ack)")
        #expect(((ack["ms"] as? NSNumber)?.doubleValue ?? 0) >= 400, "\(ack)")

        answer = try await fixture.answer("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": -70403}"#)
        #expect(answer.ok == true, "\(answer)")
        ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "off")
        Self.expectFailure(ack, -70403, "busy", "a refused write")
        answer = try await fixture.answer("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": null}"#)
        #expect(answer.ok == true, "\(answer)")
        ack = try await fixture.acknowledgement(Self.lamp + "/on/set", "off")
        #expect(ack.ok == true, "\(ack)")
        #expect(((ack["ms"] as? NSNumber)?.doubleValue ?? 0) >= 400, "the latency was kept: \(ack)")
        try await fixture.stop()
    }

    @Test("simulator requests answer every error: not-found, invalid-request, unknown-request; transaction echoed; the Response Topic too")
    func simulatorErrors() async throws {
        let fixture = try await GatewayFixture.demo()
        let cases: [(path: String, body: String, error: String)] = [
            ("simulator/update", #"{"accessory": "no-such-device", "iid": 10, "value": 1, "transaction": "t1"}"#, "not-found"),
            ("simulator/reachability", #"{"accessory": "no-such-device", "reachable": false, "transaction": "t1"}"#, "not-found"),
            ("simulator/behaviour", #"{"accessory": "no-such-device", "latency_ms": 1, "transaction": "t1"}"#, "not-found"),
            ("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "volume", "value": 1, "transaction": "t1"}"#, "not-found"),
            ("simulator/update", #"{"accessory": "sim-lamp-1", "iid": 9999, "value": 1, "transaction": "t1"}"#, "not-found"),
            ("simulator/update", #"{"accessory": "sim-lamp-1", "value": 1, "transaction": "t1"}"#, "invalid-request"),
            ("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "brightness", "transaction": "t1"}"#, "invalid-request"),
            ("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "brightness", "value": 150, "transaction": "t1"}"#, "invalid-request"),
            ("simulator/update", #"{"iid": 10, "value": 1, "transaction": "t1"}"#, "invalid-request"),
            ("simulator/reachability", #"{"accessory": "sim-lamp-1", "transaction": "t1"}"#, "invalid-request"),
            ("simulator/reachability", #"{"accessory": "sim-lamp-1", "reachable": "no", "transaction": "t1"}"#, "invalid-request"),
            ("simulator/behaviour", #"{"accessory": "sim-lamp-1", "latency_ms": "slow", "transaction": "t1"}"#, "invalid-request"),
            ("simulator/behaviour", #"{"accessory": "sim-lamp-1", "fail_status": 42, "transaction": "t1"}"#, "invalid-request"),
            ("simulator/explode", #"{"accessory": "sim-lamp-1", "transaction": "t1"}"#, "unknown-request"),
            ("simulator/explode", #"{"transaction": "t1"}"#, "unknown-request"),
        ]
        for item in cases {
            let answer = try await fixture.answer(item.path, item.body)
            #expect(answer.ok == false, "\(item.path) \(item.body): \(answer)")
            #expect(answer.error == item.error, "\(item.path) \(item.body): \(answer)")
            #expect(answer.messageText?.isEmpty == false, "\(item.path) \(item.body): \(answer)")
            #expect(answer.json("transaction") == #""t1""#, "\(item.path) \(item.body): \(answer)")
        }
        for body in ["not json", "", "[1, 2]", "42", #"{"accessory": "#] {
            let answer = try await fixture.answer("simulator/update", body)
            #expect(answer.ok == false && answer.error == "invalid-request", "body \(body): \(answer)")
            #expect(answer.messageText?.isEmpty == false, "body \(body): \(answer)")
        }
        let numeric = try await fixture.answer("simulator/update", #"{"accessory": "no-such-device", "iid": 10, "value": 1, "transaction": 42}"#)
        #expect(numeric.json("transaction") == "42", "\(numeric)")

        // The Response Topic, with the Correlation Data echoed, as well as $response/...
        let client = try await fixture.client("rpc")
        let reply = "replies/\(UUID().uuidString)"
        try await client.subscribe(reply)
        try await client.subscribe("homegate/$response/simulator/+")
        let requests: [(path: String, body: String, ok: Bool)] = [
            ("simulator/update", #"{"accessory": "sim-lamp-1", "characteristic": "brightness", "value": 12, "transaction": "r0"}"#, true),
            ("simulator/update", #"{"accessory": "no-such-device", "iid": 10, "value": 1, "transaction": "r1"}"#, false),
            ("simulator/explode", #"{"accessory": "sim-lamp-1", "transaction": "r2"}"#, false),
            ("simulator/reachability", "not json", false),
        ]
        let replyTopic = try TopicName(reply)
        for (number, request) in requests.enumerated() {
            let correlation = Array("corr-\(number)".utf8)
            try await client.publish("homegate/$request/\(request.path)", request.body,
                                     properties: .init(responseTopic: replyTopic, correlationData: correlation))
            let answer = try JSONReply(try await client.inbox.first { $0.topic.string == reply && $0.properties.correlationData == correlation })
            #expect(answer.ok == request.ok, "\(request.path) \(request.body): \(answer)")
            let payload = answer.message.payload
            let published = try await client.inbox.first { $0.topic.string == "homegate/$response/\(request.path)" && $0.payload == payload }
            #expect(!published.retain)
        }
        #expect(client.inbox.all.filter { $0.topic.string == reply }.count == requests.count)
        await client.stop()
        try await fixture.stop()
    }
}

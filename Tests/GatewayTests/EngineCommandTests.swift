import Accessories
import Foundation
@testable import Gateway
import HomeModel
import MQTT
import Testing
import TestSupport
import Wire

/// Contract section 3 (writes and their acknowledgement) and section 4 (reads), line by line, on
/// the engine in memory: no broker, no subprocess, time on a manual clock.
@Suite("Engine: sets, gets and acknowledgements in memory")
struct EngineCommandTests {
    typealias Harness = EngineHarness

    @Test("a value is checked before the device sees it: refused values are acknowledged with their status, the device and the retained value unchanged")
    func validation() async throws {
        let harness = try await Harness()
        let cases: [(String, String, Int, String, String)] = [
            ("\(Harness.lamp)/brightness/set", "150", -70410, "invalid-value", "brightness must be within 0...100, got 150"),
            ("\(Harness.lamp)/brightness/set", "4.5", -70410, "invalid-value", "brightness must be a whole number, got 4.5"),
            ("\(Harness.lamp)/on/set", "maybe", -70410, "invalid-value", #"on must be true or false (also on/off, 1/0), got "maybe""#),
            ("\(Harness.lamp)/on/set", #"{"id": 3}"#, -70410, "invalid-value", #"the JSON object has no "value"; send {"value": ..., "id": ...} or a bare value"#),
            ("\(Harness.sensor)/set", "5", -70404, "read-only", "current-temperature is read-only"),
            ("homegate/lab/attic/lamp/lightbulb/on/set", "on", -70409, "no-such-resource", #"no room "attic" in lab (there: default-room, office)"#),
            ("homegate/lab/office/lamp/lightbulb/brightnes/set", "5", -70409, "no-such-resource",
             #"no characteristic "brightnes" in lab/office/lamp/lightbulb; did you mean "brightness"? (there: on, brightness)"#),
            ("homegate/lab/office/lamp/lightbulb/set", "on", -70410, "invalid-value",
             #"a set on a service takes a JSON object of its characteristics and values: {"on": true, "brightness": 50}"#),
            ("homegate/lab/office/lamp/lightbulb/get", "", -70409, "no-such-resource",
             "lab/office/lamp/lightbulb is not a characteristic; get takes <home>/<room>/<accessory>/<service>/<characteristic>/get"),
            ("homegate/set", "on", -70409, "no-such-resource", "set needs a characteristic: homegate/<home>/<room>/<accessory>/<service>/<characteristic>/set"),
        ]
        for (topic, payload, status, error, message) in cases {
            let ack = try await harness.command(topic, payload)
            #expect(ack == ["ok": false, "status": .int(status), "error": .string(error), "message": .string(message)] as JSON
                        || ack == ["ok": false, "status": .int(status), "error": .string(error), "message": .string(message), "id": 3] as JSON,
                    "\(topic) \(payload): \(ack.text)")
        }
        #expect(try await harness.deviceValue("lamp", "brightness") == .int(10))
        #expect(harness.bus.retained["\(Harness.lamp)/brightness"] == "10")
        await harness.stop()
    }

    @Test("a topic's levels after the base are split as MQTT does: empty levels kept, any text between the slashes")
    func topicLevels() {
        let topics = ["homegate/a", "homegate/a/b/c/set", "homegate//x//", "homegate/", "homegate/Living Room/é/\u{301}/💡", "homegate/a/\u{301}b"]
        for topic in topics {
            let expected = topic.utf8.dropFirst("homegate/".utf8.count).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }
            #expect(InboundCodec.levels(of: topic, after: "homegate/".utf8.count) == expected, "\(topic)")
        }
    }

    @Test("a success acknowledgement, written straight, has the bytes of its JSON object: id, label, retained and every kind of value")
    func successPayloadBytes() throws {
        let values: [Value] = [.bool(true), .int(-3), .uint(UInt64.max), .float(21.5), .float(20), .string(#"say "hi"\n"#), .data([0, 1, 255])]
        for retained in [false, true] {
            let ids: [JSON?] = [nil, .string("abc"), .int(7), .double(2.5), .bool(true)]
            for id in ids {
                let message = Message(topic: try TopicName("homegate/a/b/c/d/e/set"), payload: "1", retain: retained)
                let reply = Reply(to: message, id: id)
                let labels: [String?] = [nil, "open", #"tab\t "quoted""#]
                for label in labels {
                    for value in values {
                        var object: [String: JSON] = ["ok": true, "value": value.json, "ms": .double(0.4)]
                        if let label { object["label"] = .string(label) }
                        if let id { object["id"] = id }
                        if retained { object["retained"] = true }
                        let written = reply.successPayload(value, label: label, milliseconds: 0.4)
                        #expect(written == JSON.object(object).encoded(), "\(String(decoding: written, as: UTF8.self))")
                    }
                }
            }
        }
        let tenths = Array(0...20_000) + [655_367, 9_999_999, 123_456_789]
        let differing = tenths.map { Double($0) / 10 }.filter { Reply.tenthsText($0) != JSON.text(of: $0) }
        #expect(differing.isEmpty, "written otherwise than JSON writes them: \(differing.prefix(5))")
        let long = Message(topic: try TopicName(String(repeating: "a", count: 65_530)), payload: "1")
        #expect(Reply(to: long, id: nil).resultTopic == long.topic, "a topic with no room for /result is answered on itself")
        let short = Message(topic: try TopicName("homegate/x/set"), payload: "1")
        #expect(Reply(to: short, id: nil).resultTopic.string == "homegate/x/set/result")
    }

    @Test("a confirmed write: the retained value first, then exactly one acknowledgement with ok, value, ms and the id echoed, on /result and the Response Topic")
    func success() async throws {
        let harness = try await Harness()
        let topic = "\(Harness.lamp)/brightness/set"
        try harness.bus.publish(topic, #"{"value": 80, "id": "abc"}"#, responseTopic: "my/replies", correlationData: [1, 2, 3])
        let ack = try await harness.bus.next(on: topic + "/result")
        let body = try JSON.parse(ack.payload)
        #expect(body["ok"] == true && body["value"] == 80 && body["id"] == "abc" && body["ms"]?.double != nil, "\(body.text)")
        #expect(ack.retain == false)
        let response = try await harness.bus.next(on: "my/replies")
        #expect(response.payload == ack.payload)
        #expect(response.properties.correlationData == [1, 2, 3] && response.properties.contentType == "application/json")
        let sent = harness.bus.sent.value.map(\.topic.string)
        let valueIndex = try #require(sent.lastIndex(of: "\(Harness.lamp)/brightness"))
        #expect(valueIndex < (sent.firstIndex(of: topic + "/result") ?? 0), "the retained value is published before the acknowledgement")
        #expect(harness.bus.retained["\(Harness.lamp)/brightness"] == "80")
        #expect(try await harness.deviceValue("lamp", "brightness") == .int(80))
        #expect(try harness.acknowledgements(topic).count == 1)
        await harness.stop()
    }

    @Test("one characteristic: one command after the other, in arrival order; other characteristics are not held up")
    func arrivalOrder() async throws {
        let harness = try await Harness(latency: .seconds(1))
        let topic = "\(Harness.slow)/brightness/set"
        for value in [20, 30, 40] { try harness.send(topic, #"{"value": \#(value), "id": \#(value)}"#) }
        // Meanwhile another characteristic of the same lamp and another lamp answer at once.
        #expect(try await harness.command("\(Harness.lamp)/on/set", "on")["ok"] == true)
        for step in 1...3 {
            await harness.clock.waitForSleepers(3) // the scheduler, the deadlines and the write's latency
            #expect(try harness.acknowledgements(topic).count == step - 1)
            harness.clock.advance(by: .seconds(1))
            _ = try await harness.bus.waitFor(step) { $0.topic.string == topic + "/result" }
        }
        #expect(try harness.acknowledgements(topic).map { $0["id"] } == [20, 30, 40])
        let values = harness.bus.sent.value.filter { $0.topic.string == "\(Harness.slow)/brightness" }.map(\.payloadString)
        #expect(values == ["10", "20", "30", "40"])
        await harness.stop()
    }

    @Test("-70403 when queue_limit commands already wait for the characteristic, at once and without reaching the device")
    func busy() async throws {
        let harness = try await Harness(queueLimit: 2, latency: .seconds(1))
        let topic = "\(Harness.slow)/brightness/set"
        for value in [20, 30, 40] { try harness.send(topic, "\(value)") } // one under way, two waiting
        let refused = try await harness.command(topic, "50")
        #expect(refused == ["ok": false, "status": -70403, "error": "busy",
                            "message": "2 commands are already waiting for this characteristic; try again later"], "\(refused.text)")
        for _ in 0..<3 {
            await harness.clock.waitForSleepers(3)
            harness.clock.advance(by: .seconds(1))
        }
        _ = try await harness.bus.waitFor(4) { $0.topic.string == topic + "/result" }
        #expect(try await harness.deviceValue("slow", "brightness") == .int(40), "50 never reached the device")
        await harness.stop()
    }

    @Test("a write not confirmed in time: -70408 at the timeout; the late confirmation updates the retained value, with no second acknowledgement")
    func timeoutAndLateConfirmation() async throws {
        let harness = try await Harness(writeTimeout: .seconds(1), latency: .seconds(5))
        let topic = "\(Harness.slow)/brightness/set"
        try harness.send(topic, #"{"value": 80, "id": "slow"}"#)
        try harness.send(topic, #"{"value": 90, "id": "next"}"#)
        await harness.clock.waitForSleepers(3)
        harness.clock.advance(by: .seconds(1))
        let timedOut = try JSON.parse(try await harness.bus.next(on: topic + "/result").payload)
        #expect(timedOut == ["ok": false, "status": -70408, "error": "timed-out", "id": "slow",
                             "message": "Slow Lamp (brightness) did not confirm the write within 1 s"], "\(timedOut.text)")
        #expect(harness.bus.retained["\(Harness.slow)/brightness"] == "10", "left as it was at the timeout")
        // The next command started at the timeout (and times out in its turn); the first write's
        // confirmation comes 4 s later.
        await harness.clock.waitForSleepers(4)
        harness.clock.advance(by: .seconds(4))
        _ = try await harness.bus.waitFor { $0.topic.string == "\(Harness.slow)/brightness" && $0.payloadString == "80" }
        #expect(try harness.acknowledgements(topic).filter { $0["id"] == "slow" }.count == 1, "no second acknowledgement for the late confirmation")
        await harness.stop()
    }

    @Test("a get reads the device now: the value retained if it changed, then acknowledged; -70405 for a characteristic that cannot be read")
    func get() async throws {
        let harness = try await Harness()
        try await harness.simulator.update(CharacteristicReference(accessoryID: "sensor", iid: 9), to: .float(23))
        let ack = try await harness.command("\(Harness.sensor)/get", "")
        #expect(ack["ok"] == true && ack["value"] == 23, "\(ack.text)")
        #expect(harness.bus.retained[Harness.sensor] == "23")
        await harness.stop()
    }

    @Test("a retained set is cleared, runs once, and is acknowledged with retained: true")
    func retainedSet() async throws {
        let harness = try await Harness()
        let topic = "\(Harness.lamp)/on/set"
        let ack = try await harness.command(topic, "on", retain: true)
        #expect(ack["ok"] == true && ack["retained"] == true, "\(ack.text)")
        #expect(harness.bus.retained[topic] == nil, "cleared by the gateway")
        #expect(harness.bus.sent.value.contains { $0.topic.string == topic && $0.retain && $0.payload.isEmpty })
        await harness.stop()
    }

    @Test("every command gets exactly one acknowledgement, whatever happens to it: confirmed, refused, busy, timed out and confirmed late")
    func exactlyOne() async throws {
        let harness = try await Harness(writeTimeout: .seconds(1), queueLimit: 1, latency: .milliseconds(1500))
        let fast = "\(Harness.lamp)/on/set"
        let slow = "\(Harness.slow)/on/set"
        for (index, payload) in ["on", "off", "on", "maybe"].enumerated() {
            try harness.send(fast, #"{"value": "\#(payload)", "id": "fast-\#(index)"}"#)
        }
        try harness.send(slow, #"{"value": true, "id": "a"}"#)  // under way
        try harness.send(slow, #"{"value": false, "id": "b"}"#) // waits
        try harness.send(slow, #"{"value": true, "id": "c"}"#)  // busy
        // The scheduler, the deadlines, and a's latency (the engine's deadline timer stops a
        // device call: there is no timer per call).
        await harness.clock.waitForSleepers(3)
        harness.clock.advance(by: .seconds(1))     // t = 1: a times out, b starts
        await harness.clock.waitForSleepers(4)
        harness.clock.advance(by: .milliseconds(500)) // t = 1.5: a is confirmed late
        _ = try await harness.bus.waitFor { $0.topic.string == "\(Harness.slow)/on" && $0.payloadString == "true" }
        await harness.clock.waitForSleepers(3)
        harness.clock.advance(by: .milliseconds(500)) // t = 2: b times out
        await harness.clock.waitForSleepers(3)
        harness.clock.advance(by: .milliseconds(500)) // t = 2.5: b is confirmed late
        _ = try await harness.bus.waitFor { $0.topic.string == "\(Harness.slow)/on" && $0.payloadString == "false" }
        harness.clock.advance(by: .seconds(120))  // every late window is over
        let acknowledgements = try harness.acknowledgements(fast) + harness.acknowledgements(slow)
        let ids = acknowledgements.compactMap { $0["id"]?.string }.sorted()
        #expect(ids == ["a", "b", "c", "fast-0", "fast-1", "fast-2", "fast-3"], "each once: \(ids)")
        let slowStatuses = try harness.acknowledgements(slow).map { $0["status"]?.int ?? 0 }
        #expect(Set(slowStatuses) == [-70403, -70408], "\(slowStatuses)")
        await harness.stop()
    }
}

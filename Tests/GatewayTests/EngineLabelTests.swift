import Accessories
import Foundation
@testable import Gateway
import HomeModel
import MQTT
import Testing
import TestSupport
import Wire

/// Words for enumerations, `<characteristic>/$meta`, the primary home's `~` and help for a wrong
/// topic, on the engine in memory.
@Suite("Engine: labels, characteristic metadata, ~ and did-you-mean")
struct EngineLabelTests {
    typealias Harness = EngineHarness

    @Test("a set by label in any spelling reaches the device as its number; the acknowledgement and <characteristic>/label carry the word")
    func setsByLabel() async throws {
        let harness = try await Harness()
        for (payload, number, label) in [("unsecured", 0, "unsecured"), ("SECURED", 1, "secured"), ("\"Un_Secured\"", 0, "unsecured"),
                                         ("{\"label\": \"secured\"}", 1, "secured"), ("{\"value\": \"unsecured\"}", 0, "unsecured"), ("1", 1, "secured")] {
            let ack = try await harness.command("\(Harness.lockTarget)/set", payload)
            #expect(ack["ok"] == true && ack["value"] == .int(Int64(number)) && ack["label"] == .string(label), "\(payload): \(ack.text)")
            #expect(try await harness.deviceValue("lock", "lock-target-state") == .uint(UInt64(number)))
            #expect(harness.bus.retained["\(Harness.lockTarget)/label"] == label)
        }
        await harness.stop()
    }

    @Test("an unknown label, a label on a characteristic without labels, and a value and label that disagree are refused; nothing reaches the device")
    func badLabels() async throws {
        let harness = try await Harness()
        let cases: [(String, String, String)] = [
            ("\(Harness.lockTarget)/set", "sekured", "lock-target-state takes 0 (unsecured), 1 (secured), by number or label; got sekured"),
            ("\(Harness.lockTarget)/set", "{\"value\": 0, \"label\": \"secured\"}", "\"value\" 0 and \"label\" \"secured\" disagree; send one of them"),
            ("\(Harness.lockTarget)/set", "{\"label\": \"open\"}", "lock-target-state has no label \"open\"; it takes 0 (unsecured), 1 (secured)"),
            ("\(Harness.lamp)/brightness/set", "{\"label\": \"bright\"}", "brightness has no labels; send its value"),
        ]
        for (topic, payload, message) in cases {
            let ack = try await harness.command(topic, payload)
            #expect(ack == ["ok": false, "status": -70410, "error": "invalid-value", "message": .string(message)], "\(payload): \(ack.text)")
        }
        #expect(try await harness.deviceValue("lock", "lock-target-state") == .uint(1))
        await harness.stop()
    }

    @Test("the accessory's $meta describes its services and characteristics: format, perms, bounds, type, UUID, valid values with their labels; no <characteristic>/$meta by default")
    func accessoryMetaDescribesCharacteristics() async throws {
        let harness = try await Harness()
        let door = try JSON.parse(Array(try #require(harness.bus.retained["homegate/lab/office/door/$meta"]).utf8))
        #expect(door["name"] == "Door" && door["services"]?.object?.keys.sorted() == ["lock-mechanism"], "\(door.text)")
        let lock = try #require(door["services"]?["lock-mechanism"])
        #expect(lock["type"] == "lock-mechanism" && lock["characteristics"]?.object?.keys.sorted() == ["lock-current-state", "lock-target-state"])
        let target = try #require(lock["characteristics"]?["lock-target-state"])
        #expect(target["format"] == "uint8" && target["type"] == "lock-target-state" && target["uuid"] == "0000001E-0000-1000-8000-0026BB765291")
        #expect(target["validValues"] == [["value": 0, "label": "unsecured"], ["value": 1, "label": "secured"]])
        let lamp = try JSON.parse(Array(try #require(harness.bus.retained["homegate/lab/office/lamp/$meta"]).utf8))
        let brightness = try #require(lamp["services"]?["lightbulb"]?["characteristics"]?["brightness"])
        #expect(brightness["minValue"] == 0 && brightness["maxValue"] == 100 && brightness["unit"] == "percentage" && brightness["perms"] == ["pr", "pw", "ev"])
        #expect(harness.bus.retained["\(Harness.lamp)/brightness/label"] == nil, "no labels, no label topic")
        #expect(!harness.bus.retained.keys.contains { $0.hasSuffix("/$meta") && $0.split(separator: "/").count > 5 }, "no characteristic's own $meta")
        await harness.stop()
    }

    @Test("with characteristic_meta every characteristic also has <characteristic>/$meta, the same object as in its accessory's $meta")
    func characteristicMetaTopics() async throws {
        let harness = try await Harness(configure: { $0.characteristicMeta = true })
        let meta = try JSON.parse(Array(try #require(harness.bus.retained["\(Harness.lockTarget)/$meta"]).utf8))
        let door = try JSON.parse(Array(try #require(harness.bus.retained["homegate/lab/office/door/$meta"]).utf8))
        #expect(door["services"]?["lock-mechanism"]?["characteristics"]?["lock-target-state"] == meta)
        #expect(meta["validValues"] == [["value": 0, "label": "unsecured"], ["value": 1, "label": "secured"]])
        #expect(harness.bus.retained["\(Harness.lamp)/brightness/$meta"] != nil)
        await harness.stop()
    }

    @Test("~ names the primary home in sets and gets")
    func primaryAlias() async throws {
        let harness = try await Harness()
        let ack = try await harness.command("homegate/~/office/lamp/lightbulb/brightness/set", "42")
        #expect(ack["ok"] == true)
        #expect(harness.bus.retained["\(Harness.lamp)/brightness"] == "42")
        let read = try await harness.command("homegate/~/office/door/lock-mechanism/lock-current-state/get", "")
        #expect(read["value"] == 1 && read["label"] == "secured", "\(read.text)")
        await harness.stop()
    }

    @Test("the closest names of a level: within a third of the length, at most three, nearest first")
    func suggestions() {
        #expect(Suggestions.closest(to: "brightnes", among: ["on", "brightness", "hue"]) == ["brightness"])
        #expect(Suggestions.closest(to: "Livng Room", among: ["living-room", "kitchen", "bedroom"]) == ["living-room"])
        #expect(Suggestions.closest(to: "xyz", among: ["living-room", "kitchen"]) == [])
    }
}

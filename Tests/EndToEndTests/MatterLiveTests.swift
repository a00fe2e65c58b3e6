import Foundation
import Harness
import Testing
import TestSupport

/// Real Matter devices: CircuitMatter 0.4.1 lights (a pure-Python Matter device) commissioned by
/// the real Matter Server (python-matter-server 8.1.2 and the CHIP SDK) in network namespaces of
/// the lab's own (`Tests/Fixtures/matter/live`), driven by the real binary through Mosquitto.
@Suite(.serialized, .loadTest) struct MatterLiveTests {
    /// The characteristic topic of `type` on the Matter accessory whose id ends with `suffix`... or
    /// the first Matter accessory's when nil.
    static func topic(_ layout: [String: Any], accessory id: String, type: String) -> String? {
        for accessory in MatterZooTests.accessories(layout) where accessory["id"] as? String == id {
            for service in accessory["services"] as? [[String: Any]] ?? [] {
                for characteristic in service["characteristics"] as? [[String: Any]] ?? [] where characteristic["type"] as? String == type {
                    return characteristic["topic"] as? String
                }
            }
        }
        return nil
    }

    static func accessoryTopic(_ layout: [String: Any], id: String) -> String? {
        MatterZooTests.accessories(layout).first { $0["id"] as? String == id }?["topic"] as? String
    }

    @Test("CircuitMatter lights commissioned by code (homegate pair --matter with the manual code, and $request/accessory/pair with the QR payload into a room): sets acknowledged after the device changed, a change made on the device reaches its retained topic, a stopped device is unreachable and back, unpair takes HomeGate's fabric off the device")
    func liveLights() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-live")
        let lab = try await MatterLab.start(kinds: ["onoff", "color"], folder: folder, subscriptionCeiling: 10)
        defer { Task { await lab.stop() } }
        let config = """
            base_topic: hgtest
            log_level: debug
            mqtt:
              url: mqtt://127.0.0.1:1883
            matter:
              url: \(lab.url)
            homes:
              - name: Test Home
                primary: true
                rooms: [Office]
            """
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        let onoff = try lab.device("onoff")
        let color = try lab.device("color")

        // homegate discover lists the devices in commissioning mode beside HomeKit accessories.
        let discover = try HomeGateProcess(["discover", "--timeout", "1", "--json", "--config", fixture.configFile])
        #expect(try await discover.waitForExit() == 0, "\(discover.output)")
        #expect(discover.output.contains("\"port\":\(onoff.port)") && discover.output.contains("\"transport\":\"matter\""), "\(discover.output)")
        // Commissioned from the command line with its 11-digit manual code (the one a person
        // types from the label, or Apple Home's "Turn On Pairing Mode" shows): the running
        // gateway brings it in.
        let pair = try HomeGateProcess(["pair", "--config", fixture.configFile, "--matter", onoff.manual])
        #expect(try await pair.waitForExit(timeout: .seconds(300)) == 0, "\(pair.output)")
        #expect(pair.output.contains("commissioned"), "\(pair.output)")
        // The accessory browser lists the colour light, in commissioning mode, beside HAP
        // accessories; it is commissioned over MQTT by the id the browser gave, into a room.
        _ = try await fixture.request("browser/start", "{}")
        let found = try await fixture.watcher.inbox.wait(for: "the colour light in the accessory browser") { messages -> String? in
            messages.first { message in
                guard message.topic.string.hasPrefix("hgtest/$browser/"), !message.payload.isEmpty,
                      let entry = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any] else { return false }
                return entry["transport"] as? String == "matter" && entry["port"] as? Int == color.port
            }?.topic.string
        }
        let deviceID = String(found.dropFirst("hgtest/$browser/".count))
        let answer = try await fixture.request("accessory/pair", #"{"device": "\#(deviceID)", "code": "\#(color.qr)", "room": "Office"}"#)
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        let colorID = try #require(((answer["data"] as? [String: Any])?["accessories"] as? [String])?.first, "\(answer)")

        let layout = try await fixture.watcher.inbox.wait(for: "both lights in the layout") { messages -> [String: String]? in
            var retained: [String: String] = [:]
            for message in messages where message.retain { retained[message.topic.string] = message.payloadString }
            return MatterZooTests.accessories(LayoutAssembly.assemble(retained, base: "hgtest")).count >= 2 ? retained : nil
        }
        let assembled = try #require(LayoutAssembly.assemble(layout, base: "hgtest"))
        let onoffID = try #require(MatterZooTests.accessories(assembled).compactMap { $0["id"] as? String }.first { $0 != colorID })
        #expect(Self.accessoryTopic(assembled, id: colorID)?.contains("/office/") == true, "\(String(describing: Self.accessoryTopic(assembled, id: colorID)))")
        let on = try #require(Self.topic(assembled, accessory: onoffID, type: "on"))

        // A set is acknowledged once the device has it.
        let off = try await fixture.command("\(on)/set", "false")
        #expect(off["ok"] as? Bool == true, "\(off)")
        #expect(try await lab.control("state \(onoff.name)")["on"] as? Bool == false)
        let onAgain = try await fixture.command("\(on)/set", "true")
        #expect(onAgain["ok"] as? Bool == true, "\(onAgain)")
        #expect(try await lab.control("state \(onoff.name)")["on"] as? Bool == true)
        // A colour light's hue and saturation in one set.
        let colorService = try #require(Self.topic(assembled, accessory: colorID, type: "hue")).split(separator: "/").dropLast().joined(separator: "/")
        let hueSaturation = try await fixture.command("\(colorService)/set", #"{"hue": 120, "saturation": 80}"#)
        #expect(hueSaturation["ok"] as? Bool == true, "\(hueSaturation)")

        // A change made on the device reaches its retained topic.
        let seen = fixture.watcher.inbox.all.count
        try await lab.control("off \(onoff.name)")
        do {
            _ = try await fixture.watcher.inbox.wait(for: "\(on) false from the device") { messages in
                messages.dropFirst(seen).first { $0.topic.string == on && $0.payloadString == "false" }
            }
        } catch {
            Issue.record("no device-side change: gateway log \(fixture.gateway.output.suffix(6000))")
            throw error
        }

        // The device stopped: unreachable; started again: reachable.
        let reachable = "\(try #require(Self.accessoryTopic(assembled, id: onoffID)))/$reachable"
        let beforeStop = fixture.watcher.inbox.all.count
        try await lab.control("stop \(onoff.name)")
        _ = try await fixture.watcher.inbox.wait(timeout: .seconds(120), for: "\(reachable) false") { messages in
            messages.dropFirst(beforeStop).first { $0.topic.string == reachable && $0.payloadString == "false" }
        }
        let beforeStart = fixture.watcher.inbox.all.count
        try await lab.control("start \(onoff.name)")
        _ = try await fixture.watcher.inbox.wait(timeout: .seconds(120), for: "\(reachable) true") { messages in
            messages.dropFirst(beforeStart).first { $0.topic.string == reachable && $0.payloadString == "true" }
        }

        // Unpair: HomeGate's fabric leaves the device, the accessory leaves the home.
        let unpaired = try await fixture.request("accessory/unpair", #"{"accessory": "\#(onoffID)"}"#)
        #expect(unpaired["ok"] as? Bool == true, "\(unpaired)")
        #expect(try await lab.control("state \(onoff.name)")["fabrics"] as? Int == 0)
        _ = try await fixture.watcher.inbox.first { $0.topic.string == reachable && $0.payload.isEmpty }
        try await fixture.stop()
    }
}

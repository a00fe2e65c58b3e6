import Foundation
import MQTT
import Testing
import TestSupport

/// Thread accessories: the zoo's Thread devices served over HAP over CoAP (UDP on IPv6 loopback)
/// by `coap_peer.py` (itself checked against aiohomekit's CoAP controller by
/// `CoAPPeerCrossCheckTests`), paired with `homegate pair --transport coap` or
/// `$request/accessory/pair`, and run by the real binary through a real Mosquitto: the same
/// checks as the IP zoo's, and a peer that misbehaves on the wire.
@Suite(.serialized, .startsProcesses) struct ThreadDeviceTests {
    /// Thread devices read every second (not every 30 s), so a silent one is noticed within the test.
    static let config = HAPEndToEndTests.config + "\nhap:\n  thread_keep_alive: 1\n"
    static let threadDevices = ["airversa_ap2", "eve_energy", "nanoleaf_bulb", "nanoleaf_strip_nl55"]

    @Test("a Thread device pairs over CoAP; every visible characteristic has a topic with the device's value; one write per writable format is acknowledged", arguments: threadDevices)
    func threadDeviceWorks(_ database: String) async throws {
        let peer = try await CoAPZooPeer.start(database: database)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "thread-\(database)")
        let paired = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, transport: "coap")
        #expect(paired.contains("paired with"), "\(paired)")
        let pairings = try HomeGateProcess(["pairings", "--config", folder.appendingPathComponent("homegate.yml").path,
                                            "--data-dir", folder.appendingPathComponent("data").path])
        #expect(try await pairings.waitForExit() == 0)
        #expect(pairings.output.contains("[::1]:\(peer.port)  paired ") && pairings.output.contains("over CoAP (Thread)"), "\(pairings.output)")
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let entries = try await DeviceZooTests.entries(fixture, database: database, deviceID: peer.deviceID)
        #expect(!entries.isEmpty, "\(database): no characteristic in the layout")
        let retained = try await fixture.retained()
        let reachable = try #require(entries.first).topic.split(separator: "/").prefix(4).joined(separator: "/") + "/$reachable"
        #expect(retained[reachable] == "true")
        for entry in entries {
            guard entry.perms.contains("pr"), let expected = entry.captured["value"], !(expected is NSNull) else { continue }
            let published = retained[entry.topic]
            #expect(published.map { Self.matches($0, expected, entry) } == true,
                    "\(database): \(entry.topic) (iid \(entry.iid), \(entry.format)) is \(published ?? "not retained"), the device says \(expected)")
        }
        try await DeviceZooTests.writeOnePerFormat(entries, fixture: fixture, database: database) { predicate in try await peer.waitForLine(where: predicate) }
        try await fixture.stop()
    }

    @Test("pairing over MQTT with transport coap, a value the device changes by itself reaches its topic, unpairing over MQTT removes the pairing on the device")
    func pairEventsUnpairOverMQTT() async throws {
        let peer = try await CoAPZooPeer.start(database: "eve_energy")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "thread-mqtt")
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let refused = try await fixture.request("accessory/pair", #"{"host": "::1", "port": \#(peer.port), "code": "\#(peer.pincode)", "transport": "thread"}"#)
        #expect(refused["ok"] as? Bool == false && refused["error"] as? String == "invalid-request", "\(refused)")
        let answer = try await fixture.request("accessory/pair", #"{"host": "::1", "port": \#(peer.port), "code": "\#(peer.pincode)", "transport": "coap", "room": "Office"}"#)
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        let accessories = (answer["data"] as? [String: Any])?["accessories"] as? [String]
        let id = try #require(accessories?.first, "\(answer)")

        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string.hasSuffix("/outlet/on") && $0.topic.string.hasPrefix("hgtest/test-home/office/") }
        let entries = try await DeviceZooTests.entries(fixture, database: "eve_energy", deviceID: peer.deviceID)
        let on = try #require(entries.first { $0.topic.hasSuffix("/outlet/on") })
        let iid = on.iid
        _ = try await peer.waitForLine { $0.contains(#""event": "subscribed""#) && $0.contains(#""iid": \#(iid),"#) }
        let topic = on.topic
        let now = try await fixture.retained()[topic]
        let next = now == "true" ? "false" : "true"
        try await peer.set(aid: 1, iid: iid, json: next)
        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == topic && $0.payloadString == next }

        let unpaired = try await fixture.request("accessory/unpair", #"{"accessory": "\#(id)"}"#)
        #expect(unpaired["ok"] as? Bool == true, "\(unpaired)")
        _ = try await peer.waitForLine { $0.contains(#""event": "unpaired""#) }
        try await fixture.stop()
    }

    @Test("a Thread device that misbehaves on the wire is reported unreachable and back once it behaves; the lamp beside it is driven meanwhile",
          arguments: ["silent", "bad-tag"])
    func aMisbehavingThreadDeviceIsContained(_ mode: String) async throws {
        let (lamp, eve, fixture, reachable) = try await Self.lampAndThreadEve("thread-\(mode)")
        defer { Task { await lamp.stop(); await eve.stop() } }
        let mark = fixture.watcher.inbox.all.count
        try await eve.misbehave(mode)
        _ = try await DeviceZooTests.next(fixture.watcher, after: mark, timeout: .seconds(30)) { $0.topic.string == reachable && $0.payloadString == "false" }
        let ack = try await fixture.command("\(HAPEndToEndTests.lampOn)/set", #"{"value": true}"#)
        #expect(ack["ok"] as? Bool == true, "\(mode): \(ack)")
        let back = fixture.watcher.inbox.all.count
        try await eve.misbehave(nil)
        _ = try await DeviceZooTests.next(fixture.watcher, after: back, timeout: .seconds(60)) { $0.topic.string == reachable && $0.payloadString == "true" }
        try await fixture.stop()
    }

    @Test("a Thread device that forgets its sessions (a reboot: its next answer is 4.04) is verified again from a new socket and acknowledges the next set; garbage datagrams change nothing")
    func forgottenSessionAndGarbage() async throws {
        let (lamp, eve, fixture, reachable) = try await Self.lampAndThreadEve("thread-drop")
        defer { Task { await lamp.stop(); await eve.stop() } }
        let entries = try await DeviceZooTests.entries(fixture, database: "eve_energy", deviceID: eve.deviceID)
        let on = try #require(entries.first { $0.topic.hasSuffix("/outlet/on") })
        let verifiedLines = { eve.logText().split(separator: "\n").filter { $0.contains(#""event": "verified""#) }.map(String.init) }
        let before = Set(verifiedLines())
        let mark = fixture.watcher.inbox.all.count
        try await eve.drop()
        try await eve.sendGarbageDatagrams(count: 20)
        // The keep-alive's next read gets 4.04: the gateway verifies again, from a new socket, and
        // the Eve is unreachable until its database is read and its events subscribed again.
        _ = try await eve.waitForLine(timeout: HangGuard.standard) { $0.contains(#""event": "verified""#) && !before.contains($0) }
        _ = try await DeviceZooTests.next(fixture.watcher, after: mark) { $0.topic.string == reachable && $0.payloadString == "false" }
        _ = try await DeviceZooTests.next(fixture.watcher, after: mark) { $0.topic.string == reachable && $0.payloadString == "true" }
        let ack = try await fixture.command("\(on.topic)/set", #"{"value": true}"#)
        #expect(ack["ok"] as? Bool == true, "\(ack)")
        let iid = on.iid
        _ = try await eve.waitForLine { $0.contains(#""event": "write", "aid": 1, "iid": \#(iid),"#) }
        #expect(try await fixture.retained()[reachable] == "true")
        try await fixture.stop()
    }

    // MARK: - Helpers

    /// A HAP-python lamp over IP and an Eve Energy over CoAP, both paired, the gateway running
    /// on them; the Eve's `$reachable` topic.
    static func lampAndThreadEve(_ prefix: String) async throws -> (HAPPeer, CoAPZooPeer, GatewayFixture, String) {
        let lamp = try await HAPPeer.start(temperatureInterval: 0)
        let eve = try await CoAPZooPeer.start(database: "eve_energy")
        let folder = try TemporaryDirectory.make(prefix: prefix)
        _ = try await HAPEndToEndTests.pair(lamp, folder: folder)
        _ = try await HAPEndToEndTests.pair(host: eve.host, port: eve.port, code: eve.pincode, folder: folder, transport: "coap")
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let entries = try await DeviceZooTests.entries(fixture, database: "eve_energy", deviceID: eve.deviceID)
        let reachable = try #require(entries.first).topic.split(separator: "/").prefix(4).joined(separator: "/") + "/$reachable"
        return (lamp, eve, fixture, reachable)
    }

    /// As the IP zoo compares, except `data`: a CoAP device sends bytes, which the gateway
    /// publishes as base64, while the captured database holds them as hex or base64 text.
    static func matches(_ published: String, _ expected: Any, _ entry: DeviceZooTests.Entry) -> Bool {
        guard entry.format == "data" || entry.format == "tlv8", let text = expected as? String else {
            return DeviceZooTests.matches(published, expected, entry)
        }
        guard let decoded = (try? JSONSerialization.jsonObject(with: Data(published.utf8), options: .fragmentsAllowed)) as? String,
              let bytes = Data(base64Encoded: decoded) else { return false }
        return bytes == Data(base64Encoded: text) || bytes == Self.hexBytes(text)
    }

    private static func hexBytes(_ text: String) -> Data? {
        guard text.count % 2 == 0, text.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return Data(bytes)
    }
}

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

    @Test("every device of the zoo that a Thread device could be (one accessory, 16-bit ids) pairs over CoAP; every visible characteristic has a topic with the device's value (one not known yet has none); one write per writable format is acknowledged; a change on the device reaches its topic",
          arguments: try CoAPZooPeer.databases())
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
        // A value of no bytes is no value over CoAP (aiohomekit reads it as None): a capture's
        // null, and its empty text or data.
        let unknown = { (entry: DeviceZooTests.Entry) in entry.captured["value"] is NSNull || entry.captured["value"] as? String == "" }
        for entry in entries {
            guard entry.perms.contains("pr"), let expected = entry.captured["value"], !unknown(entry) else { continue }
            let published = retained[entry.topic]
            #expect(published.map { Self.matches($0, expected, entry) } == true,
                    "\(database): \(entry.topic) (iid \(entry.iid), \(entry.format)) is \(published ?? "not retained"), the device says \(expected)")
        }
        for entry in entries where entry.perms.contains("pr") && unknown(entry) {
            #expect(retained[entry.topic] == nil, "\(database): \(entry.topic) has no value on the device, yet \(retained[entry.topic] ?? "") is retained")
        }
        try await DeviceZooTests.writeOnePerFormat(entries, fixture: fixture, database: database) { predicate in try await peer.waitForLine(where: predicate) }
        try await Self.changeOnTheDevice(entries, peer: peer, fixture: fixture)
        try await fixture.stop()
    }

    @Test("a pairing over CoAP that fails in any step after pair-setup is undone on the device: nothing stored, the device unpaired, pairing again works",
          arguments: ["verify", "database", "values"])
    func aFailedPairingIsUndone(_ step: String) async throws {
        let peer = try await CoAPZooPeer.start(database: "nanoleaf_bulb")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "thread-undo-\(step)")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try Self.config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let data = folder.appendingPathComponent("data").path
        try await peer.breakOnce(step)
        let failed = try HomeGateProcess(["pair", "--config", configFile, "--data-dir", data, "--host", peer.host, "--port", String(peer.port),
                                          "--code", peer.pincode, "--transport", "coap"])
        #expect(try await failed.waitForExit(timeout: .seconds(60)) != 0)
        #expect(failed.output.contains("told to forget the new pairing"), "\(step): \(failed.output)")
        _ = try await peer.waitForLine { $0.contains(#""event": "broken", "step": "\#(step)""#) }
        _ = try await peer.waitForLine { $0.contains(#""event": "unpaired""#) }
        let pairings = try HomeGateProcess(["pairings", "--config", configFile, "--data-dir", data])
        #expect(try await pairings.waitForExit() == 0)
        #expect(!pairings.output.contains(peer.deviceID), "\(pairings.output)")
        let again = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: Self.config, transport: "coap")
        #expect(again.contains("paired with"), "\(again)")
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

    /// As the IP zoo compares, except what binary values change: a CoAP device sends bytes, which
    /// the gateway publishes as base64 for `data` (the captured database holds hex or base64
    /// text), and an `int` as 32 bits, so a value captured outside that range (-1 shown as
    /// 4294967295 over IP) is its two's complement.
    static func matches(_ published: String, _ expected: Any, _ entry: DeviceZooTests.Entry) -> Bool {
        if entry.format == "int", let number = expected as? NSNumber, Int32(exactly: number.int64Value) == nil {
            return published == String(Int32(truncatingIfNeeded: number.int64Value))
        }
        guard entry.format == "data" || entry.format == "tlv8", let text = expected as? String else {
            return DeviceZooTests.matches(published, expected, entry)
        }
        guard let decoded = (try? JSONSerialization.jsonObject(with: Data(published.utf8), options: .fragmentsAllowed)) as? String,
              let bytes = Data(base64Encoded: decoded) else { return false }
        return bytes == Data(base64Encoded: text) || bytes == Self.hexBytes(text)
    }

    /// The device changes the first value it announces (a bool or a whole number, with no list of
    /// valid values) by itself; the change reaches its topic.
    static func changeOnTheDevice(_ entries: [DeviceZooTests.Entry], peer: CoAPZooPeer, fixture: GatewayFixture) async throws {
        let retained = try await fixture.retained()
        guard let entry = entries.first(where: { entry in
            entry.perms.contains("pr") && entry.perms.contains("ev") && ["bool", "uint8", "uint16", "uint32", "int"].contains(entry.format)
                && entry.layout["validValues"] == nil && retained[entry.topic] != nil
        }) else { return }
        let next = Self.otherValue(entry, now: retained[entry.topic] ?? "")
        let topic = entry.topic
        try await peer.set(aid: entry.aid, iid: entry.iid, json: next)
        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == topic && $0.payloadString == next }
    }

    /// A value of the entry's format within its bounds that differs from `now`.
    private static func otherValue(_ entry: DeviceZooTests.Entry, now: String) -> String {
        if entry.format == "bool" { return now == "true" ? "false" : "true" }
        let low = (entry.captured["minValue"] as? NSNumber)?.intValue ?? 0
        let high = (entry.captured["maxValue"] as? NSNumber)?.intValue ?? 100
        return String(Double(now) == Double(low) ? high : low)
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

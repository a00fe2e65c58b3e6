import Foundation
import MQTT
import Testing
import TestSupport

/// The device zoo: real devices' accessory databases (aiohomekit's captured fixtures, see
/// `Tests/Fixtures/hap/zoo/README.md`) served over real HAP by `zoo_peer.py`, paired with
/// `homegate pair` and run by the real binary through a real Mosquitto.
@Suite(.serialized, .startsProcesses) struct DeviceZooTests {
    static let config = HAPEndToEndTests.config
    /// Whether `topic` has a 36-character UUID in it.
    static func hasUUID(_ topic: String) -> Bool {
        topic.firstMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) != nil
    }

    /// One characteristic as the layout shows it, with what the captured database says of it.
    struct Entry {
        let aid: Int
        let layout: [String: Any]
        let captured: [String: Any]
        var topic: String { layout["topic"] as? String ?? "" }
        var iid: Int { layout["iid"] as? Int ?? 0 }
        var format: String { layout["format"] as? String ?? "" }
        var perms: [String] { layout["perms"] as? [String] ?? [] }
    }

    @Test("every device of the zoo pairs; every visible characteristic has a readable topic and the device's value; one write per writable format is carried out and acknowledged", arguments: try ZooPeer.databases())
    func deviceWorks(_ database: String) async throws {
        let peer = try await ZooPeer.start(database: database)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "zoo-\(database)")
        let paired = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder)
        #expect(paired.contains("paired with"), "\(paired)")
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let entries = try await Self.entries(fixture, database: database, deviceID: peer.deviceID)
        #expect(!entries.isEmpty, "\(database): no characteristic in the layout")

        let retained = try await fixture.retained()
        for entry in entries {
            #expect(!Self.hasUUID(entry.topic), "\(database): a UUID in the topic \(entry.topic)")
            guard entry.perms.contains("pr"), let expected = entry.captured["value"], !(expected is NSNull) else { continue }
            // A bulb with Adaptive Lighting: zoo_peer.py serves its supported transition
            // configuration as HAP-NodeJS's controller writes it (the capture has it in hex).
            if entry.layout["type"] as? String == "supported-transition-configuration" { continue }
            let published = retained[entry.topic]
            #expect(published.map { Self.matches($0, expected, entry) } == true,
                    "\(database): \(entry.topic) (aid \(entry.aid), iid \(entry.iid), \(entry.format)) is \(published ?? "not retained"), the device says \(expected)")
        }
        if database == "connectsense" {
            // Readings finer than the device's minStep (0.1) are published as it sent them.
            let currents = entries.filter { $0.captured["description"] as? String == "Amps" }.map { retained[$0.topic] }
            #expect(currents == ["0.03", "0.05"], "\(currents)")
            let energy = entries.filter { $0.captured["description"] as? String == "Kilowatt-hours" }.map { retained[$0.topic] }
            #expect(energy == ["379.693", "175.85"], "\(energy)")
        }
        if database == "haa_switch" {
            // Apple's types under HAA's base UUID (...-0026BB765292) are Apple's types.
            #expect(entries.contains { $0.topic == "hgtest/test-home/office/garden-relay/switch/on" }, "\(entries.map(\.topic))")
        }
        try await Self.writeOnePerFormat(entries, fixture: fixture, peer: peer)
        try await fixture.stop()
    }

    @Test("a value the device changes by itself reaches its topic; a characteristic whose events the device refuses is polled instead")
    func eventsAndPolling() async throws {
        let peer = try await ZooPeer.start(database: "eve_energy")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "zoo-events")
        let config = Self.config + "\ngateway:\n  poll_interval: 0.3\n"
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: config)
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        let entries = try await Self.entries(fixture, database: "eve_energy", deviceID: peer.deviceID)
        let on = try #require(entries.first { $0.topic.hasSuffix("/outlet/on") })
        let topic = on.topic
        try await peer.set(aid: on.aid, iid: on.iid, json: "true")
        _ = try await fixture.watcher.inbox.first { $0.topic.string == topic && $0.payloadString == "true" }
        try await fixture.stop(keepBroker: true)

        try await peer.refuseEvents(true)
        let restarted = try await GatewayFixture.start(config: config, broker: fixture.broker, folder: folder)
        _ = try await peer.waitForLine { $0.contains("\"refused\": true") }
        let events = try await TestClient.connect(TestClient.configuration(restarted.broker.url, id: "zoo-events"))
        try await events.subscribe("hgtest/$events")
        try await peer.set(aid: on.aid, iid: on.iid, json: "false")
        _ = try await restarted.watcher.inbox.first(timeout: HangGuard.standard) { $0.topic.string == topic && $0.payloadString == "false" }
        await events.stop()
        try await restarted.stop()
    }

    @Test("a pairing that fails after pair-setup leaves the device unpaired: the error is shown, nothing is stored, and pairing again works",
          arguments: ["database (never usable)", "verify"])
    func aFailedPairingIsUndone(_ step: String) async throws {
        // A database that never comes right (removal over IP needs none), or a pair-verify
        // refused once (the removal's own session is verified again).
        let peer = try await ZooPeer.start(database: "eve_energy", garbage: step != "verify")
        defer { Task { await peer.stop() } }
        if step == "verify" { try await peer.breakOnce("verify") }
        let folder = try TemporaryDirectory.make(prefix: "zoo-undo")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try Self.config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let data = folder.appendingPathComponent("data").path
        // Retried while pair-setup itself fails on HAP-python's setup-code quirk (about 1 in 85,
        // field notes), as every pairing in the tests is: the failure wanted here comes after it.
        var failed = try HomeGateProcess(["pair", "--config", configFile, "--data-dir", data, "--host", peer.host, "--port", String(peer.port), "--code", peer.pincode])
        for _ in 0..<4 {
            guard try await failed.waitForExit(timeout: .seconds(30)) != 0, failed.output.contains("refused the setup code") else { break }
            failed = try HomeGateProcess(["pair", "--config", configFile, "--data-dir", data, "--host", peer.host, "--port", String(peer.port), "--code", peer.pincode])
        }
        #expect(try await failed.waitForExit(timeout: .seconds(30)) != 0)
        #expect(failed.output.contains("told to forget the new pairing"), "\(failed.output)")
        _ = try await peer.waitForLine { $0.contains("\"unpaired\"") }
        let pairings = try HomeGateProcess(["pairings", "--config", configFile, "--data-dir", data])
        #expect(try await pairings.waitForExit() == 0)
        #expect(!pairings.output.contains(peer.deviceID), "\(pairings.output)")

        if step == "verify" { _ = try await peer.waitForLine { $0.contains(#""event": "broken", "step": "verify""#) } }
        try await peer.serveGarbage(false)
        let again = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder)
        #expect(again.contains("paired with"), "\(again)")
    }

    @Test("Home Assistant discovery of an Eve Energy: the outlet switch and power, energy, voltage and current sensors with HA's device classes, units and state classes")
    func eveEnergyInHomeAssistant() async throws {
        let peer = try await ZooPeer.start(database: "eve_energy")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "zoo-ha")
        let config = Self.config + "\nhome_assistant:\n  enabled: true\n"
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: config)
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        try await fixture.roundTrip()
        let configs = try await EcosystemTests.discoveryConfigs(fixture)
        let id = "hap-\(peer.deviceID.lowercased().filter { $0.isLetter || $0.isNumber })-1"
        let eve = try #require(EcosystemTests.config(of: id, in: configs), "\(configs.keys.sorted())")
        let components = EcosystemTests.components(eve.config)
        #expect(components.contains { $0["platform"] as? String == "switch" && $0["device_class"] as? String == "outlet" })
        for (deviceClass, unit, stateClass) in [("power", "W", "measurement"), ("energy", "kWh", "total_increasing"),
                                                ("voltage", "V", "measurement"), ("current", "A", "measurement")] {
            let sensor = components.first { $0["device_class"] as? String == deviceClass }
            #expect(sensor?["platform"] as? String == "sensor" && sensor?["unit_of_measurement"] as? String == unit
                        && sensor?["state_class"] as? String == stateClass, "\(deviceClass): \(String(describing: sensor))")
            let topic = try #require(sensor?["state_topic"] as? String)
            #expect(try await fixture.retained()[topic] != nil, "\(deviceClass) reads a retained value topic: \(topic)")
        }
        try await fixture.stop()
    }

    @Test("a whole service at once reaches a real device's database in one PUT /characteristics and is acknowledged once")
    func serviceSetInOneWrite() async throws {
        let peer = try await ZooPeer.start(database: "nanoleaf_bulb")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "zoo-service-set")
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder)
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let entries = try await Self.entries(fixture, database: "nanoleaf_bulb", deviceID: peer.deviceID)
        let on = try #require(entries.first { $0.topic.hasSuffix("/lightbulb/on") })
        let service = String(on.topic.dropLast("/on".count))
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "service-set"))
        try await results.subscribe("\(service)/set/result")
        try await HAPEndToEndTests.mosquittoPub(fixture.broker, "\(service)/set", #"{"on": true, "brightness": 40, "hue": 120, "saturation": 50}"#)
        let ack = try GatewayFixture.decode(try await results.inbox.first(on: "\(service)/set/result").payload)
        #expect(ack["ok"] as? Bool == true && (ack["results"] as? [Any])?.count == 4, "\(ack)")
        _ = try await peer.waitForLine { $0.contains("\"event\": \"put\", \"values\": 4") }
        #expect(!peer.logText().contains("\"event\": \"put\", \"values\": 1"), "not one PUT per characteristic")
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "\(service)/hue" && $0.payloadString == "120" }
        await results.stop()
        try await fixture.stop()
    }

    @Test("a hostile device (cut-off JSON, 100,000 nested arrays, a 10 MB body, an EVENT for nothing) is reported and kept unreachable; 10,000 characteristics are taken; the gateway and the other devices carry on", .loadTest)
    func aHostileDeviceIsContained() async throws {
        let (lamp, eve, fixture, entries) = try await Self.lampAndEve("zoo-hostile")
        defer { Task { await lamp.stop(); await eve.stop() } }
        let reachable = try #require(entries.first).topic.split(separator: "/").prefix(4).joined(separator: "/") + "/$reachable"
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "hostile-results"))
        try await results.subscribe("\(HAPEndToEndTests.lampOn)/set/result")

        try await eve.sendUnknownEvent()
        let failure = "Eve Energy 3A35 (\(eve.deviceID)) at 127.0.0.1:\(eve.port): "
        for (round, mode) in ["malformed", "deep", "huge"].enumerated() {
            let failuresBefore = fixture.gateway.output.components(separatedBy: failure).count
            let mark = fixture.watcher.inbox.all.count
            try await eve.hostile(mode)
            try await eve.dropConnections()
            _ = try await Self.next(fixture.watcher, after: mark) { $0.topic.string == reachable && $0.payloadString == "false" }
            _ = try await fixture.gateway.child.output.wait(timeout: HangGuard.standard, for: "\(mode): the failed read logged") {
                $0.components(separatedBy: failure).count > failuresBefore ? true : nil
            }
            // The lamp on the other device is still driven and acknowledged.
            let acks = results.inbox.all.count
            try await HAPEndToEndTests.mosquittoPub(fixture.broker, "\(HAPEndToEndTests.lampOn)/set", round % 2 == 0 ? "true" : "false")
            let ack = try GatewayFixture.decode(try await Self.next(results, after: acks) { $0.topic.string.hasSuffix("/set/result") }.payload)
            #expect(ack["ok"] as? Bool == true, "\(mode): \(ack)")
            let back = fixture.watcher.inbox.all.count
            try await eve.hostile(nil)
            // A hang guard, twice the standard one: on a busy two-core machine the reconnection's
            // backoff (up to 30 s) and the database's read take their time (seen over 40 s).
            _ = try await Self.next(fixture.watcher, after: back, timeout: HangGuard.standard * 2) { $0.topic.string == reachable && $0.payloadString == "true" }
        }
        let log = fixture.gateway.output
        #expect(log.contains("8388608"), "the 10 MB body is refused by its size:\n\(log.suffix(3000))")

        let mark = fixture.watcher.inbox.all.count
        try await eve.hostile("many")
        try await eve.dropConnections()
        _ = try await Self.next(fixture.watcher, after: mark, timeout: HangGuard.standard * 2) { $0.topic.string == reachable && $0.payloadString == "true" }
        await results.stop()
        try await fixture.stop()
    }

    @Test("a device that misbehaves on the wire (never answers, answers 3 s late, starts a chunked body it never ends, sends frames with a wrong auth tag) is reported and kept unreachable; the other device is driven meanwhile; it is back once it behaves", arguments: ["silent", "slow", "endless-chunked", "bad-tag"])
    func aMisbehavingDeviceIsContained(_ mode: String) async throws {
        let (lamp, eve, fixture, entries) = try await Self.lampAndEve("zoo-misbehaving")
        defer { Task { await lamp.stop(); await eve.stop() } }
        let reachable = try #require(entries.first).topic.split(separator: "/").prefix(4).joined(separator: "/") + "/$reachable"
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "misbehaving-results"))
        try await results.subscribe("\(HAPEndToEndTests.lampOn)/set/result")

        let mark = fixture.watcher.inbox.all.count
        let logged = fixture.gateway.output.count
        try await eve.misbehave(mode)
        if mode == "bad-tag" { try await eve.dropConnections() } // the next session's frames are the bad ones
        _ = try await Self.next(fixture.watcher, after: mark, timeout: .seconds(30)) { $0.topic.string == reachable && $0.payloadString == "false" }
        // The log line and the retained message travel separately: wait for the line.
        let deviceID = eve.deviceID
        _ = try await fixture.gateway.child.output.wait(timeout: HangGuard.standard, for: "the device named in the log") {
            $0.dropFirst(logged).contains(deviceID) ? true : nil
        }
        let acks = results.inbox.all.count
        try await HAPEndToEndTests.mosquittoPub(fixture.broker, "\(HAPEndToEndTests.lampOn)/set", "true")
        let ack = try GatewayFixture.decode(try await Self.next(results, after: acks) { $0.topic.string.hasSuffix("/set/result") }.payload)
        #expect(ack["ok"] as? Bool == true, "\(mode): \(ack)")
        let back = fixture.watcher.inbox.all.count
        try await eve.misbehave(nil)
        _ = try await Self.next(fixture.watcher, after: back, timeout: .seconds(60)) { $0.topic.string == reachable && $0.payloadString == "true" }
        await results.stop()
        try await fixture.stop()
    }

    @Test("an EVENT storm (20,000 changes of Eve's power at once): the last value is published, another device is driven meanwhile, memory stays bounded")
    func anEventStormIsContained() async throws {
        let (lamp, eve, fixture, entries) = try await Self.lampAndEve("zoo-storm")
        defer { Task { await lamp.stop(); await eve.stop() } }
        let power = try #require(entries.first { $0.aid == 1 && ($0.layout["iid"] as? Int) == 34 }?.topic)
        _ = try await eve.waitForLine { $0.contains(#""event": "subscribed""#) && $0.contains(#""iid": 34"#) }
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "storm-results"))
        try await results.subscribe("\(HAPEndToEndTests.lampOn)/set/result")

        try await eve.eventFlood(aid: 1, iid: 34, count: 20_000)
        for round in 0..<4 {
            let acks = results.inbox.all.count
            try await HAPEndToEndTests.mosquittoPub(fixture.broker, "\(HAPEndToEndTests.lampOn)/set", round % 2 == 0 ? "true" : "false")
            let ack = try GatewayFixture.decode(try await Self.next(results, after: acks, timeout: .seconds(30)) { $0.topic.string.hasSuffix("/set/result") }.payload)
            #expect(ack["ok"] as? Bool == true, "during the storm: \(ack)")
        }
        _ = try await fixture.watcher.inbox.first(timeout: .seconds(60)) { $0.topic.string == power && $0.payloadString == "19999" }
        let status = try String(contentsOfFile: "/proc/\(fixture.gateway.child.pid)/status", encoding: .utf8)
        let kilobytes = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) } ?? 0
        #expect(kilobytes > 0 && kilobytes < 200_000, "resident \(kilobytes) kB after the storm")
        await results.stop()
        try await fixture.stop()
    }

    /// A HAP-python lamp and an Eve Energy zoo peer, both paired, and the gateway running on them
    /// (in a folder named after `prefix`), with the Eve's layout entries.
    static func lampAndEve(_ prefix: String) async throws -> (HAPPeer, ZooPeer, GatewayFixture, [Entry]) {
        let lamp = try await HAPPeer.start(temperatureInterval: 0)
        let eve = try await ZooPeer.start(database: "eve_energy")
        let folder = try TemporaryDirectory.make(prefix: prefix)
        _ = try await HAPEndToEndTests.pair(lamp, folder: folder)
        _ = try await HAPEndToEndTests.pair(host: eve.host, port: eve.port, code: eve.pincode, folder: folder)
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        return (lamp, eve, fixture, try await Self.entries(fixture, database: "eve_energy", deviceID: eve.deviceID))
    }

    /// The first message received after the first `count` that matches.
    static func next(_ client: TestClient, after count: Int, timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable (Message) -> Bool) async throws -> Message {
        try await client.inbox.wait(timeout: timeout, for: "a matching message") { messages in
            messages.dropFirst(count).first(where: predicate)
        }
    }

    // MARK: - Helpers

    /// The layout's characteristics of the peer's accessories, each with its captured entry.
    static func entries(_ fixture: GatewayFixture, database: String, deviceID: String) async throws -> [Entry] {
        let prefix = "hap-\(deviceID.lowercased().filter { $0.isLetter || $0.isNumber })-"
        let captured = try ZooPeer.accessories(of: database)
        let layout = try await fixture.layout()
        var entries: [Entry] = []
        for home in layout["homes"] as? [[String: Any]] ?? [] {
            for accessory in home["accessories"] as? [[String: Any]] ?? [] {
                guard let id = accessory["id"] as? String, id.hasPrefix(prefix), let aid = Int(id.dropFirst(prefix.count)) else { continue }
                let device = captured.first { ($0["aid"] as? NSNumber)?.intValue == aid }
                for service in accessory["services"] as? [[String: Any]] ?? [] {
                    let serviceIID = service["iid"] as? Int
                    let capturedService = (device?["services"] as? [[String: Any]])?.first { ($0["iid"] as? NSNumber)?.intValue == serviceIID }
                    for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                        let iid = characteristic["iid"] as? Int
                        let match = (capturedService?["characteristics"] as? [[String: Any]])?.first { ($0["iid"] as? NSNumber)?.intValue == iid }
                        entries.append(Entry(aid: aid, layout: characteristic, captured: match ?? [:]))
                    }
                }
            }
        }
        return entries
    }

    /// Whether a published payload is the captured value: whole numbers exactly, floats as the
    /// same float32 without its noise, booleans from `true`/`1`, text and data as JSON strings.
    static func matches(_ published: String, _ expected: Any, _ entry: Entry) -> Bool {
        switch entry.format {
        case "bool":
            let truth = (expected as? Bool) ?? ((expected as? NSNumber)?.intValue ?? 0 != 0)
            return published == (truth ? "true" : "false")
        case "string", "data", "tlv8":
            // Text is published as a JSON string.
            let json = (try? JSONSerialization.data(withJSONObject: "\(expected)", options: .fragmentsAllowed)).map { String(decoding: $0, as: UTF8.self) }
            return (try? JSONSerialization.jsonObject(with: Data(published.utf8), options: .fragmentsAllowed)) as? String == "\(expected)" || published == json
        case "float":
            // The same single-precision float the device sent, in no more digits than it used
            // (120.5999984741211 as 120.6; 0.03 as 0.03, never rounded to a step of 0.1).
            guard let number = (expected as? NSNumber)?.doubleValue, let value = Double(published) else { return false }
            return Float(value) == Float(number) && published.count <= "\(number)".count
        default:
            guard let number = (expected as? NSNumber)?.doubleValue, let value = Double(published) else { return false }
            return value == number
        }
    }

    /// One set per writable format (bool, integer kinds, float, string), through mosquitto_pub:
    /// the device receives it and the gateway acknowledges it.
    static func writeOnePerFormat(_ entries: [Entry], fixture: GatewayFixture, peer: ZooPeer) async throws {
        try await writeOnePerFormat(entries, fixture: fixture, database: peer.database) { predicate in try await peer.waitForLine(where: predicate) }
    }

    /// The same for any peer that reports each write as a `"event": "write"` line.
    static func writeOnePerFormat(_ entries: [Entry], fixture: GatewayFixture, database: String,
                                  waitForLine: (@escaping @Sendable (String) -> Bool) async throws -> String) async throws {
        var done: Set<String> = []
        let results = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "zoo-results"))
        for entry in entries where entry.perms.contains("pw") && entry.perms.contains("pr") && !done.contains(entry.format) {
            guard let payload = Self.newValue(for: entry) else { continue }
            done.insert(entry.format)
            try await results.subscribe("\(entry.topic)/set/result")
            try await HAPEndToEndTests.mosquittoPub(fixture.broker, "\(entry.topic)/set", payload)
            let ack = try GatewayFixture.decode(try await results.inbox.first(on: "\(entry.topic)/set/result").payload)
            #expect(ack["ok"] as? Bool == true, "\(database): set \(entry.topic) = \(payload): \(ack)")
            let aid = entry.aid, iid = entry.iid
            _ = try await waitForLine { $0.contains("\"event\": \"write\", \"aid\": \(aid), \"iid\": \(iid),") }
        }
        let writable = entries.contains { $0.perms.contains("pw") && $0.perms.contains("pr") && Self.newValue(for: $0) != nil }
        #expect(done.isEmpty != writable, "\(database): written \(done.sorted())")
        await results.stop()
    }

    /// A valid value other than the current one, as a payload; nil for formats not written here.
    static func newValue(for entry: Entry) -> String? {
        let current = entry.captured["value"]
        switch entry.format {
        case "bool":
            let truth = (current as? Bool) ?? ((current as? NSNumber)?.intValue ?? 0 != 0)
            return truth ? "false" : "true"
        case "string":
            return "zoo"
        case "int", "uint8", "uint16", "uint32", "uint64", "float":
            let now = (current as? NSNumber)?.doubleValue
            if let valid = entry.layout["validValues"] as? [Double] {
                return valid.first { $0 != now }.map { String(Int($0)) }
            }
            let minimum = entry.layout["minValue"] as? Double ?? 0
            let step = entry.layout["minStep"] as? Double ?? 1
            let candidate = now == minimum ? minimum + step : minimum
            if let maximum = entry.layout["maxValue"] as? Double, candidate > maximum { return nil }
            return entry.format == "float" ? String(candidate) : String(Int(candidate))
        default:
            return nil
        }
    }
}

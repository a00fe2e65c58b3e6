import Foundation
import Harness
import Logging
import Matter
import MQTT
import Testing
import TestSupport

/// Matter devices through the real Matter Server (python-matter-server 8.1.2 and the CHIP SDK)
/// with real devices' node dumps imported (Home Assistant's fixtures, `Tests/Fixtures/matter/zoo`),
/// run by the real binary through a real Mosquitto.
@Suite(.serialized, .loadTest) struct MatterZooTests {
    static func config(_ server: MatterZooServer) -> String {
        """
        base_topic: hgtest
        log_level: info
        mqtt:
          url: mqtt://127.0.0.1:1883
        matter:
          url: \(server.url)
        homes:
          - name: Test Home
            primary: true
        """
    }

    static let room = "hgtest/test-home/default-room"

    /// The Matter accessories of an assembled layout.
    static func accessories(_ layout: [String: Any]?) -> [[String: Any]] {
        (layout?["homes"] as? [[String: Any]] ?? []).flatMap { $0["accessories"] as? [[String: Any]] ?? [] }
            .filter { ($0["id"] as? String)?.hasPrefix("matter-") == true }
    }

    @Test("every node of the zoo becomes an accessory with its services and its values retained; no topic is a UUID")
    func everyNodeIsAnAccessory() async throws {
        let fixtures = try MatterZooServer.fixtures()
        let folder = try TemporaryDirectory.make(prefix: "matter-zoo")
        let server = try await MatterZooServer.start(fixtures: fixtures, folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server), folder: folder)
        let count = server.nodes.count
        let layoutTopics = try await fixture.watcher.inbox.wait(for: "the layout with every node") { messages -> [String: String]? in
            var retained: [String: String] = [:]
            for message in messages where message.retain { retained[message.topic.string] = message.payloadString }
            return Self.accessories(LayoutAssembly.assemble(retained, base: "hgtest")).count >= count ? retained : nil
        }
        let accessories = Self.accessories(LayoutAssembly.assemble(layoutTopics, base: "hgtest"))
        for (name, node) in server.nodes {
            let root = accessories.filter { ($0["id"] as? String)?.hasSuffix("-\(node)") == true }
            #expect(root.count == 1, "\(name): node \(node) is \(root.count) accessories")
            // A bridge's bridged devices are accessories of their own, behind it.
            let ofNode = accessories.filter { ($0["id"] as? String).map { $0.hasSuffix("-\(node)") || $0.contains("-\(node)-") } == true }
            let services = ofNode.flatMap { $0["services"] as? [[String: Any]] ?? [] }
            #expect(!services.isEmpty, "\(name): no services")
        }
        let retained = try await fixture.retained()
        let topics = retained.keys.filter { $0.hasPrefix(Self.room) }
        #expect(!topics.contains { DeviceZooTests.hasUUID($0) }, "\(topics.filter { DeviceZooTests.hasUUID($0) })")
        #expect(retained["\(Self.room)/mock-extended-color-light/lightbulb/on"] == "true")
        #expect(retained["\(Self.room)/mock-extended-color-light/lightbulb/brightness"] == "50")
        #expect(retained["\(Self.room)/mock-extended-color-light/lightbulb/color-temperature"] == "284")
        #expect(retained["\(Self.room)/eve-door/contact-sensor/contact-sensor-state"] == "1")
        #expect(retained["\(Self.room)/yndx-00540/outlet/on"] == "true")
        #expect(retained["\(Self.room)/smoke-sensor/battery-service/battery-level"] == "94")
        #expect(retained["\(Self.room)/mock-extended-color-light/$reachable"] == "true")
        // The values published equal the server's own attribute values after the table's
        // conversion, checked by a script that asks the server and the broker directly.
        let check = try ChildProcess(PackageRoot.url.appendingPathComponent(".venv-matter/bin/python").path,
                                     [PackageRoot.url.appendingPathComponent("Tests/Fixtures/matter/check_values.py").path, "--server", server.url,
                                      "--broker-port", String(fixture.broker.url.port), "--base", "hgtest"])
        #expect(try await check.waitForExit() == 0, "\(check.output.value)")
        let checked = (try? JSONSerialization.jsonObject(with: Data((check.output.value.split(separator: "\n").last ?? "").utf8)) as? [String: Any])?["checked"] as? Int
        #expect((checked ?? 0) >= 200, "\(check.output.value)")
        try await fixture.stop()
    }

    @Test("a set becomes the Matter command and is acknowledged when the server answered; a read-only one is refused before it reaches the server")
    func setsAreAcknowledged() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-set")
        let server = try await MatterZooServer.start(fixtures: ["extended_color_light", "door_lock"], folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server), folder: folder)
        let light = "\(Self.room)/mock-extended-color-light/lightbulb"
        let off = try await fixture.command("\(light)/on/set", "false")
        #expect(off["ok"] as? Bool == true, "\(off)")
        let node = try #require(server.nodes["extended_color_light"])
        #expect(server.logHasLine(["send_device_command called for test node \(node)", "cluster_id: 6", "command_name: Off"]), "\(server.logText().suffix(2000))")
        let dim = try await fixture.command("\(light)/brightness/set", "30")
        #expect(dim["ok"] as? Bool == true, "\(dim)")
        #expect(server.logHasLine(["send_device_command called for test node \(node)", "command_name: MoveToLevelWithOnOff", "'level': 76"]))
        let color = try await fixture.command("\(light)/set", #"{"hue": 180, "saturation": 50}"#)
        #expect(color["ok"] as? Bool == true, "\(color)")
        #expect(server.logHasLine(["send_device_command called for test node \(node)", "command_name: MoveToHueAndSaturation", "'hue': 127", "'saturation': 127"]),
                "\(server.logText().suffix(2000))")
        let lock = try await fixture.command("\(Self.room)/mock-door-lock/lock-mechanism/lock-target-state/set", "1")
        #expect(lock["ok"] as? Bool == true, "\(lock)")
        let lockNode = try #require(server.nodes["door_lock"])
        #expect(server.logHasLine(["send_device_command called for test node \(lockNode)", "command_name: LockDoor"]))
        let readOnly = try await fixture.command("\(Self.room)/mock-door-lock/lock-mechanism/lock-current-state/set", "1")
        #expect(readOnly["status"] as? Int == -70404 && readOnly["ok"] as? Bool == false, "\(readOnly)")
        try await fixture.stop()
    }

    @Test("colour temperature, a covering's position, a thermostat's setpoint and a valve are set as the table says: each the Matter command or attribute write, acknowledged")
    func moreSetsAreAcknowledged() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-sets")
        let server = try await MatterZooServer.start(fixtures: ["color_temperature_light", "eve_shutter", "eve_thermo", "mock_valve"], folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server), folder: folder)
        let retained = try await fixture.watcher.inbox.wait(for: "the four nodes in the layout") { messages -> [String: String]? in
            var retained: [String: String] = [:]
            for message in messages where message.retain { retained[message.topic.string] = message.payloadString }
            return Self.accessories(LayoutAssembly.assemble(retained, base: "hgtest")).count >= 4 ? retained : nil
        }
        let layout = LayoutAssembly.assemble(retained, base: "hgtest")
        func topic(_ fixtureName: String, _ service: String, _ characteristic: String) throws -> String {
            let node = try #require(server.nodes[fixtureName])
            let accessory = try #require(Self.accessories(layout).first { ($0["id"] as? String)?.hasSuffix("-\(node)") == true })
            let services = accessory["services"] as? [[String: Any]] ?? []
            let found = services.first { $0["type"] as? String == service }?["characteristics"] as? [[String: Any]]
            return try #require(found?.first { $0["type"] as? String == characteristic }?["topic"] as? String, "\(fixtureName): no \(service)/\(characteristic)")
        }
        func expectSet(_ topic: String, _ value: String, logged parts: [String], node fixtureName: String) async throws {
            let node = try #require(server.nodes[fixtureName])
            let answer = try await fixture.command("\(topic)/set", value)
            #expect(answer["ok"] as? Bool == true, "\(topic): \(answer)")
            #expect(server.logHasLine(["called for test node \(node)"] + parts), "\(topic): \(server.logText().suffix(2000))")
        }
        try await expectSet(try topic("color_temperature_light", "lightbulb", "color-temperature"), "250",
                            logged: ["command_name: MoveToColorTemperature", "'colorTemperatureMireds': 250"], node: "color_temperature_light")
        try await expectSet(try topic("eve_shutter", "window-covering", "target-position"), "30",
                            logged: ["command_name: GoToLiftPercentage", "'liftPercent100thsValue': 7000"], node: "eve_shutter")
        try await expectSet(try topic("eve_thermo", "thermostat", "target-temperature"), "21.5",
                            logged: ["write_attribute called", "/513/18", "2150"], node: "eve_thermo")
        try await expectSet(try topic("mock_valve", "valve", "active"), "1", logged: ["command_name: Open"], node: "mock_valve")
        try await fixture.stop()
    }

    @Test("Home Assistant discovery of Matter accessories comes from the tree as for HomeKit ones: a light, a plug, a lock and a thermostat each a device with its entity")
    func homeAssistantDiscovery() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-ha")
        let nodes = ["extended_color_light": "light", "eve_energy_plug": "switch", "door_lock": "lock", "eve_thermo": "climate"]
        let server = try await MatterZooServer.start(fixtures: Array(nodes.keys).sorted(), folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server) + "\nhome_assistant:\n  enabled: true\n", folder: folder)
        _ = try await fixture.watcher.inbox.wait(for: "the four nodes in the layout") { messages -> Bool? in
            var retained: [String: String] = [:]
            for message in messages where message.retain { retained[message.topic.string] = message.payloadString }
            return Self.accessories(LayoutAssembly.assemble(retained, base: "hgtest")).count >= 4 ? true : nil
        }
        let layout = try await fixture.layout()
        let configs = try await EcosystemTests.discoveryConfigs(fixture)
        for (name, platform) in nodes.sorted(by: { $0.key < $1.key }) {
            let node = try #require(server.nodes[name])
            let id = try #require(Self.accessories(layout).compactMap { $0["id"] as? String }.first { $0.hasSuffix("-\(node)") })
            let config = try #require(EcosystemTests.config(of: id, in: configs), "\(name): no discovery config for \(id) among \(configs.keys.sorted())")
            let platforms = EcosystemTests.components(config.config).compactMap { ($0["platform"] ?? $0["p"]) as? String }
            #expect(platforms.contains(platform), "\(name): \(platforms)")
        }
        try await fixture.stop()
    }

    @Test("the Matter Server stopping makes its accessories unreachable; started again, they are reachable again")
    func serverOutage() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-outage")
        let server = try await MatterZooServer.start(fixtures: ["eve_contact_sensor"], folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server), folder: folder)
        let reachable = "\(Self.room)/eve-door/$reachable"
        _ = try await fixture.watcher.inbox.first { $0.topic.string == reachable && $0.payloadString == "true" }
        let seen = fixture.watcher.inbox.all.count
        try await server.stopServer()
        _ = try await fixture.watcher.inbox.first { $0.topic.string == reachable && $0.payloadString == "false" }
        try await server.startServer()
        _ = try await fixture.watcher.inbox.wait(for: "\(reachable) true again") { messages in
            messages.dropFirst(seen).first { $0.topic.string == reachable && $0.payloadString == "true" }
        }
        try await fixture.stop()
    }

    @Test("unpair removes the node from HomeGate's fabric only: its accessories leave the home, the server no longer has it, the other node stays")
    func unpair() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-unpair")
        let server = try await MatterZooServer.start(fixtures: ["eve_contact_sensor", "leak_sensor"], folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server), folder: folder)
        let contact = try #require(server.nodes["eve_contact_sensor"])
        let layout = try await fixture.layout()
        let ids = Self.accessories(layout).compactMap { $0["id"] as? String }
        let id = try #require(ids.first { $0.hasSuffix("-\(contact)") })
        let answer = try await fixture.request("accessory/unpair", #"{"accessory": "\#(id)"}"#)
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "\(Self.room)/eve-door/$reachable" && $0.payload.isEmpty }
        #expect(try await server.nodeIDs() == [try #require(server.nodes["leak_sensor"])])
        try await fixture.stop()
    }

    @Test("a pairing request with a mistyped Matter code is refused before the server sees it; without a matter: section, Matter pairing is not allowed")
    func pairingRefusals() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-pair")
        let server = try await MatterZooServer.start(fixtures: [], folder: folder)
        defer { Task { await server.stop() } }
        let fixture = try await GatewayFixture.start(config: Self.config(server), folder: folder)
        let mistyped = try await fixture.request("accessory/pair", #"{"transport": "matter", "code": "3497-011-2331"}"#)
        #expect(mistyped["ok"] as? Bool == false && mistyped["error"] as? String == "invalid-request", "\(mistyped)")
        #expect((mistyped["message"] as? String)?.contains("check digit") == true, "\(mistyped)")
        #expect(!server.logText().contains("Starting Matter commissioning with code"), "\(server.logText().suffix(2000))")
        try await fixture.stop()

        let plain = try await GatewayFixture.start(config: HAPEndToEndTests.config)
        let refused = try await plain.request("accessory/pair", #"{"transport": "matter", "code": "34970112332"}"#)
        #expect(refused["error"] as? String == "not-allowed", "\(refused)")
        try await plain.stop()
    }

    @Test("the Matter client's time limit: a command the server has not answered in time fails as timed out, its late answer is dropped, and the connection goes on")
    func commandTimeLimit() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-limit")
        let server = try await MatterZooServer.start(fixtures: ["eve_contact_sensor"], folder: folder)
        defer { Task { await server.stop() } }
        let outcomes = try await Client.withConnection(Client.Configuration(url: server.url), logger: Logger(label: "test")) { connection in
            // Discovery browses mDNS for seconds before the server answers.
            var discover: ServerError?
            do throws(ServerError) {
                _ = try await connection.send("discover", timeout: .milliseconds(100))
            } catch {
                discover = error
            }
            let nodes = try await connection.send("get_nodes")
            let cancelled = Task { try await connection.send("discover") }
            cancelled.cancel()
            let cancelledOutcome = await cancelled.result
            let again = try await connection.send("get_nodes")
            return (discover, nodes.array?.count, cancelledOutcome, again.array?.count)
        }
        guard case .timedOut(let what)? = outcomes.0 else {
            Issue.record("discover within 100 ms: \(String(describing: outcomes.0))")
            return
        }
        #expect(what.contains("discover"))
        #expect(outcomes.1 == 1 && outcomes.3 == 1, "get_nodes after the time limit: \(String(describing: outcomes.1)), \(String(describing: outcomes.3))")
        guard case .failure = outcomes.2 else {
            Issue.record("a cancelled command ended with \(outcomes.2)")
            return
        }
    }

    @Test("homegate pair --matter checks the code before anything else, and needs a matter: section")
    func pairCommandRefusals() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-cli")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try HAPEndToEndTests.config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let mistyped = try HomeGateProcess(["pair", "--config", configFile, "--matter", "3497-011-2331"])
        #expect(try await mistyped.waitForExit() == 64)
        #expect(mistyped.output.contains("check digit"), "\(mistyped.output)")
        let noSection = try HomeGateProcess(["pair", "--config", configFile, "--matter", "34970112332"])
        #expect(try await noSection.waitForExit() == 78)
        #expect(noSection.output.contains("has no matter: section"), "\(noSection.output)")
    }

    @Test("matter: managed: true runs the Matter Server with the gateway, its storage under the data directory, and stops it with the gateway")
    func managedServer() async throws {
        let folder = try TemporaryDirectory.make(prefix: "matter-managed")
        let port = try FreePort.next()
        let command = PackageRoot.url.appendingPathComponent(".venv-matter/bin/matter-server").path
        guard FileManager.default.isExecutableFile(atPath: command) else {
            Issue.record("the Matter Server is not installed at .venv-matter: run scripts/setup --matter")
            return
        }
        let config = HAPEndToEndTests.config + "\nmatter:\n  managed: true\n  port: \(port)\n  command: \(command)\n"
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        _ = try await fixture.gateway.waitForOutput(containing: "Matter Server ws://127.0.0.1:\(port)/ws: 0 nodes")
        let storage = folder.appendingPathComponent("data/matter")
        #expect(FileManager.default.fileExists(atPath: storage.appendingPathComponent("server.log").path))
        let mode = try FileManager.default.attributesOfItem(atPath: storage.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        try await fixture.stop()
        // Stopped with the gateway: nothing listens on its port any more.
        #expect(!FreePort.accepts(port))
    }
}

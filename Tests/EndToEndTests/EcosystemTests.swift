import Foundation
import Testing
import TestSupport

/// Home Assistant discovery, per-service JSON, the metrics endpoint and the systemd unit, with the
/// real gateway on a real broker.
@Suite("ecosystem: Home Assistant, JSON per service, metrics, systemd", .startsProcesses)
struct EcosystemTests {
    static func demo(extra: String) throws -> String {
        try GatewayFixture.demoText(appending: extra)
    }

    /// Every discovery config retained under `homeassistant/device/`, by topic, decoded.
    static func discoveryConfigs(_ fixture: GatewayFixture) async throws -> [String: [String: Any]] {
        let client = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "ha"))
        let marker = "probe/\(UUID().uuidString)"
        try await client.subscribe("homeassistant/device/+/config")
        try await client.subscribe(marker)
        try await client.publish(marker, "end")
        _ = try await client.inbox.first(on: marker)
        await client.stop()
        var configs: [String: [String: Any]] = [:]
        for message in client.inbox.all where message.retain && message.topic.string.hasPrefix("homeassistant/device/") {
            configs[message.topic.string] = try GatewayFixture.decode(message.payload)
        }
        return configs
    }

    static func config(of id: String, in configs: [String: [String: Any]]) -> (topic: String, config: [String: Any])? {
        for (topic, config) in configs {
            let device = (config["device"] ?? config["dev"]) as? [String: Any]
            let identifiers = (device?["identifiers"] ?? device?["ids"]) as? [String] ?? []
            if identifiers.contains("homegate_\(id)") { return (topic, config) }
        }
        return nil
    }

    static func components(_ config: [String: Any]) -> [[String: Any]] {
        ((config["components"] ?? config["cmps"]) as? [String: [String: Any]] ?? [:]).map(\.value)
    }

    @Test("a renamed accessory shows only its new name in Home Assistant (its namesake service follows); a removed one stays gone after a restart")
    func renameAndRemovalAsHomeAssistantSeesThem() async throws {
        let fixture = try await GatewayFixture.start(config: Self.demo(extra: "home_assistant:\n  enabled: true\n"))
        let renamed = try await fixture.request("accessory/rename", #"{"accessory": "Floor Lamp", "newName": "Standing Lamp"}"#)
        #expect(renamed["ok"] as? Bool == true, "\(renamed)")
        try await fixture.roundTripForEcosystem()
        let lamp = try #require(Self.config(of: "sim-lamp-1", in: try await Self.discoveryConfigs(fixture)))
        #expect((lamp.config["device"] as? [String: Any] ?? lamp.config["dev"] as? [String: Any])?["name"] as? String == "Standing Lamp")
        let names = Self.components(lamp.config).compactMap { $0["name"] as? String }
        #expect(!names.contains { $0.contains("Floor Lamp") }, "no component keeps the old name: \(names)")
        let layout = try await fixture.layout()
        let lampLayout = try #require(TreeLayout.accessory("sim-lamp-1", in: layout))
        let service = try #require(TreeLayout.services(lampLayout).first)
        #expect(service["name"] as? String == "Standing Lamp")

        let removed = try await fixture.request("accessory/remove", #"{"accessory": "Coffee Machine"}"#)
        #expect(removed["ok"] as? Bool == true, "\(removed)")
        try await fixture.roundTripForEcosystem()
        try await fixture.stop(keepBroker: true)
        let restarted = try await GatewayFixture.start(config: try String(contentsOfFile: fixture.configFile, encoding: .utf8), broker: fixture.broker, folder: fixture.folder)
        try await restarted.roundTripForEcosystem()
        #expect(TreeLayout.accessory("sim-coffee-machine", in: try await restarted.layout()) == nil, "removed over MQTT: stays removed")
        #expect(!restarted.gateway.output.contains("sim-coffee-machine (Coffee Machine) joins"), "\(restarted.gateway.output)")
        #expect(try await restarted.retained().keys.filter { $0.contains("coffee-machine") }.isEmpty)
        #expect(Self.config(of: "sim-coffee-machine", in: try await Self.discoveryConfigs(restarted)) == nil)
        try await restarted.stop()
    }

    @Test("discovery: one retained config per accessory, with device, area, bridge, availability and command topics")
    func discovery() async throws {
        let fixture = try await GatewayFixture.start(config: Self.demo(extra: "home_assistant:\n  enabled: true\n"))
        try await fixture.roundTripForEcosystem()
        let configs = try await Self.discoveryConfigs(fixture)
        let (_, lamp) = try #require(Self.config(of: "sim-lamp-1", in: configs), "the floor lamp has a discovery config: \(configs.keys.sorted())")
        let device = try #require((lamp["device"] ?? lamp["dev"]) as? [String: Any])
        #expect(device["name"] as? String == "Floor Lamp")
        #expect(device["suggested_area"] as? String == "Living Room")
        let availability = try #require((lamp["availability"] ?? lamp["avty"]) as? [[String: Any]])
        let availabilityTopics = availability.compactMap { ($0["topic"] ?? $0["t"]) as? String }
        #expect(availabilityTopics.contains("homegate/$state"))
        #expect(availabilityTopics.contains("homeassistant/device/homegate_sim-lamp-1/reachable"))
        let probe = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "ha-reachable"))
        try await probe.subscribe("homeassistant/device/homegate_sim-lamp-1/reachable")
        let reachable = try await probe.inbox.first(on: "homeassistant/device/homegate_sim-lamp-1/reachable")
        await probe.stop()
        #expect(reachable.retain && reachable.payloadString == "true", "Home Assistant's copy of $reachable, retained")
        let light = try #require(Self.components(lamp).first { ($0["platform"] ?? $0["p"]) as? String == "light" })
        #expect((light["command_topic"] ?? light["cmd_t"]) as? String == "homegate/demo-home/living-room/floor-lamp/lightbulb/on/set")
        #expect((light["state_topic"] ?? light["stat_t"]) as? String == "homegate/demo-home/living-room/floor-lamp/lightbulb/on")
        let (_, bedside) = try #require(Self.config(of: "sim-hue-bedside", in: configs))
        let bedsideDevice = try #require((bedside["device"] ?? bedside["dev"]) as? [String: Any])
        #expect((bedsideDevice["via_device"]) as? String == "homegate_sim-hue-bridge", "a bridged accessory names its bridge")
        let (_, thermostat) = try #require(Self.config(of: "sim-thermostat", in: configs))
        #expect(Self.components(thermostat).contains { ($0["platform"] ?? $0["p"]) as? String == "climate" })
        let (_, lock) = try #require(Self.config(of: "sim-front-door-lock", in: configs))
        #expect(Self.components(lock).contains { ($0["platform"] ?? $0["p"]) as? String == "lock" })
        try await fixture.stop()
    }

    @Test("discovery: a rename updates the config in place; a removed accessory's config is cleared; HA's online status republishes")
    func discoveryLifecycle() async throws {
        let config = try Self.demo(extra: "home_assistant:\n  enabled: true\n")
        let fixture = try await GatewayFixture.start(config: config)
        try await fixture.roundTripForEcosystem()
        let before = try await Self.discoveryConfigs(fixture)
        let (topic, lamp) = try #require(Self.config(of: "sim-lamp-1", in: before))
        let uniqueIDs = Set(Self.components(lamp).compactMap { ($0["unique_id"] ?? $0["uniq_id"]) as? String })
        #expect(!uniqueIDs.isEmpty)

        // Home Assistant restarted: it says online, the configs come again.
        let watcher = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "ha-watch"))
        try await watcher.subscribe(topic, retainAsPublished: true)
        _ = try await watcher.inbox.first(on: topic)
        let seen = watcher.inbox.all.count
        try await watcher.publish("homeassistant/status", "online")
        _ = try await watcher.inbox.collect(seen + 1) { $0.topic.string == topic }
        await watcher.stop()

        // A rename by SIGHUP: same topic, same unique ids, the new name.
        let renamed = config.replacingOccurrences(of: "        name: Floor Lamp\n", with: "        name: Reading Light\n")
        #expect(renamed != config)
        try renamed.write(toFile: fixture.configFile, atomically: true, encoding: .utf8)
        fixture.gateway.signal(SIGHUP)
        try await fixture.gateway.waitForOutput(containing: "configuration reloaded")
        try await fixture.roundTripForEcosystem()
        let after = try await Self.discoveryConfigs(fixture)
        let (sameTopic, updated) = try #require(Self.config(of: "sim-lamp-1", in: after))
        #expect(sameTopic == topic, "the identity follows the stable id, not the name")
        #expect(((updated["device"] ?? updated["dev"]) as? [String: Any])?["name"] as? String == "Reading Light")
        #expect(Set(Self.components(updated).compactMap { ($0["unique_id"] ?? $0["uniq_id"]) as? String }) == uniqueIDs)

        // Removed from the file while the gateway is down: its config is cleared at the next start.
        try await fixture.stop(keepBroker: true)
        let removed = renamed.replacingOccurrences(of: "      - id: sim-lamp-1\n", with: "      - id: sim-lamp-gone\n")
            .replacingOccurrences(of: "        name: Reading Light\n", with: "        name: Other Lamp\n")
        let restarted = try await GatewayFixture.start(config: removed, broker: fixture.broker, folder: fixture.folder)
        try await restarted.roundTripForEcosystem()
        let finally = try await Self.discoveryConfigs(restarted)
        #expect(finally[topic] == nil, "the removed accessory's discovery config is cleared")
        #expect(Self.config(of: "sim-lamp-gone", in: finally) != nil)
        try await restarted.stop()
    }

    @Test("output both: one retained JSON object per service, following the values")
    func jsonPerService() async throws {
        let fixture = try await GatewayFixture.start(config: Self.demo(extra: "gateway:\n  output: both\n"))
        let serviceTopic = "homegate/demo-home/living-room/floor-lamp/lightbulb"
        let initial = try await fixture.retained()
        #expect(initial[serviceTopic] == #"{"brightness":40,"hue":30,"on":false,"saturation":60}"#)
        #expect(initial["\(serviceTopic)/brightness"] == "40", "values keep their own topics too")
        let ack = try await fixture.command("\(serviceTopic)/brightness/set", "80")
        #expect(ack["ok"] as? Bool == true)
        #expect(try await fixture.retained()[serviceTopic] == #"{"brightness":80,"hue":30,"on":false,"saturation":60}"#)
        try await fixture.stop()
    }

    @Test("output json: service objects only; sets still work per characteristic")
    func jsonOnly() async throws {
        let fixture = try await GatewayFixture.start(config: Self.demo(extra: "gateway:\n  output: json\n"))
        let serviceTopic = "homegate/demo-home/living-room/floor-lamp/lightbulb"
        let ack = try await fixture.command("\(serviceTopic)/on/set", "on")
        #expect(ack["ok"] as? Bool == true)
        let retained = try await fixture.retained()
        #expect(retained[serviceTopic] == #"{"brightness":40,"hue":30,"on":true,"saturation":60}"#)
        #expect(retained["\(serviceTopic)/on"] == nil, "no value topics with output json")
        try await fixture.stop()
    }

    @Test("metrics: /metrics answers Prometheus text that promtool passes, counts a set by status in words, with process figures and build info; /health answers 200 while connected")
    func metrics() async throws {
        let testStarted = Date().timeIntervalSince1970
        let port = try FreePort.next()
        let fixture = try await GatewayFixture.start(config: Self.demo(extra: "metrics:\n  port: \(port)\n"))
        let ack = try await fixture.command("homegate/demo-home/living-room/floor-lamp/lightbulb/on/set", "on")
        #expect(ack["ok"] as? Bool == true)
        let curl = try Executable.locate("curl", install: "apt-get install curl")
        let metrics = try ChildProcess(curl, ["-s", "-i", "http://127.0.0.1:\(port)/metrics"])
        #expect(try await metrics.waitForExit() == 0)
        let text = metrics.output.value
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(200))")
        #expect(text.contains("text/plain; version=0.0.4"))
        #expect(text.contains(#"homegate_commands_total{kind="set"} 1"#), "\(text)")
        #expect(text.contains(#"homegate_acknowledgements_total{status="success"} 1"#), "\(text)")
        #expect(text.contains("homegate_accessories 11"))
        #expect(text.contains("homegate_accessories_reachable 10"))
        #expect(text.contains("homegate_acknowledgement_seconds_count 1"))
        #expect(text.contains(#"homegate_build_info{version="0.1.0"} 1"#), "\(text)")
        for family in Self.families {
            #expect(text.contains("# HELP \(family) "), "\(family) has its help text")
        }
        let values = Self.values(text)
        try Self.expectProcessFigures(values, of: fixture.gateway.child.pid, startedAfter: testStarted)

        let problems = try await Self.promtoolProblems(port: port)
        #expect(problems.exitStatus == 0 && problems.output.isEmpty, "promtool check metrics: exit \(problems.exitStatus):\n\(problems.output)")

        let health = try ChildProcess(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/health"])
        #expect(try await health.waitForExit() == 0)
        #expect(health.output.value == "200")
        try await fixture.stop()
    }

    /// Every family `/metrics` serves, each of which must have its HELP line.
    static let families = [
        "homegate_commands_total", "homegate_acknowledgements_total", "homegate_acknowledgement_seconds", "homegate_mqtt_reconnects_total",
        "homegate_mqtt_connected", "homegate_accessories", "homegate_accessories_reachable", "homegate_queue_depth",
        "homegate_mqtt_messages_received_total", "homegate_build_info",
        "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_start_time_seconds",
        "process_open_fds", "process_max_fds", "process_threads",
    ]

    /// The samples without labels, by name.
    static func values(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.contains("{") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// The process figures agree with what the kernel says of the gateway's process.
    static func expectProcessFigures(_ values: [String: Double], of pid: pid_t, startedAfter testStarted: Double) throws {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func statusField(_ name: String) -> Double? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Double($0.dropFirst(name.count + 1).split(whereSeparator: \.isWhitespace).first ?? "") }
        }
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let softLimit = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
            .flatMap { Double($0.dropFirst("Max open files".count).split(separator: " ").first ?? "") }
        let openFiles = Double(try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count)

        let resident = try #require(values["process_resident_memory_bytes"])
        let kernelResident = try #require(statusField("VmRSS")) * 1024
        #expect(resident > 1_000_000 && resident / kernelResident > 0.5 && resident / kernelResident < 2, "resident \(resident), VmRSS \(kernelResident)")
        let virtual = try #require(values["process_virtual_memory_bytes"])
        let kernelVirtual = try #require(statusField("VmSize")) * 1024
        #expect(virtual >= resident && abs(virtual - kernelVirtual) < virtual / 2, "virtual \(virtual), VmSize \(kernelVirtual)")
        #expect(values["process_max_fds"] == softLimit, "max fds \(values["process_max_fds"] ?? -1), limit \(softLimit ?? -1)")
        let open = try #require(values["process_open_fds"])
        #expect(open >= 3 && abs(open - openFiles) <= 5, "open fds \(open), /proc says \(openFiles)")
        let threads = try #require(values["process_threads"])
        let kernelThreads = try #require(statusField("Threads"))
        #expect(threads >= 2 && abs(threads - kernelThreads) <= 8, "threads \(threads), /proc says \(kernelThreads)")
        let start = try #require(values["process_start_time_seconds"])
        #expect(start >= testStarted - 2 && start <= Date().timeIntervalSince1970 + 1, "start \(start), test started \(testStarted)")
        let cpu = try #require(values["process_cpu_seconds_total"])
        #expect(cpu > 0 && cpu < Date().timeIntervalSince1970 - testStarted + 60, "cpu seconds \(cpu)")
    }

    /// `promtool check metrics` on a fresh scrape, read on its standard input: its exit status
    /// and what it said (nothing when the text is clean).
    static func promtoolProblems(port: Int) async throws -> (exitStatus: Int32, output: String) {
        let promtool = try Executable.locate("promtool", install: "run scripts/setup (or: apt-get install prometheus, which provides promtool)")
        let curl = try Executable.locate("curl", install: "apt-get install curl")
        let folder = try TemporaryDirectory.make(prefix: "scrape")
        let scrape = folder.appendingPathComponent("metrics.txt").path
        let download = try ChildProcess(curl, ["-s", "-o", scrape, "http://127.0.0.1:\(port)/metrics"])
        #expect(try await download.waitForExit() == 0)
        let check = try ChildProcess("/bin/sh", ["-c", #"exec "$0" check metrics < "$1""#, promtool, scrape])
        return (try await check.waitForExit(), check.output.value)
    }

    @Test("the systemd unit in config/ verifies")
    func systemdUnit() async throws {
        let analyze = try Executable.locate("systemd-analyze", install: "run scripts/setup (or: apt-get install systemd)")
        let folder = try TemporaryDirectory.make(prefix: "unit")
        let unit = try String(contentsOf: PackageRoot.url.appendingPathComponent("config/homegate.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/homegate", with: try HomeGateProcess.binary())
        let path = folder.appendingPathComponent("homegate.service").path
        try unit.write(toFile: path, atomically: true, encoding: .utf8)
        let verify = try ChildProcess(analyze, ["verify", path])
        #expect(try await verify.waitForExit() == 0, "\(verify.output.value)")
        #expect(verify.output.value.isEmpty, "\(verify.output.value)")
    }
}

extension GatewayFixture {
    /// After a request round trip through the gateway, everything it published before is at the broker.
    func roundTripForEcosystem() async throws {
        _ = try await request("gateway/statistics", "{}")
    }
}

import Foundation
import Harness
import Logging
import Matter
import MQTT
import Wire

/// The Matter section: a set through HomeGate and the Matter Server to a real Matter device
/// (a CircuitMatter on/off light in the live lab, `Tests/Fixtures/matter/live`) and back as the
/// acknowledgement, against the floor: the Matter Server's own Python client
/// (`matter_server.client`, as Home Assistant uses it) sending the same On and Off commands to the
/// same node, in the same run. Target: p50 at most 1.2x the floor.
///
/// Where HomeGate's time goes beside it, in the same turns: HomeGate's own Matter client (the
/// `Matter` module's WebSocket client sending the same commands, no engine, no MQTT), and the
/// gateway's own time per set as it reports it (`gateway/statistics`: from the set's arrival at
/// its MQTT client to the acknowledgement handed back, the device's answer included). So the
/// MQTT set -> acknowledgement splits into the broker's two hops (the set and its
/// acknowledgement: total minus the gateway's time), the engine (the gateway's time minus its own
/// client's round trip), and the round trip through the server to the device.
enum MatterBench {
    struct Figures: Codable {
        let homegate: Latencies
        let serverClient: Latencies
        /// HomeGate's own Matter client alone, the same commands.
        let ownClient: Latencies
        /// The gateway's own time per set (p50 of each HomeGate turn, µs), from its statistics.
        let gatewayTime: [Double]
        /// The CPU time and context switches of the gateway and the broker per measured set
        /// (both HomeGate turns): what a set through HomeGate adds on a machine whose cores the
        /// Matter Server and the device also need.
        let cpu: CPUPerSet?
        var ratio: Double { homegate.p50 / max(serverClient.p50, 0.001) }
    }

    static func run(iterations: Int) async throws -> Figures {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("homegate-bench-matter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        Bench.log("Matter: the live lab (python-matter-server 8.1.2, a CircuitMatter on/off light)")
        let lab = try await MatterLab.start(kinds: ["onoff"], folder: folder)
        defer { Task { await lab.stop() } }
        let broker = try await Mosquitto.start()
        defer { Task { await broker.stop() } }
        let config = folder.appendingPathComponent("homegate.yml").path
        try """
            base_topic: hgbench
            mqtt:
              url: \(broker.url)
            matter:
              url: \(lab.url)
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let data = folder.appendingPathComponent("data").path
        let pair = try HomeGateProcess(["pair", "--config", config, "--data-dir", data, "--matter", try lab.device("onoff").qr])
        guard try await pair.waitForExit(timeout: .seconds(300)) == 0,
              let node = pair.output.firstMatch(of: /as node (\d+)/).flatMap({ Int($0.1) }) else {
            throw FixtureError("commissioning the lab's light failed: \(pair.output)")
        }
        // In turns, so that neither side gets the quieter moments: the floor, then HomeGate (the
        // gateway stopped before the floor runs again: its reads after the sets, 1.5 s after
        // each, are not to load the device meanwhile), twice.
        let topic = "hgbench/home/default-room/circuitmatter/lightbulb/on/set"
        var ours: [Duration] = []
        var theirs: [Duration] = []
        var own: [Duration] = []
        var gatewayTime: [Double] = []
        var gatewayCPU = ProcessCPU.Sample()
        var brokerCPU = ProcessCPU.Sample()
        for turn in 1...2 {
            Bench.log("Matter, turn \(turn): \(iterations / 2) commands from the server's own Python client to node \(node)")
            theirs += try await serverClient(url: lab.url, node: node, count: iterations / 2)
            Bench.log("Matter, turn \(turn): \(iterations / 2) commands from HomeGate's own Matter client")
            own += try await ownClient(url: lab.url, node: node, count: iterations / 2)
            Bench.log("Matter, turn \(turn): \(iterations / 2) sets through HomeGate (\(topic))")
            let gateway = try HomeGateProcess(["run", "--config", config, "--data-dir", data])
            try await gateway.waitForOutput(containing: "synchronised with the broker")
            _ = try await sets(broker: broker, topic: topic, count: 0, warmUp: 20)
            _ = try await Measure.gatewayStatistics(broker: broker, base: "hgbench", reset: true)
            let brokerPID = broker.pid ?? 0
            let before = (try ProcessCPU.sample(of: gateway.child.pid), try ProcessCPU.sample(of: brokerPID))
            ours += try await sets(broker: broker, topic: topic, count: iterations / 2, warmUp: 0)
            gatewayCPU = gatewayCPU + (try ProcessCPU.sample(of: gateway.child.pid) - before.0)
            brokerCPU = brokerCPU + (try ProcessCPU.sample(of: brokerPID) - before.1)
            let statistics = try await Measure.gatewayStatistics(broker: broker, base: "hgbench", reset: false)
            gatewayTime.append((statistics["p50Microseconds"] as? NSNumber)?.doubleValue ?? 0)
            gateway.signal(SIGTERM)
            _ = try? await gateway.waitForExit(timeout: .seconds(20))
        }
        let measured = ours.count
        return Figures(homegate: Latencies(ours), serverClient: Latencies(theirs), ownClient: Latencies(own), gatewayTime: gatewayTime,
                       cpu: CPUPerSet(sets: measured, gateway: gatewayCPU.perSet(measured), broker: brokerCPU.perSet(measured)))
    }

    /// The same On and Off commands from HomeGate's own Matter client (`Matter.Client`), each
    /// waited for, after 20 unmeasured; listening to the server's events, as the floor's client
    /// and the gateway do (each command's attribute report comes back as one).
    private static func ownClient(url: String, node: Int, count: Int) async throws -> [Duration] {
        let logger = Logger(label: "homegate-bench.matter")
        return try await Client.withConnection(Client.Configuration(url: url), logger: logger) { connection in
            _ = try await connection.startListening()
            let drained = Task { for await _ in connection.events {} }
            defer { drained.cancel() }
            var samples: [Duration] = []
            for index in 0..<(20 + count) {
                let start = ContinuousClock.now
                _ = try await connection.send("device_command", [
                    "node_id": .int(Int64(node)), "endpoint_id": 1, "cluster_id": 6,
                    "command_name": .string(index.isMultiple(of: 2) ? "On" : "Off"), "payload": .object([:]),
                ])
                if index >= 20 { samples.append(start.duration(to: .now)) }
            }
            return samples
        }
    }

    /// On and Off in turn, each waited for (its acknowledgement on `<topic>/result`).
    private static func sets(broker: Mosquitto, topic: String, count: Int, warmUp: Int) async throws -> [Duration] {
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "matter-setter"))
        try await client.subscribe("\(topic)/result")
        var samples: [Duration] = []
        for index in 0..<(warmUp + count) {
            let seen = client.inbox.all.count
            let start = ContinuousClock.now
            try await client.publish(topic, index.isMultiple(of: 2) ? "true" : "false", qos: .atLeastOnce)
            let reply = try await client.inbox.wait(for: "the acknowledgement of set \(index)") { messages in
                messages.dropFirst(seen).first { $0.topic.string == "\(topic)/result" }
            }
            if index >= warmUp { samples.append(start.duration(to: .now)) }
            guard reply.payloadString.contains("\"ok\":true") else { throw FixtureError("a set failed: \(reply.payloadString)") }
        }
        await client.stop()
        return samples
    }

    private static func serverClient(url: String, node: Int, count: Int) async throws -> [Duration] {
        let python = PackageRoot.url.appendingPathComponent(".venv-matter/bin/python").path
        let script = PackageRoot.url.appendingPathComponent("Tests/Fixtures/matter/server_client_bench.py").path
        let child = try ChildProcess(python, [script, "--url", url, "--node", String(node), "--iterations", String(count)])
        let status = try await child.waitForExit(timeout: .seconds(600))
        guard status == 0, let line = child.output.value.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw FixtureError("server_client_bench.py failed (\(status)): \(child.output.value.suffix(3000))")
        }
        return (object["samples"] as? [Double] ?? []).map { Duration.microseconds($0) }
    }
}

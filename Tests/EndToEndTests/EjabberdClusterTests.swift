import Foundation
import MQTT
import Testing
import TestSupport

/// The gateway on a second broker implementation: ejabberd's MQTT service as a two-node cluster,
/// the gateway on node A (with node B next in `mqtt.url`), clients on node B.
@Suite("ejabberd cluster", .startsProcesses)
struct EjabberdClusterTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"

    static func client(_ node: EjabberdCluster.Node, id: String) async throws -> TestClient {
        var configuration = TestClient.configuration(node.url, id: id)
        // ejabberd wants a user name and a password; its anonymous login takes any.
        configuration.username = id
        configuration.password = Secret("any")
        return try await TestClient.connect(configuration)
    }

    static func startGateway(_ cluster: EjabberdCluster, folder: URL) throws -> HomeGateProcess {
        let passwordFile = folder.appendingPathComponent("password").path
        try "any\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        let urls = cluster.nodes.map { "mqtt://127.0.0.1:\($0.port)" }.joined(separator: ", ")
        let config = try GatewayFixture.demoText().replacingOccurrences(of: "url: mqtt://127.0.0.1:1883",
                                                                      with: "url: [\(urls)]\n  username: homegate\n  password_file: \(passwordFile)")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        return try HomeGateProcess(["run", "--config", configFile, "--data-dir", folder.appendingPathComponent("data").path])
    }

    @Test("gateway on node A, clients on node B: sets, response topics and the will cross the cluster; node A stops: the gateway moves to B, which then holds its retained topics; no set is acknowledged twice")
    func clusterAndFailover() async throws {
        let cluster = try await EjabberdCluster.start()
        let (nodeA, nodeB) = (cluster.nodes[0], cluster.nodes[1])
        let folder = try TemporaryDirectory.make(prefix: "ejabberd-gateway")
        let onB = try await Self.client(nodeB, id: "client-b")
        try await onB.subscribe("homegate/$state")
        try await onB.subscribe("cluster/replies", qos: .exactlyOnce)

        // The gateway on A; its online, its acknowledgements (response topic on B) reach B.
        var gateway = try Self.startGateway(cluster, folder: folder)
        _ = try await gateway.waitForOutput(containing: "connected to the MQTT broker at mqtt://127.0.0.1:\(nodeA.port)")
        _ = try await onB.inbox.first(on: "homegate/$state", payload: "online", timeout: HangGuard.standard)
        try await onB.setExactlyOnce(Self.lamp, value: 20, replies: "cluster/replies")

        // The will: the gateway dies on A, B's client is told.
        gateway.signal(SIGKILL)
        _ = try await gateway.waitForExit()
        _ = try await onB.inbox.first(on: "homegate/$state", payload: "offline", timeout: HangGuard.standard)
        let onlineBefore = onB.inbox.all.filter { $0.topic.string == "homegate/$state" && $0.payloadString == "online" }.count
        gateway = try Self.startGateway(cluster, folder: folder)
        _ = try await onB.inbox.wait(timeout: HangGuard.standard, for: "online again") { messages in
            messages.filter { $0.topic.string == "homegate/$state" && $0.payloadString == "online" }.count > onlineBefore ? true : nil
        }

        // Node A stops: the gateway moves to B and makes B hold what it asserts.
        try await cluster.stop(nodeA)
        let connectedToB = "connected to the MQTT broker at mqtt://127.0.0.1:\(nodeB.port)"
        _ = try await gateway.waitForOutput(containing: connectedToB, timeout: .seconds(60))
        // B holds nothing of the gateway's: its synchronisation there publishes every retained topic.
        _ = try await gateway.child.output.wait(timeout: .seconds(30), for: "homegate to publish every retained topic to node B") { output -> Bool? in
            guard let connected = output.range(of: connectedToB) else { return nil }
            let synchronisations = output[connected.upperBound...].matches(of: /synchronised with the broker: (\d+) retained topics, (\d+) published/)
            return synchronisations.contains { $0.output.1 == $0.output.2 } ? true : nil
        }
        let fresh = try await Self.client(nodeB, id: "reader-b")
        try await fresh.subscribe(Self.lamp, retainAsPublished: true)
        let value = try await fresh.inbox.first(on: Self.lamp, timeout: HangGuard.standard)
        // The restarted gateway's simulated lamp started again from the configuration's 40.
        #expect(value.retain && value.payloadString == "40", "\(value.payloadString)")
        await fresh.stop()
        try await onB.setExactlyOnce(Self.lamp, value: 70, replies: "cluster/replies")
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        await onB.stop()
        await cluster.stop()
    }
}

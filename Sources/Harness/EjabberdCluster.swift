import Foundation
import MQTT

/// A second MQTT broker implementation beside Mosquitto: ejabberd's MQTT service (`mod_mqtt`,
/// Debian's `ejabberd`) as a cluster of two nodes on loopback, each in a folder of its own with a
/// free MQTT port, joined with `ejabberdctl join_cluster`.
///
/// Clients log in anonymously (`anonymous_protocol: login_anon`): any user name and password are
/// taken, but a client must give a user name (ejabberd refuses one without: "not authorized").
public final class EjabberdCluster: @unchecked Sendable {
    /// One node of the cluster.
    public struct Node: Sendable {
        public let name: String
        public let port: Int
        public let folder: URL

        public var url: BrokerURL {
            try! BrokerURL(parsing: "mqtt://127.0.0.1:\(port)") // swiftlint:disable:this force_try
        }
    }

    public let nodes: [Node]
    private let control: String

    /// Starts two nodes and joins the second to the first.
    public static func start() async throws -> EjabberdCluster {
        let control = try Executable.locate("ejabberdctl", extraFolders: ["/usr/sbin"],
                                            install: "run scripts/setup (or: apt-get install ejabberd)")
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        var nodes: [Node] = []
        for letter in ["a", "b"] {
            let folder = try TemporaryDirectory.make(prefix: "ejabberd-\(letter)")
            nodes.append(Node(name: "hg\(letter)\(tag)@localhost", port: try FreePort.next(), folder: folder))
        }
        let cluster = EjabberdCluster(nodes: nodes, control: control)
        for node in nodes {
            try cluster.configure(node)
            try await cluster.launch(node)
        }
        try await cluster.run(nodes[1], "join_cluster", nodes[0].name)
        try await cluster.waitUntilJoined()
        return cluster
    }

    private init(nodes: [Node], control: String) {
        self.nodes = nodes
        self.control = control
    }

    deinit {
        for node in nodes { _ = try? ChildProcess(control, arguments(node, "halt"), outputFile: "/dev/null") }
    }

    /// `ejabberd.yml` (anonymous logins, `mod_mqtt` on the node's port and nothing else) and an
    /// `ejabberdctl.cfg` of its own (Debian's sets the system's configuration path).
    private func configure(_ node: Node) throws {
        let configuration = """
            hosts: ["localhost"]
            loglevel: info
            auth_method: [anonymous]
            anonymous_protocol: login_anon
            listen:
              -
                port: \(node.port)
                ip: "127.0.0.1"
                module: mod_mqtt
                backlog: 1000
            modules:
              mod_mqtt: {}

            """
        try configuration.write(to: node.folder.appendingPathComponent("ejabberd.yml"), atomically: true, encoding: .utf8)
        let control = "EJABBERD_PID_PATH=\(node.folder.path)/ejabberd.pid\nEJABBERD_BYPASS_WARNINGS=true\n"
        try control.write(to: node.folder.appendingPathComponent("ejabberdctl.cfg"), atomically: true, encoding: .utf8)
        for folder in ["logs", "spool"] {
            try FileManager.default.createDirectory(at: node.folder.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        // ejabberdctl runs the node as the `ejabberd` user.
        for path in ["", "/logs", "/spool", "/ejabberd.yml", "/ejabberdctl.cfg"] {
            chmod(node.folder.path + path, path.hasSuffix(".yml") || path.hasSuffix(".cfg") ? 0o644 : 0o777)
        }
    }

    private func arguments(_ node: Node, _ command: String...) -> [String] {
        ["--config", node.folder.appendingPathComponent("ejabberd.yml").path, "--ctl-config", node.folder.appendingPathComponent("ejabberdctl.cfg").path,
         "--logs", node.folder.appendingPathComponent("logs").path, "--spool", node.folder.appendingPathComponent("spool").path,
         "--node", node.name] + command
    }

    /// Starts a node in the background and waits until its MQTT listener accepts.
    private func launch(_ node: Node) async throws {
        try await run(node, "start")
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if FreePort.accepts(node.port) { return }
            try await Task.sleep(for: .milliseconds(100)) // a node takes seconds to boot; nothing to wait on but its port
        }
        throw FixtureError("ejabberd node \(node.name) did not listen on \(node.port) within 60 s: \(logText(node))")
    }

    /// Runs an `ejabberdctl` command on `node` and waits for it.
    @discardableResult
    public func run(_ node: Node, _ command: String...) async throws -> String {
        var arguments = arguments(node)
        arguments.append(contentsOf: command)
        // Into a file, not a pipe: `start` leaves the node running with the command's output open.
        let outputFile = node.folder.appendingPathComponent("ejabberdctl-\(UUID().uuidString.prefix(8)).out").path
        let process = try ChildProcess(control, arguments, outputFile: outputFile)
        let status = try await process.waitForExit(timeout: .seconds(60))
        let output = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        guard status == 0 else { throw FixtureError("ejabberdctl \(command.joined(separator: " ")) on \(node.name) failed (\(status)): \(output)") }
        return output
    }

    private func waitUntilJoined() async throws {
        for _ in 0..<100 {
            let listed = try await run(nodes[0], "list_cluster")
            if nodes.allSatisfy({ listed.contains($0.name) }), FreePort.accepts(nodes[1].port) { return }
            try await Task.sleep(for: .milliseconds(200)) // joining restarts the second node
        }
        throw FixtureError("the ejabberd nodes did not form a cluster")
    }

    /// Stops one node (the other keeps running).
    public func stop(_ node: Node) async throws {
        try await run(node, "stop")
        let deadline = ContinuousClock.now + .seconds(30)
        while FreePort.accepts(node.port), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
    }

    /// Stops every node.
    public func stop() async {
        for node in nodes where FreePort.accepts(node.port) { try? await stop(node) }
    }

    public func logText(_ node: Node) -> String {
        (try? String(contentsOf: node.folder.appendingPathComponent("logs/ejabberd.log"), encoding: .utf8)) ?? ""
    }
}

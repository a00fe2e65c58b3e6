import Foundation
import Testing
import TestSupport
import MQTT

/// `homegate run` as a user runs it: the real binary, a real Mosquitto, real clients.
@Suite("homegate run, end to end", .startsProcesses)
struct RunCommandTests {
    /// A config file in a fresh folder; the gateway's data folder lands next to it.
    static func writeConfig(_ body: String) throws -> (file: String, folder: URL) {
        let folder = try TemporaryDirectory.make(prefix: "e2e")
        let file = folder.appendingPathComponent("homegate.yml").path
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        return (file, folder)
    }

    static func config(port: Int, base: String, extra: String = "") -> String {
        """
        base_topic: \(base)
        mqtt:
          url: mqtt://127.0.0.1:\(port)
          reconnect:
            initial_delay: 0.1
            max_delay: 0.5
        \(extra)
        """
    }

    static func uniqueBase() -> String { "e2e-\(UUID().uuidString.prefix(8).lowercased())" }

    /// A fresh subscriber's view of a retained topic.
    static func retainedValue(_ topic: String, broker: Mosquitto) async throws -> String {
        let reader = try await TestClient.connect(TestClient.configuration(broker.url, id: "reader"))
        // Retain-As-Published: a value the gateway publishes while we wait still shows its flag.
        try await reader.subscribe(topic, retainAsPublished: true)
        let message = try await reader.inbox.first(on: topic)
        await reader.stop()
        #expect(message.retain, "\(topic) is retained")
        return message.payloadString
    }

    @Test("$state is online after start and offline after SIGTERM or SIGINT, exit 0", arguments: [SIGTERM, SIGINT])
    func onlineThenOffline(signal: Int32) async throws {
        let broker = try await Mosquitto.start()
        let base = Self.uniqueBase()
        let (file, folder) = try Self.writeConfig(Self.config(port: broker.port, base: base))
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "watcher"))
        try await watcher.subscribe("\(base)/$state")

        let gateway = try HomeGateProcess(["run", "--config", file])
        _ = try await watcher.inbox.first(on: "\(base)/$state", payload: "online")
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "online")
        var isDirectory: ObjCBool = false
        let dataDirectory = folder.appendingPathComponent("data").path
        #expect(FileManager.default.fileExists(atPath: dataDirectory, isDirectory: &isDirectory) && isDirectory.boolValue)
        let mode = try FileManager.default.attributesOfItem(atPath: dataDirectory)[.posixPermissions] as? Int
        #expect(mode == 0o700)

        gateway.signal(signal)
        #expect(try await gateway.waitForExit() == 0, "output:\n\(gateway.output)")
        _ = try await watcher.inbox.first(on: "\(base)/$state", payload: "offline")
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "offline")
        await watcher.stop()
        await broker.stop()
    }

    @Test("a part that fails (the managed Matter Server's storage is a file) shuts the gateway down gracefully, not by cancellation: its error said, the broker connection's clean stop last, offline on $state, exit 1")
    func aFailingPartShutsDownGracefully() async throws {
        let broker = try await Mosquitto.start()
        let base = Self.uniqueBase()
        let (metricsPort, pagePort, matterPort) = (try FreePort.next(), try FreePort.next(), try FreePort.next())
        let extra = """
            metrics:
              port: \(metricsPort)
            ui:
              port: \(pagePort)
            matter:
              managed: true
              port: \(matterPort)
              command: /nonexistent/matter-server
            """
        let (file, folder) = try Self.writeConfig(Self.config(port: broker.port, base: base, extra: extra))
        // Where the managed server keeps its storage, a plain file: creating the folder fails.
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data("not a folder".utf8).write(to: data.appendingPathComponent("matter"))
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "watcher"))
        try await watcher.subscribe("\(base)/$state")

        let gateway = try HomeGateProcess(["run", "--config", file])
        #expect(try await gateway.waitForExit() == 1, "output:\n\(gateway.output)")
        #expect(gateway.output.contains("the managed Matter Server stopped with an error"), "\(gateway.output)")
        // A graceful shutdown, not a cancellation (which ends the web servers' connections
        // abruptly and never reached the broker connection's clean stop: $state stayed empty
        // here): the clean stop ran (it logs "shutting down") and $state is offline.
        #expect(gateway.output.contains("shutting down"), "\(gateway.output)")
        _ = try await watcher.inbox.first(on: "\(base)/$state", payload: "offline")
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "offline")
        await watcher.stop()
        await broker.stop()
    }

    @Test("SIGHUP does not stop the gateway")
    func hangUpIgnored() async throws {
        let broker = try await Mosquitto.start()
        let base = Self.uniqueBase()
        let (file, _) = try Self.writeConfig(Self.config(port: broker.port, base: base))
        let gateway = try HomeGateProcess(["run", "--config", file])
        try await gateway.waitForOutput(containing: "published \(base)/$state = online")
        gateway.signal(SIGHUP)
        // Still serving: a retained read through the broker round-trips after the signal.
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "online")
        #expect(gateway.child.exit.value == nil)
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "offline")
        await broker.stop()
    }

    @Test("SIGKILL: the broker publishes the will, offline, retained")
    func willAfterKill() async throws {
        let broker = try await Mosquitto.start()
        let base = Self.uniqueBase()
        let (file, _) = try Self.writeConfig(Self.config(port: broker.port, base: base))
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "watcher"))
        try await watcher.subscribe("\(base)/$state")
        let gateway = try HomeGateProcess(["run", "--config", file])
        _ = try await watcher.inbox.first(on: "\(base)/$state", payload: "online")
        gateway.signal(SIGKILL)
        #expect(try await gateway.waitForExit() == -SIGKILL)
        _ = try await watcher.inbox.first(on: "\(base)/$state", payload: "offline")
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "offline")
        await watcher.stop()
        await broker.stop()
    }

    @Test("an unreachable broker: keeps retrying, says so, and comes online when the broker appears")
    func unreachableThenAvailable() async throws {
        let port = try FreePort.next()
        let base = Self.uniqueBase()
        let (file, _) = try Self.writeConfig(Self.config(port: port, base: base))
        let gateway = try HomeGateProcess(["run", "--config", file])
        try await gateway.waitForOutput(containing: "cannot reach the MQTT broker at mqtt://127.0.0.1:\(port): connection refused; retrying in")
        let broker = try await Mosquitto.start(port: port)
        try await gateway.waitForOutput(containing: "connected to the MQTT broker at mqtt://127.0.0.1:\(port)")
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "online")
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        await broker.stop()
    }

    @Test("the broker restarted without persistence: $state is online again after the reconnect")
    func brokerRestart() async throws {
        let broker = try await Mosquitto.start()
        let base = Self.uniqueBase()
        let (file, _) = try Self.writeConfig(Self.config(port: broker.port, base: base))
        let gateway = try HomeGateProcess(["run", "--config", file])
        try await gateway.waitForOutput(containing: "published \(base)/$state = online")
        try await broker.restart()
        try await gateway.waitForOutput(containing: "lost the connection to the MQTT broker")
        #expect(try await Self.retainedValue("\(base)/$state", broker: broker) == "online")
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        await broker.stop()
    }

    @Test("user name and password from a file connect; a wrong password from the environment stops with exit 77")
    func credentials() async throws {
        let directory = try TemporaryDirectory.make(prefix: "e2e-passwd")
        let passwordFile = directory.appendingPathComponent("passwd").path
        try await run(try Executable.locate("mosquitto_passwd", install: "run scripts/setup"), ["-b", "-c", passwordFile, "gateway", "s3cret pass"])
        let broker = try await Mosquitto.start(extraConfiguration: ["allow_anonymous false", "password_file \(passwordFile)"], directory: directory)
        let base = Self.uniqueBase()

        let secretFile = directory.appendingPathComponent("mqtt-password").path
        try "s3cret pass\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let (good, _) = try Self.writeConfig(Self.config(port: broker.port, base: base, extra: "  username: gateway\n  password_file: \(secretFile)"))
        let gateway = try HomeGateProcess(["run", "--config", good])
        try await gateway.waitForOutput(containing: "published \(base)/$state = online")
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        #expect(!gateway.output.contains("s3cret"), "the password never reaches the log")

        let (bad, _) = try Self.writeConfig(Self.config(port: broker.port, base: base, extra: "  username: gateway\n  password_env: HG_TEST_PASSWORD"))
        let refused = try HomeGateProcess(["run", "--config", bad], environment: ["HG_TEST_PASSWORD": "wrong"])
        #expect(try await refused.waitForExit() == 77, "output:\n\(refused.output)")
        #expect(refused.output.contains("refused the connection: Not authorized"))
        #expect(refused.output.contains("user \"gateway\""))
        #expect(!refused.output.contains("wrong"), "the password never reaches the log")
        await broker.stop()
    }

    @Test("a bad --mqtt-url: exit 64 with what is wrong")
    func badURL() async throws {
        let (file, _) = try Self.writeConfig(Self.config(port: 1883, base: "x"))
        let gateway = try HomeGateProcess(["run", "--config", file, "--mqtt-url", "http://127.0.0.1:1883"])
        #expect(try await gateway.waitForExit() == 64)
        #expect(gateway.output.contains("--mqtt-url: unsupported scheme \"http\"; use mqtt:// (TCP) or mqtts:// (TLS)"))
    }

    @Test("a bad config file: exit 78 naming the file, line, key and problem", arguments: [
        ("mqtt:\n  url: mqtt://h:99999\n", "homegate.yml:2: mqtt.url: port \"99999\" is not a number from 1 to 65535"),
        ("mqtt:\n  keepalive: 30\n", "homegate.yml:2: mqtt.keepalive: unknown key; did you mean \"keep_alive\"?"),
        ("base_topic: a/#\n", "homegate.yml:1: base_topic: '#' is a wildcard"),
        ("mqtt: [1, 2\n", "homegate.yml:2: not valid YAML"),
        ("mqtt:\n  password_env: HG_UNSET_VARIABLE\n  username: u\n", "homegate.yml:2: mqtt.password_env: the environment variable HG_UNSET_VARIABLE is not set or empty"),
    ])
    func badConfig(_ body: String, expected: String) async throws {
        let (file, _) = try Self.writeConfig(body)
        let gateway = try HomeGateProcess(["run", "--config", file])
        #expect(try await gateway.waitForExit() == 78)
        #expect(gateway.output.contains(file.replacingOccurrences(of: "homegate.yml", with: "") + expected), "output: \(gateway.output)")
    }

    @Test("a missing config file: exit 78")
    func missingConfig() async throws {
        let gateway = try HomeGateProcess(["run", "--config", "/nonexistent/homegate.yml"])
        #expect(try await gateway.waitForExit() == 78)
        #expect(gateway.output.contains("/nonexistent/homegate.yml: no such file"))
    }

    @Test("--mqtt-url, --data-dir and --log-level override the file")
    func overrides() async throws {
        let broker = try await Mosquitto.start()
        let base = Self.uniqueBase()
        let (file, folder) = try Self.writeConfig(Self.config(port: 1, base: base))
        let dataDirectory = folder.appendingPathComponent("elsewhere").path
        let gateway = try HomeGateProcess(["run", "--config", file, "--mqtt-url", broker.url.description,
                                           "--data-dir", dataDirectory, "--log-level", "debug"])
        let output = try await gateway.waitForOutput(containing: "published \(base)/$state = online")
        #expect(output.contains("debug"), "debug lines are logged")
        #expect(FileManager.default.fileExists(atPath: dataDirectory))
        gateway.signal(SIGTERM)
        #expect(try await gateway.waitForExit() == 0)
        await broker.stop()
    }
}

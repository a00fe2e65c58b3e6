import Foundation
import MQTT
import Testing
import TestSupport

/// Roles, end to end: `homegate acl` and `homegate passwd` make the ACL and the password file,
/// a real Mosquitto enforces them, and the gateway runs the demo home as its own user. Admins may
/// do everything; guests may read, set and get characteristics, identify and execute action sets,
/// and nothing else (docs/roles.md).
@Suite("Roles: homegate acl and passwd with a real Mosquitto", .startsProcesses)
struct RolesTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb"
    /// MQTT 5 reason code "Not authorized": the broker's answer to a publish the ACL denies.
    static let notAuthorized: Int32 = 0x87

    @Test("homegate acl writes the ACL (mode 0640) and refuses a bad users file")
    func aclCommand() async throws {
        let folder = try TemporaryDirectory.make(prefix: "roles-acl")
        let users = try RolesSetup.writeUsersFile(in: folder)
        let acl = folder.appendingPathComponent("homegate.acl").path
        let command = try HomeGateProcess(["acl", "--users", users, "--out", acl])
        #expect(try await command.waitForExit() == 0, "output:\n\(command.output)")
        #expect(command.output.contains("wrote \(acl)"))
        #expect(command.output.contains("admins:  alice"))
        #expect(command.output.contains("guests:  bob"))
        let text = try String(contentsOfFile: acl, encoding: .utf8)
        #expect(text.contains("user homegate\ntopic readwrite homegate/#\ntopic readwrite homeassistant/#\n"))
        #expect(text.contains("user alice\ntopic readwrite homegate/#\n"))
        #expect(text.contains("""
        user bob
        topic read homegate/#
        topic write homegate/+/+/+/+/+/set
        topic write homegate/+/+/+/+/+/get
        topic write homegate/+/$groups/+/+/set
        topic write homegate/$request/accessory/identify
        topic write homegate/$request/action-set/execute
        topic write homegate/+/$action-sets/+/execute
        topic write homegate/$request/history/get

        """))
        #expect(try Self.mode(acl) == 0o640)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")

        // --out - prints the same text.
        let printed = try HomeGateProcess(["acl", "--users", users, "--out", "-"])
        #expect(try await printed.waitForExit() == 0)
        #expect(printed.output == text)

        let bad = folder.appendingPathComponent("bad.yml").path
        try "gateway_user: homegate\nusers:\n  - name: bob\n    role: gust\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try HomeGateProcess(["acl", "--users", bad, "--out", acl])
        #expect(try await refused.waitForExit() == 78)
        #expect(refused.output.contains("homegate: error: \(bad):4: users[0].role: expected one of admin, guest, got \"gust\""))

        let prefix = try HomeGateProcess(["acl", "--users", users, "--out", acl, "--home-assistant-prefix", "homegate/ha"])
        #expect(try await prefix.waitForExit() == 64)
    }

    @Test("homegate passwd creates the password file (mode 0600) and changes a password in place")
    func passwdCommand() async throws {
        let folder = try TemporaryDirectory.make(prefix: "roles-passwd")
        let file = folder.appendingPathComponent("passwd").path
        let first = try HomeGateProcess(["passwd", "--file", file, "--user", "bob", "--password-env", "ROLES_PW"], environment: ["ROLES_PW": "one"])
        #expect(try await first.waitForExit() == 0, "output:\n\(first.output)")
        #expect(first.output.contains("added bob to \(file)"))
        #expect(try Self.mode(file) == 0o600)
        let before = try String(contentsOfFile: file, encoding: .utf8)
        #expect(before.hasPrefix("bob:$7$"), "a PBKDF2-SHA512 hash: \(before)")

        let second = try HomeGateProcess(["passwd", "--file", file, "--user", "bob", "--password-env", "ROLES_PW"], environment: ["ROLES_PW": "two"])
        #expect(try await second.waitForExit() == 0, "output:\n\(second.output)")
        #expect(second.output.contains("changed the password of bob in \(file)"))
        let after = try String(contentsOfFile: file, encoding: .utf8)
        #expect(after != before)
        #expect(after.split(separator: "\n").count == 1)
        #expect(try Self.mode(file) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["passwd"], "no backup left behind")

        // Standard input is not a terminal and no password is given: a usage error.
        let none = try HomeGateProcess(["passwd", "--file", file, "--user", "carol"])
        #expect(try await none.waitForExit() == 64)
        #expect(none.output.contains("no password given"))
        let badName = try HomeGateProcess(["passwd", "--file", file, "--user", "car:ol", "--password-env", "ROLES_PW"], environment: ["ROLES_PW": "x"])
        #expect(try await badName.waitForExit() == 64)
        let both = try HomeGateProcess(["passwd", "--file", file, "--user", "carol", "--password-env", "ROLES_PW", "--password-file", file], environment: ["ROLES_PW": "x"])
        #expect(try await both.waitForExit() == 64)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == after)
    }

    @Test("no account, a wrong password and an unlisted account get nowhere")
    func authentication() async throws {
        let setup = try await RolesSetup.start()
        await #expect(throws: (any Error).self) {
            let anonymous = try await TestClient.connect(TestClient.configuration(setup.broker.url, id: "anonymous"), timeout: HangGuard.standard)
            await anonymous.stop()
        }
        await #expect(throws: (any Error).self) {
            let wrong = try await setup.client("bob", password: "not-bobs", timeout: HangGuard.standard)
            await wrong.stop()
        }
        // carol has a password but is not in the users file: she may connect, and do nothing.
        let carol = try await setup.client("carol", password: RolesSetup.passwords["carol"]!)
        try await carol.subscribe("homegate/#")
        let refused = await Self.refusal(carol, "\(Self.lamp)/on/set", "true")
        #expect(refused == Self.notAuthorized)
        // The refusal is the broker's answer on carol's own connection, after her subscription's
        // acknowledgement: anything the subscription delivered (retained messages) came before it.
        #expect(carol.inbox.all.isEmpty, "carol may read nothing: \(carol.inbox.all.map(\.topic.string))")
        await carol.stop()
        try await setup.stop()
    }

    @Test("a guest reads values and $layout, sets and gets characteristics, identifies and executes action sets")
    func guestMay() async throws {
        let setup = try await RolesSetup.start()
        let admin = try await setup.client("alice")
        try await admin.subscribe("homegate/#")
        let bob = try await setup.client("bob")
        try await bob.subscribe("homegate/#")

        // Reading: the tree. Retained, or live when bob subscribed before the gateway's first
        // synchronisation published it (`$state` is online before that: a busy run saw it).
        let layout = try await bob.inbox.first { $0.topic.string == "homegate/$layout" }
        #expect(!layout.payload.isEmpty)
        _ = try await bob.inbox.first(on: "\(Self.lamp)/on", payload: "false")

        // A set: acknowledged on <topic>/result, and the value follows.
        try await bob.publish("\(Self.lamp)/on/set", "{\"value\": true, \"id\": \"bob-1\"}")
        let ack = try await bob.inbox.first { $0.topic.string == "\(Self.lamp)/on/set/result" }
        let body = try GatewayFixture.decode(ack.payload)
        #expect(body["ok"] as? Bool == true, "\(body)")
        #expect(body["id"] as? String == "bob-1")
        _ = try await bob.inbox.first(on: "\(Self.lamp)/on", payload: "true")

        // A get.
        try await bob.publish("\(Self.lamp)/brightness/get", "")
        let got = try GatewayFixture.decode(try await bob.inbox.first { $0.topic.string == "\(Self.lamp)/brightness/get/result" }.payload)
        #expect(got["ok"] as? Bool == true, "\(got)")
        #expect(got["value"] as? Int == 40)

        // An MQTT 5 Response Topic under <base>/$response/: the gateway may publish there and the
        // guest may read it.
        try await bob.publish("\(Self.lamp)/brightness/set", "55", properties: .init(responseTopic: try TopicName("homegate/$response/bob/1"), correlationData: Array("c-1".utf8)))
        let reply = try await bob.inbox.first { $0.topic.string == "homegate/$response/bob/1" }
        #expect(reply.properties.correlationData == Array("c-1".utf8))
        #expect(try GatewayFixture.decode(reply.payload)["ok"] as? Bool == true)

        // Identify, action-set execution and the history reach the gateway: it answers them
        // (whatever it answers, the request arrived).
        for path in ["accessory/identify", "action-set/execute", "history/get"] {
            try await bob.publish("homegate/$request/\(path)", "{\"accessory\": \"sim-lamp-1\", \"actionSet\": \"Nothing\", \"transaction\": \"bob-\(path)\"}")
            let answer = try await bob.inbox.first { $0.topic.string == "homegate/$response/\(path)" }
            #expect(try GatewayFixture.decode(answer.payload)["transaction"] as? String == "bob-\(path)")
        }
        // The action-set shortcut passes the broker (an admin sees it arrive).
        try await bob.publish("homegate/demo-home/$action-sets/Good Night/execute", "{}")
        _ = try await admin.inbox.first(on: "homegate/demo-home/$action-sets/Good Night/execute")

        await bob.stop()
        await admin.stop()
        try await setup.stop()
    }

    @Test("a guest's management requests, layout and value publishes never pass the broker")
    func guestMayNot() async throws {
        let setup = try await RolesSetup.start()
        let admin = try await setup.client("alice")
        try await admin.subscribe("homegate/#")
        let bob = try await setup.client("bob")
        try await bob.subscribe("homegate/#")
        let layoutBefore = try await bob.inbox.first(on: "homegate/$layout").payloadString

        // At QoS 1 the broker answers "not authorized"; nothing reaches a subscriber.
        let denied = [
            ("homegate/$request/room/add", "{\"name\": \"Guest Room\"}", false),
            ("homegate/$request/home/remove", "{\"home\": \"Demo Home\"}", false),
            ("homegate/$request/accessory/rename", "{\"accessory\": \"sim-lamp-1\", \"newName\": \"Mine\"}", false),
            ("homegate/$request/simulator/reachability", "{\"accessory\": \"sim-lamp-1\", \"reachable\": false}", false),
            ("homegate/$request/gateway/statistics", "{}", false),
            ("homegate/$layout", "{}", true),
            ("homegate/$state", "offline", true),
            ("\(Self.lamp)/on", "true", true),
            ("\(Self.lamp)/on/set/result", "{\"ok\": true}", false),
            ("homegate/$response/room/add", "{\"ok\": true}", false),
            ("homeassistant/device/x/config", "{}", true),
            ("elsewhere/topic", "x", false),
        ]
        for (topic, payload, retain) in denied {
            let code = await Self.refusal(bob, topic, payload, retain: retain)
            #expect(code == Self.notAuthorized, "\(topic)")
        }

        // At QoS 0 nothing tells the sender; the gateway never answers, and the admin who
        // watches everything never sees the request. A marker published after it proves the
        // watcher has seen everything bob sent before, and the gateway's answer to the marker
        // that it has answered everything that reached it before (it answers in arrival order).
        try await bob.publish("homegate/$request/room/add", "{\"name\": \"Guest Room\", \"transaction\": \"bob\"}", qos: .atMostOnce)
        try await bob.publish("\(Self.lamp)/hue/get", "{\"id\": \"marker\"}")
        _ = try await admin.inbox.first(on: "\(Self.lamp)/hue/get")
        _ = try await admin.inbox.first { $0.topic.string == "\(Self.lamp)/hue/get/result" && $0.payloadString.contains("marker") }
        let arrived = admin.inbox.all.filter { message in
            message.topic.string.hasPrefix("homegate/$request/") || message.topic.string == "homegate/$response/room/add"
                || denied.contains { $0.0 == message.topic.string && $0.1 == message.payloadString }
        }
        #expect(arrived.isEmpty, "passed the broker: \(arrived.map { "\($0.topic) \($0.payloadString)" })")

        // The same request from the admin arrives and is answered.
        try await admin.publish("homegate/$request/room/add", "{\"name\": \"Admin Room\", \"transaction\": \"alice\"}")
        let answer = try await admin.inbox.first { $0.topic.string == "homegate/$response/room/add" }
        #expect(try GatewayFixture.decode(answer.payload)["transaction"] as? String == "alice")
        #expect(!bob.inbox.all.contains { $0.topic.string == "homegate/$response/room/add" && $0.payloadString.contains("\"bob\"") })

        // The retained layout and the lamp are as the gateway left them.
        let fresh = try await setup.client("bob", id: "bob-fresh")
        try await fresh.subscribe("homegate/$layout")
        try await fresh.subscribe("\(Self.lamp)/on")
        _ = try await fresh.inbox.first(on: "\(Self.lamp)/on", payload: "false")
        let layoutNow = try await fresh.inbox.first(on: "homegate/$layout")
        #expect(layoutNow.payloadString.contains("Demo Home"), "the retained layout is the gateway's: \(layoutNow.payloadString.prefix(200))")
        #expect(layoutBefore.contains("Demo Home"))
        await fresh.stop()
        await bob.stop()
        await admin.stop()
        try await setup.stop()
    }

    @Test("an admin may do everything: requests, sets, and any topic under the base")
    func adminMay() async throws {
        let setup = try await RolesSetup.start()
        let alice = try await setup.client("alice")
        try await alice.subscribe("homegate/#")
        _ = try await alice.inbox.first(on: "homegate/$layout")

        try await alice.publish("homegate/$request/gateway/statistics", "{\"transaction\": 7}")
        let statistics = try GatewayFixture.decode(try await alice.inbox.first { $0.topic.string == "homegate/$response/gateway/statistics" }.payload)
        #expect(statistics["ok"] as? Bool == true, "\(statistics)")

        for (path, body) in [("room/add", "{\"name\": \"Study\"}"), ("home/remove", "{\"home\": \"Nowhere\"}"), ("accessory/identify", "{\"accessory\": \"sim-lamp-1\"}")] {
            try await alice.publish("homegate/$request/\(path)", body)
            _ = try await alice.inbox.first { $0.topic.string == "homegate/$response/\(path)" }
        }

        try await alice.publish("\(Self.lamp)/brightness/set", "70")
        let ack = try GatewayFixture.decode(try await alice.inbox.first { $0.topic.string == "\(Self.lamp)/brightness/set/result" }.payload)
        #expect(ack["ok"] as? Bool == true, "\(ack)")
        _ = try await alice.inbox.first(on: "\(Self.lamp)/brightness", payload: "70")

        // Any topic under the base, retained or not (the broker cannot tell a value from a forgery:
        // admins are trusted).
        try await alice.publish("homegate/$request/gateway/statistics", "{\"transaction\": \"retained\"}", retain: true)
        _ = try await alice.inbox.first { $0.topic.string == "homegate/$response/gateway/statistics" && $0.payloadString.contains("\"retained\"") }
        await alice.stop()
        try await setup.stop()
    }

    /// The reason code the broker refused a QoS 1 publish with; nil if it took it.
    static func refusal(_ client: TestClient, _ topic: String, _ payload: String, retain: Bool = false) async -> Int32? {
        do {
            try await client.publish(topic, payload, qos: .atLeastOnce, retain: retain)
            return nil
        } catch let error as ClientError {
            return error.reasonCode
        } catch {
            return -1
        }
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }
}

/// A broker with the generated ACL and password file, and the demo gateway connected as its user.
final class RolesSetup: Sendable {
    let broker: Mosquitto
    let gateway: HomeGateProcess
    let folder: URL

    static let passwords = ["homegate": "gateway secret", "alice": "alice-pw", "bob": "bob pw 2", "carol": "carol-pw"]

    private init(broker: Mosquitto, gateway: HomeGateProcess, folder: URL) {
        self.broker = broker
        self.gateway = gateway
        self.folder = folder
    }

    /// The users file of the tests: the gateway, alice (admin), bob (guest). carol gets a
    /// password but no role.
    static func writeUsersFile(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("users.yml").path
        try """
        base_topic: homegate
        gateway_user: homegate
        users:
          - name: alice
            role: admin
          - name: bob
            role: guest

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `homegate acl` and `homegate passwd` as a user would, starts Mosquitto with their
    /// files, and the demo gateway as the user `homegate` (its password in a file).
    static func start() async throws -> RolesSetup {
        let folder = try TemporaryDirectory.make(prefix: "roles")
        let users = try writeUsersFile(in: folder)
        let acl = folder.appendingPathComponent("homegate.acl").path
        let passwordFile = folder.appendingPathComponent("mosquitto.passwd").path
        try await run(["acl", "--users", users, "--out", acl])
        let gatewayPassword = folder.appendingPathComponent("gateway.password")
        try "\(passwords["homegate"]!)\n".write(to: gatewayPassword, atomically: true, encoding: .utf8)
        try await run(["passwd", "--file", passwordFile, "--user", "homegate", "--password-file", gatewayPassword.path])
        for user in ["alice", "bob", "carol"] {
            try await run(["passwd", "--file", passwordFile, "--user", user, "--password-env", "ROLES_TEST_PASSWORD"],
                          environment: ["ROLES_TEST_PASSWORD": passwords[user]!])
        }
        let broker = try await Mosquitto.start(extraConfiguration: ["allow_anonymous false", "password_file \(passwordFile)", "acl_file \(acl)"])
        let config = try GatewayFixture.demoText().replacingOccurrences(
            of: "\nmqtt:\n", with: "\nmqtt:\n  username: homegate\n  password_file: gateway.password\n")
        guard config.contains("password_file: gateway.password") else { throw FixtureError("config/demo.yml has no `mqtt:` section any more") }
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let gateway = try HomeGateProcess(["run", "--config", configFile, "--mqtt-url", broker.url.description,
                                           "--data-dir", folder.appendingPathComponent("data").path])
        do {
            try await gateway.waitForOutput(containing: "synchronised with the broker")
        } catch {
            gateway.signal(SIGKILL)
            await broker.stop()
            throw FixtureError("the gateway did not synchronise: \(gateway.output)\nbroker log:\n\(broker.logText())")
        }
        return RolesSetup(broker: broker, gateway: gateway, folder: folder)
    }

    private static func run(_ arguments: [String], environment: [String: String] = [:]) async throws {
        let process = try HomeGateProcess(arguments, environment: environment)
        let status = try await process.waitForExit()
        guard status == 0 else { throw FixtureError("homegate \(arguments.joined(separator: " ")) exited with \(status): \(process.output)") }
    }

    /// A connected client logged in as `user`.
    func client(_ user: String, password: String? = nil, id: String? = nil, timeout: Duration = HangGuard.standard) async throws -> TestClient {
        var configuration = TestClient.configuration(broker.url, id: id ?? user)
        configuration.username = user
        configuration.password = Secret(password ?? Self.passwords[user]!)
        return try await TestClient.connect(configuration, timeout: timeout)
    }

    /// Stops the gateway and the broker.
    func stop() async throws {
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit()
        await broker.stop()
    }
}

import Foundation
import Testing
@testable import HomeGateConfig

@Suite("Users file and Mosquitto ACL")
struct UsersFileTests {
    let file = "/etc/homegate/users.yml"

    static let example = """
    base_topic: homegate        # optional, default homegate; must match the gateway's
    gateway_user: homegate      # the account the gateway itself connects as
    users:
      - name: alice
        role: admin
      - name: bob
        role: guest
    """

    @Test("the example is read")
    func example() throws {
        let users = try UsersFile.parse(Self.example, file: file)
        #expect(users.baseTopic == "homegate")
        #expect(users.gatewayUser == "homegate")
        #expect(users.users == [UsersFile.User(name: "alice", role: .admin), UsersFile.User(name: "bob", role: .guest)])
    }

    @Test("base_topic defaults to homegate; users may be left out; roles are read in any case")
    func defaults() throws {
        let onlyGateway = try UsersFile.parse("gateway_user: gw\n", file: file)
        #expect(onlyGateway.baseTopic == "homegate")
        #expect(onlyGateway.users.isEmpty)
        let text = "base_topic: home/gw1\ngateway_user: gw\nusers:\n  - {name: Carol, role: ADMIN}\n  - {name: hass, role: guest, home_assistant: yes}\n"
        let users = try UsersFile.parse(text, file: file)
        #expect(users.baseTopic == "home/gw1")
        #expect(users.users == [UsersFile.User(name: "Carol", role: .admin), UsersFile.User(name: "hass", role: .guest, homeAssistant: true)])
    }

    @Test("the ACL of the example")
    func exampleACL() throws {
        let users = try UsersFile.parse(Self.example, file: file)
        #expect(users.mosquittoACL() == """
        # Mosquitto ACL for HomeGate, written by `homegate acl` from a users file: do not edit it,
        # change the users file and run `homegate acl` again, then reload Mosquitto (SIGHUP).
        # Base topic: homegate. Home Assistant discovery prefix: homeassistant.
        # Accounts not named here, and anonymous clients, may read and write nothing.

        # The gateway itself: everything under the base topic and the discovery prefix.
        user homegate
        topic readwrite homegate/#
        topic readwrite homeassistant/#

        # alice: admin (everything under the base topic).
        user alice
        topic readwrite homegate/#

        # bob: guest (read everything and the history; set and get characteristics, identify, execute action sets).
        user bob
        topic read homegate/#
        topic write homegate/+/+/+/+/+/set
        topic write homegate/+/+/+/+/+/get
        topic write homegate/+/$groups/+/+/set
        topic write homegate/$request/accessory/identify
        topic write homegate/$request/action-set/execute
        topic write homegate/+/$action-sets/+/execute
        topic write homegate/$request/history/get

        """)
    }

    @Test("another base topic and prefix, and a Home Assistant account")
    func otherTopics() throws {
        let users = try UsersFile.parse("base_topic: home/gw1\ngateway_user: gw\nusers:\n  - {name: hass, role: guest, home_assistant: true}\n", file: file)
        let acl = users.mosquittoACL(homeAssistantPrefix: "ha")
        #expect(acl.contains("user gw\ntopic readwrite home/gw1/#\ntopic readwrite ha/#\n"))
        #expect(acl.hasSuffix("""
        user hass
        topic read home/gw1/#
        topic write home/gw1/+/+/+/+/+/set
        topic write home/gw1/+/+/+/+/+/get
        topic write home/gw1/+/$groups/+/+/set
        topic write home/gw1/$request/accessory/identify
        topic write home/gw1/$request/action-set/execute
        topic write home/gw1/+/$action-sets/+/execute
        topic write home/gw1/$request/history/get
        topic read ha/#
        topic write ha/status

        """))
        // Every line is a comment, empty, a user line or a topic line with an explicit access.
        for line in acl.split(separator: "\n", omittingEmptySubsequences: false) {
            #expect(line.isEmpty || line.hasPrefix("# ") || line.hasPrefix("user ") || line.hasPrefix("topic read ")
                || line.hasPrefix("topic write ") || line.hasPrefix("topic readwrite "), "\(line)")
        }
    }

    @Test("the Home Assistant prefix is checked")
    func prefix() throws {
        let users = try UsersFile.parse("gateway_user: gw\n", file: file)
        #expect(users.homeAssistantPrefixProblem("homeassistant") == nil)
        #expect(users.homeAssistantPrefixProblem("ha/discovery") == nil)
        #expect(users.homeAssistantPrefixProblem("homegate/ha") == "the Home Assistant prefix \"homegate/ha\" and the base topic \"homegate\" must stay out of each other")
        #expect(users.homeAssistantPrefixProblem("ha/#")?.hasPrefix("the Home Assistant prefix \"ha/#\" ") == true)
        #expect(users.homeAssistantPrefixProblem("$ha") == "the Home Assistant prefix \"$ha\" must not start with '$' (brokers reserve those topics)")
        #expect(users.homeAssistantPrefixProblem(" ha") == "the Home Assistant prefix must not start with a space (Mosquitto's ACL file cannot say it)")
    }

    @Test("errors name the file, the line and the key", arguments: [
        ("gateway_user: gw\nuser:\n  - {name: a, role: admin}\n", "users.yml:2: user: unknown key; did you mean \"users\"? (known here: base_topic, gateway_user, users)"),
        ("users: []\n", "users.yml:1: \"gateway_user\" is required: the user name the gateway connects as (mqtt.username in its configuration)"),
        ("gateway_user: gw\nusers:\n  - name: bob\n    role: gust\n", "users.yml:4: users[0].role: expected one of admin, guest, got \"gust\""),
        ("gateway_user: gw\nusers:\n  - name: bob\n", "users.yml:3: users[0]: \"role\" is required here (admin or guest)"),
        ("gateway_user: gw\nusers:\n  - role: guest\n", "users.yml:3: users[0]: \"name\" is required here"),
        ("gateway_user: gw\nusers:\n  - {name: bob, role: guest, colour: red}\n", "users.yml:3: users[0].colour: unknown key (known here: name, role, home_assistant)"),
        ("gateway_user: gw\nusers:\n  - {name: bob, role: guest}\n  - {name: bob, role: admin}\n", "users.yml:4: users[1].name: \"bob\" is already another user on line 3; each account appears once"),
        ("gateway_user: gw\nusers:\n  - {name: gw, role: guest}\n", "users.yml:3: users[0].name: \"gw\" is already the gateway_user on line 1; each account appears once"),
        ("gateway_user: gw\nusers:\n  - {name: \"bo b\", role: guest}\n", "users.yml:3: users[0].name: \"bo b\" contains white space; user names have none"),
        ("gateway_user: gw\nusers:\n  - {name: \"b+\", role: guest}\n", "users.yml:3: users[0].name: \"b+\" contains '+'; user names must not contain #, +, / or :"),
        ("gateway_user: gw\nusers:\n  - {name: \"a/b\", role: guest}\n", "users.yml:3: users[0].name: \"a/b\" contains '/'; user names must not contain #, +, / or :"),
        ("gateway_user: \"x#\"\n", "users.yml:1: gateway_user: \"x#\" contains '#'; user names must not contain #, +, / or :"),
        ("gateway_user: \"a:b\"\n", "users.yml:1: gateway_user: \"a:b\" contains ':'; user names must not contain #, +, / or :"),
        ("gateway_user: \"\"\n", "users.yml:1: gateway_user: a user name must not be empty"),
        ("gateway_user: \"a\\tb\"\n", "users.yml:1: gateway_user: \"a?b\" contains the character U+0009, which MQTT brokers refuse"),
        ("gateway_user:\n", "users.yml:1: gateway_user: expected a text value, got nothing"),
        ("gateway_user: gw\nusers: {name: bob}\n", "users.yml:2: users: expected a list, got a mapping"),
        ("gateway_user: gw\nbase_topic: home/+\n", "users.yml:2: base_topic: '+' is a wildcard; it may appear in a subscription filter, never in a published topic"),
        ("gateway_user: gw\nbase_topic: \" home\"\n", "users.yml:2: base_topic: must not start with a space (Mosquitto's ACL file cannot say it)"),
        ("gateway_user: gw\nusers:\n  - {name: bob, role: guest, home_assistant: maybe}\n", "users.yml:3: users[0].home_assistant: expected true or false, got \"maybe\""),
        ("gateway_user: [gw\n", "users.yml:2: not valid YAML"),
    ])
    func errors(_ text: String, _ expected: String) {
        do {
            let users = try UsersFile.parse(text, file: "users.yml")
            Issue.record("accepted: \(users)")
        } catch {
            if expected.hasSuffix("not valid YAML") {
                #expect(error.description.hasPrefix(expected), "\(error.description)")
            } else {
                #expect(error.description == expected)
            }
        }
    }

    @Test("load names a missing file")
    func missing() {
        #expect(throws: ConfigError(file: "/nonexistent/users.yml", line: nil, keyPath: "", problem: "no such file")) {
            try UsersFile.load(path: "/nonexistent/users.yml")
        }
    }
}

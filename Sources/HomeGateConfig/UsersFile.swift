import Foundation
import Wire

/// The users file: who may use the gateway over MQTT, and in which role. `homegate acl` turns it
/// into a Mosquitto ACL file (see ``mosquittoACL(homeAssistantPrefix:)``); docs/roles.md.
///
/// ```yaml
/// base_topic: homegate        # optional, default homegate; must match the gateway's
/// gateway_user: homegate      # the account the gateway itself connects as
/// users:
///   - name: alice
///     role: admin
///   - name: bob
///     role: guest
/// ```
///
/// Reading is as strict as the configuration file's: unknown keys are refused, and errors name
/// the file, the line and the key (`users.yml:6: users[1].role: expected one of admin, guest, got "gust"`).
public struct UsersFile: Sendable, Equatable {
    /// What a user may do.
    public enum Role: String, Sendable, CaseIterable {
        /// Everything under the base topic: values, sets and gets, every `$request`.
        case admin
        /// HomeKit's guest: read everything under the base topic; write only characteristic sets
        /// and gets, `accessory/identify`, `action-set/execute` and `history/get` (reading the history).
        case guest
    }

    /// One account of the broker.
    public struct User: Sendable, Equatable {
        /// The MQTT user name (as in the broker's password file).
        public var name: String
        public var role: Role
        /// Also read the Home Assistant discovery prefix and write its `<prefix>/status` (the
        /// account Home Assistant connects with).
        public var homeAssistant: Bool

        public init(name: String, role: Role, homeAssistant: Bool = false) {
            self.name = name
            self.role = role
            self.homeAssistant = homeAssistant
        }
    }

    /// The gateway's base topic (`base_topic`, default `homegate`).
    public var baseTopic: String
    /// The account the gateway connects as (`gateway_user`): full access to the base topic and
    /// the Home Assistant discovery prefix.
    public var gatewayUser: String
    /// The people and programs, in the file's order.
    public var users: [User]

    public init(baseTopic: String = ConfigFile.defaultBaseTopic, gatewayUser: String, users: [User]) {
        self.baseTopic = baseTopic
        self.gatewayUser = gatewayUser
        self.users = users
    }

    /// Loads and checks the users file at `path`.
    /// - Throws: ``ConfigError`` naming the file, the line and the key.
    public static func load(path: String) throws(ConfigError) -> UsersFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ConfigError(file: path, line: nil, keyPath: "", problem: exists ? "cannot be read (check its permissions and that it is UTF-8 text)" : "no such file")
        }
        return try parse(text, file: path)
    }

    /// Parses a users file's text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> UsersFile {
        let root = try ConfigNode.parse(text, file: file)
        let keys = try root.mapping(allowed: ["base_topic", "gateway_user", "users"])
        var baseTopic = ConfigFile.defaultBaseTopic
        if let node = keys["base_topic"] {
            baseTopic = try ConfigFile.baseTopic(node).string
            if let problem = aclTopicProblem(baseTopic) { throw node.error(problem) }
        }
        guard let gatewayNode = keys["gateway_user"] else {
            throw root.error("\"gateway_user\" is required: the user name the gateway connects as (mqtt.username in its configuration)")
        }
        let gatewayUser = try userName(gatewayNode)
        var users: [User] = []
        var lines: [String: Int?] = [gatewayUser: gatewayNode.line]
        for item in try keys["users"]?.sequence() ?? [] {
            let entry = try item.mapping(allowed: ["name", "role", "home_assistant"])
            guard let nameNode = entry["name"] else { throw item.error("\"name\" is required here") }
            guard let roleNode = entry["role"] else { throw item.error("\"role\" is required here (admin or guest)") }
            let name = try userName(nameNode)
            if let line = lines[name] {
                let place = line.map { " on line \($0)" } ?? ""
                let what = name == gatewayUser ? "the gateway_user" : "another user"
                throw nameNode.error("\"\(name)\" is already \(what)\(place); each account appears once")
            }
            lines[name] = nameNode.line
            let role = Role(rawValue: try roleNode.choice(Role.allCases.map(\.rawValue)))!
            let homeAssistant = try entry["home_assistant"]?.bool() ?? false
            users.append(User(name: name, role: role, homeAssistant: homeAssistant))
        }
        return UsersFile(baseTopic: baseTopic, gatewayUser: gatewayUser, users: users)
    }

    private static func userName(_ node: ConfigNode) throws(ConfigError) -> String {
        let name = try node.string()
        if let problem = userNameProblem(name) { throw node.error(problem) }
        return name
    }

    /// Why `name` cannot be a user name of the users file, the ACL and the password file; nil if
    /// it can. Refused: empty, whitespace, `#`, `+`, `/` (topic characters), `:` (the password
    /// file's separator), control characters and Unicode non-characters (MQTT refuses them),
    /// more than 65,535 bytes.
    public static func userNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a user name must not be empty" }
        if name.utf8.count > 65_535 { return "a user name is at most 65535 bytes long" }
        for scalar in name.unicodeScalars {
            let value = scalar.value
            if value <= 0x1F || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE {
                return "\"\(printable(name))\" contains the character \(codePoint(scalar)), which MQTT brokers refuse"
            }
            if scalar.properties.isWhitespace { return "\"\(name)\" contains white space; user names have none" }
            if "#+/:".unicodeScalars.contains(scalar) {
                return "\"\(name)\" contains '\(scalar)'; user names must not contain #, +, / or :"
            }
        }
        return nil
    }

    /// Why a topic cannot stand in a Mosquitto ACL line, beyond the base-topic rules: Mosquitto
    /// trims blanks around the topic of a `topic` line.
    static func aclTopicProblem(_ topic: String) -> String? {
        if let first = topic.unicodeScalars.first, first.properties.isWhitespace {
            return "must not start with a space (Mosquitto's ACL file cannot say it)"
        }
        return nil
    }

    /// Checks the Home Assistant discovery prefix given to `homegate acl`: a topic checked like
    /// a base topic, not overlapping the base topic. Returns the problem, or nil.
    public func homeAssistantPrefixProblem(_ prefix: String) -> String? {
        do {
            _ = try ConfigFile.validBaseTopic(prefix)
        } catch {
            return "the Home Assistant prefix \"\(prefix)\" \(error.description)"
        }
        if let problem = Self.aclTopicProblem(prefix) { return "the Home Assistant prefix \(problem)" }
        if ConfigFile.overlaps(prefix, baseTopic) {
            return "the Home Assistant prefix \"\(prefix)\" and the base topic \"\(baseTopic)\" must stay out of each other"
        }
        return nil
    }

    /// The topic filters a guest may publish to, besides nothing: characteristic sets and gets
    /// (the zone shortcut has the same depth), the group shortcut, `accessory/identify`,
    /// `action-set/execute`, the action-set shortcut and `history/get`.
    public func guestWriteFilters() -> [String] {
        let base = baseTopic
        let (set, get, execute) = (TopicGrammar.Verb.set.rawValue, TopicGrammar.Verb.get.rawValue, TopicGrammar.Verb.execute.rawValue)
        let request = "\(base)/\(TopicGrammar.Level.request.rawValue)"
        return [
            "\(base)/+/+/+/+/+/\(set)",
            "\(base)/+/+/+/+/+/\(get)",
            "\(base)/+/\(TopicGrammar.Level.groups.rawValue)/+/+/\(set)",
            "\(request)/accessory/identify",
            "\(request)/action-set/execute",
            "\(base)/+/\(TopicGrammar.Level.actionSets.rawValue)/+/\(execute)",
            "\(request)/history/get",
        ]
    }

    /// The Mosquitto ACL file (`acl_file`) for these users: the broker's whole ACL. Accounts it
    /// does not name, and anonymous clients, may read and write nothing.
    public func mosquittoACL(homeAssistantPrefix prefix: String = ConfigFile.HomeAssistant().prefix) -> String {
        let base = baseTopic
        var lines = [
            "# Mosquitto ACL for HomeGate, written by `homegate acl` from a users file: do not edit it,",
            "# change the users file and run `homegate acl` again, then reload Mosquitto (SIGHUP).",
            "# Base topic: \(base). Home Assistant discovery prefix: \(prefix).",
            "# Accounts not named here, and anonymous clients, may read and write nothing.",
            "",
            "# The gateway itself: everything under the base topic and the discovery prefix.",
            "user \(gatewayUser)",
            "topic readwrite \(base)/#",
            "topic readwrite \(prefix)/#",
        ]
        for user in users {
            lines.append("")
            switch user.role {
            case .admin:
                lines.append("# \(user.name): admin (everything under the base topic).")
                lines.append("user \(user.name)")
                lines.append("topic readwrite \(base)/#")
            case .guest:
                lines.append("# \(user.name): guest (read everything and the history; set and get characteristics, identify, execute action sets).")
                lines.append("user \(user.name)")
                lines.append("topic read \(base)/#")
                lines.append(contentsOf: guestWriteFilters().map { "topic write \($0)" })
            }
            if user.homeAssistant {
                lines.append("topic read \(prefix)/#")
                lines.append("topic write \(prefix)/status")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0 }))
    }
}

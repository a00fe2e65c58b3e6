import Foundation
import MQTT

/// The `mqtt:` section of the configuration file.
enum MQTTSection {
    static let keys = [
        "url", "client_id", "username", "password_file", "password_env", "protocol", "keep_alive",
        "clean_start", "session_expiry", "tls", "reconnect", "incoming_buffer",
    ]

    /// The client id used when the file names none: `homegate-<host name>`, plus the base topic
    /// when it is not the default, so two gateways on one machine do not push each other off.
    static func defaultClientID(baseTopic: TopicName) -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let suffix = baseTopic.string == ConfigFile.defaultBaseTopic ? "" : "-" + baseTopic.string.replacingOccurrences(of: "/", with: "-")
        return "homegate-\(host)\(suffix)"
    }

    static func defaults(baseTopic: TopicName, file: String) -> MQTT.Configuration {
        // The default URL is a constant that parses.
        let url = try! BrokerURL(parsing: ConfigFile.defaultBrokerURL) // swiftlint:disable:this force_try
        // A kept session: the broker queues the sets sent while the gateway is away (QoS 1 and 2).
        return MQTT.Configuration(url: url, clientID: defaultClientID(baseTopic: baseTopic), cleanStart: false, sessionExpiry: .seconds(3600))
    }

    /// Reads the section (absent: the defaults), applies a command-line URL, and checks the result.
    static func read(_ node: ConfigNode?, file: String, baseTopic: TopicName, urlOverride: BrokerURL?, environment: [String: String]) throws(ConfigError) -> MQTT.Configuration {
        var configuration = try node.map { node throws(ConfigError) in try read(node, baseTopic: baseTopic, environment: environment) }
            ?? defaults(baseTopic: baseTopic, file: file)
        if let urlOverride {
            configuration.url = urlOverride
            configuration.fallbackURLs = []
        }
        do {
            try configuration.validate()
        } catch {
            throw node?.error(error.message) ?? ConfigError(file: file, line: nil, keyPath: "mqtt", problem: error.message)
        }
        return configuration
    }

    private static func read(_ node: ConfigNode, baseTopic: TopicName, environment: [String: String]) throws(ConfigError) -> MQTT.Configuration {
        let entries = try node.mapping(allowed: keys)
        var configuration = defaults(baseTopic: baseTopic, file: node.file)
        if let urlNode = entries["url"] {
            // One broker, or a list: the nodes of a cluster, tried in order.
            let nodes = urlNode.isSequence ? try urlNode.sequence() : [urlNode]
            guard !nodes.isEmpty else { throw urlNode.error("the list of brokers is empty") }
            var urls: [BrokerURL] = []
            for node in nodes {
                let text = try node.nonEmptyString()
                do {
                    urls.append(try BrokerURL(parsing: text))
                } catch {
                    throw node.error(error.reason)
                }
            }
            configuration.url = urls[0]
            configuration.fallbackURLs = Array(urls.dropFirst())
        }
        if let id = entries["client_id"] { configuration.clientID = try id.nonEmptyString() }
        if let user = entries["username"] { configuration.username = try user.nonEmptyString() }
        configuration.password = try password(entries, environment: environment)
        if let version = entries["protocol"] {
            configuration.protocolVersion = ProtocolVersion(rawValue: try version.choice(ProtocolVersion.allCases.map(\.rawValue)))!
        }
        if let keepAlive = entries["keep_alive"] {
            let seconds = try keepAlive.int(in: 0...65_535, unit: "seconds")
            if seconds != 0 && seconds < 5 { throw keepAlive.error("must be 0 (off) or at least 5 seconds, got \(seconds)") }
            configuration.keepAlive = .seconds(seconds)
        }
        if let cleanStart = entries["clean_start"] { configuration.cleanStart = try cleanStart.bool() }
        if let expiry = entries["session_expiry"] {
            configuration.sessionExpiry = .seconds(try expiry.int(in: 0...4_294_967_295, unit: "seconds"))
        }
        if let tls = entries["tls"] { configuration.tls = try self.tls(tls) }
        if let reconnect = entries["reconnect"] { configuration.backoff = try backoff(reconnect) }
        if let buffer = entries["incoming_buffer"] {
            configuration.incomingBufferLimit = try buffer.int(in: 1...10_000_000, unit: "messages")
        }
        return configuration
    }

    private static func password(_ entries: [String: ConfigNode], environment: [String: String]) throws(ConfigError) -> Secret? {
        switch (entries["password_file"], entries["password_env"]) {
        case (let file?, _?):
            throw file.error("give either password_file or password_env, not both")
        case (let file?, nil):
            let path = try file.path()
            do {
                return try Secret.fromFile(path)
            } catch {
                throw file.error(error.message)
            }
        case (nil, let variable?):
            let name = try variable.nonEmptyString()
            do {
                return try Secret.fromEnvironment(name, environment: environment)
            } catch {
                throw variable.error(error.message)
            }
        case (nil, nil):
            return nil
        }
    }

    private static func tls(_ node: ConfigNode) throws(ConfigError) -> MQTT.Configuration.TLS {
        let entries = try node.mapping(allowed: ["ca_file", "cert_file", "key_file"])
        var tls = MQTT.Configuration.TLS()
        for (key, path) in [("ca_file", \MQTT.Configuration.TLS.caFile), ("cert_file", \.certificateFile), ("key_file", \.privateKeyFile)] {
            guard let entry = entries[key] else { continue }
            let resolved = try entry.path()
            guard FileManager.default.isReadableFile(atPath: resolved) else {
                throw entry.error(FileManager.default.fileExists(atPath: resolved) ? "cannot read \(resolved)" : "no such file: \(resolved)")
            }
            tls[keyPath: path] = resolved
        }
        return tls
    }

    private static func backoff(_ node: ConfigNode) throws(ConfigError) -> Backoff {
        let entries = try node.mapping(allowed: ["initial_delay", "max_delay"])
        let initial = try entries["initial_delay"]?.seconds(in: 0.01...3600) ?? Backoff.standard.initial
        let maximum = try entries["max_delay"]?.seconds(in: 0.01...86_400) ?? max(Backoff.standard.maximum, initial)
        do {
            return try Backoff(initial: initial, maximum: maximum)
        } catch {
            throw node.error(error.message)
        }
    }
}

import Accessories
import Crypto
import Foundation
import HomeModel
import Logging
import MQTT

/// The gateway's YAML configuration file, loaded and checked.
///
/// Every key is documented in `config/homegate.example.yml`. Relative paths are taken from the
/// folder the file is in. Secrets are never in the file itself: the broker password comes from
/// `mqtt.password_file` or `mqtt.password_env`.
public struct ConfigFile: Sendable {
    /// The topic everything the gateway publishes lives under (`homegate`).
    public var baseTopic: TopicName
    /// Where the gateway keeps its state (created with mode 0700).
    public var dataDirectory: String
    /// The least severe log level written.
    public var logLevel: Logger.Level
    /// The broker connection.
    public var mqtt: MQTT.Configuration
    /// The homes the file declares: rooms, zones, and the simulated accessories in them.
    public var homes: [Home]
    /// The simulated accessories and bridges (bridged accessories included), with their behaviour.
    public var simulatorDevices: [Simulator.Device]
    /// The seed of the simulator's random numbers (failures, drift); nil: a new one each start.
    public var simulatorSeed: UInt64?
    /// The engine's settings (the `gateway:` section).
    public var engine: Engine
    /// Home Assistant discovery (the `home_assistant:` section).
    public var homeAssistant: HomeAssistant
    /// The metrics endpoint (the `metrics:` section), if any.
    public var metrics: Metrics?
    /// HomeKit devices over HAP (the `hap:` section).
    public var hap = HAP()
    /// Matter devices through a Matter Server (the `matter:` section), if any.
    public var matter: Matter?
    /// The web page (the `ui:` section), if any.
    public var ui: UI?
    /// Each characteristic's values over time (the `history:` section).
    public var history = History()
    /// How long a device may stay silent before it counts as unreachable (the `availability:` section).
    public var availability = Availability()
    /// How each accessory's values are published (the `options:` section), beside what
    /// `$request/accessory/options` stored.
    public var options = OptionsTable()
    /// SHA-256 of the file's text: the same digest, the same homes (so a start can tell that the
    /// configuration is the one last applied without comparing the homes).
    public var sourceDigest: [UInt8] = []

    /// The `gateway:` section.
    public struct Engine: Sendable, Equatable {
        /// How long a device may take to confirm a write or answer a read (`write_timeout`).
        public var writeTimeout: Duration = .seconds(10)
        /// Commands that may wait per characteristic before -70403 answers (`queue_limit`).
        public var queueLimit = 1000
        /// How often characteristics without events are read (`poll_interval`).
        public var pollInterval: Duration = .seconds(30)
        /// What is published for values (`output`): one topic per characteristic, one JSON object
        /// per service, or both.
        public var output: Output = .values
        /// How long after its date a timer trigger missed while the gateway was down still fires,
        /// late (`missed_trigger_grace`); older ones are skipped. Zero: never late.
        public var missedTriggerGrace: Duration = .seconds(300)
        /// `<characteristic>/$meta` for every characteristic too (`characteristic_meta`, default
        /// false: the accessory's `$meta` describes its characteristics).
        public var characteristicMeta = false
        /// Seconds between snapshots of every reachable camera (`snapshot_interval`); zero (the
        /// default): snapshots only on request.
        public var snapshotInterval: Duration = .zero
        /// How often `<base>/$health` is published (`health_interval`, default ten minutes); zero: never.
        public var healthInterval: Duration = .seconds(600)
        /// How often at most an accessory's `$last-seen` is published again
        /// (`last_seen_interval`, default a minute).
        public var lastSeenInterval: Duration = .seconds(60)

        public init() {}
    }

    /// `gateway.output`.
    public enum Output: String, Sendable, CaseIterable {
        case values, json, both
    }

    /// The `home_assistant:` section.
    public struct HomeAssistant: Sendable, Equatable {
        /// Publish discovery configs (`enabled`, default false).
        public var enabled = false
        /// The discovery prefix Home Assistant listens to (`prefix`, default `homeassistant`).
        public var prefix = "homeassistant"

        public init() {}
    }

    /// The `metrics:` section: an HTTP endpoint for Prometheus.
    public struct Metrics: Sendable, Equatable {
        /// The port (`port`); no section: no endpoint.
        public var port: Int
        /// The address to listen on (`host`, default 127.0.0.1).
        public var host = "127.0.0.1"

        public init(port: Int) {
            self.port = port
        }
    }

    /// The `hap:` section: mDNS while running.
    public struct HAP: Sendable, Equatable {
        /// How often mDNS is browsed while devices are paired, to follow a device to a new address
        /// and notice a changed configuration number (`browse_interval`, default 30 s).
        public var browseInterval: Duration = .seconds(30)
        /// The accessory browser on MQTT: on request (`$request/browser/start`) or always on
        /// (`browser`: `on-request` or `always`).
        public var alwaysBrowsing = false
        /// How often a Thread accessory (HAP over CoAP) is read to tell that it still answers
        /// (`thread_keep_alive`, the older form of `availability.thread`: the time is this plus
        /// the 10 s a Thread device has to answer); nil when not given.
        public var threadKeepAlive: Duration?

        public init() {}
    }

    /// The default base topic.
    public static let defaultBaseTopic = "homegate"
    /// The default broker.
    public static let defaultBrokerURL = "mqtt://127.0.0.1:1883"

    /// Values given on the command line, which replace the file's.
    public struct Overrides: Sendable {
        public var mqttURL: BrokerURL?
        public var dataDirectory: String?
        public var logLevel: Logger.Level?

        public init(mqttURL: BrokerURL? = nil, dataDirectory: String? = nil, logLevel: Logger.Level? = nil) {
            self.mqttURL = mqttURL
            self.dataDirectory = dataDirectory
            self.logLevel = logLevel
        }
    }

    /// Loads and checks the file at `path`, with `overrides` applied before the checks.
    /// - Parameter environment: where `mqtt.password_env` is looked up.
    /// - Throws: ``ConfigError`` naming the file, the line, the key and what is wrong.
    public static func load(path: String, overrides: Overrides = Overrides(), environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> ConfigFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ConfigError(file: path, line: nil, keyPath: "", problem: exists ? "cannot be read (check its permissions and that it is UTF-8 text)" : "no such file")
        }
        return try parse(text, file: path, overrides: overrides, environment: environment)
    }

    /// Parses configuration text; `file` names it in errors and anchors relative paths.
    public static func parse(_ text: String, file: String, overrides: Overrides = Overrides(), environment: [String: String] = [:]) throws(ConfigError) -> ConfigFile {
        let root = try ConfigNode.parse(text, file: file)
        let keys = try root.mapping(allowed: ["base_topic", "data_dir", "log_level", "mqtt", "gateway", "home_assistant", "metrics", "hap", "matter", "homes", "simulator", "ui", "history",
                                                    "availability", "options"])
        let baseTopic = try keys["base_topic"].map(Self.baseTopic) ?? TopicName(uncheckedDefault: defaultBaseTopic)
        var dataDirectory = try keys["data_dir"]?.path() ?? ConfigNode.resolve("data", relativeTo: file)
        if let override = overrides.dataDirectory { dataDirectory = override }
        var logLevel = try keys["log_level"].map(Self.logLevel) ?? .info
        if let override = overrides.logLevel { logLevel = override }
        let mqtt = try MQTTSection.read(keys["mqtt"], file: file, baseTopic: baseTopic, urlOverride: overrides.mqttURL, environment: environment)
        let declared = try HomesSection.read(keys["homes"], file: file)
        let seed = try keys["simulator"].map(Self.simulatorSeed) ?? nil
        let engine = try keys["gateway"].map(Self.engine) ?? Engine()
        let homeAssistant = try keys["home_assistant"].map(Self.homeAssistant) ?? HomeAssistant()
        if homeAssistant.enabled, engine.output == .json, let node = keys["home_assistant"] {
            throw node.error("Home Assistant reads the value topics, which gateway.output json leaves out; use output values or both")
        }
        if homeAssistant.enabled, let node = keys["home_assistant"],
           Self.overlaps(homeAssistant.prefix, baseTopic.string) {
            throw node.error("the discovery prefix \"\(homeAssistant.prefix)\" and the base topic \"\(baseTopic)\" must stay out of each other")
        }
        let metrics = try keys["metrics"].map(Self.metrics)
        let hap = try keys["hap"].map(Self.hap) ?? HAP()
        let ui = try keys["ui"].map { node throws(ConfigError) in try Self.ui(node, baseTopic: baseTopic.string) }
        if let ui, let metrics, ui.port == metrics.port, ui.host == metrics.host, let node = keys["ui"] {
            throw node.error("the web page and the metrics endpoint cannot share port \(ui.port)")
        }
        var file = ConfigFile(baseTopic: baseTopic, dataDirectory: dataDirectory, logLevel: logLevel, mqtt: mqtt,
                          homes: declared.homes, simulatorDevices: declared.devices, simulatorSeed: seed, engine: engine,
                          homeAssistant: homeAssistant, metrics: metrics, hap: hap, sourceDigest: Array(SHA256.hash(data: Data(text.utf8))))
        file.ui = ui
        file.history = try keys["history"].map(Self.history) ?? History()
        file.availability = try Self.availability(keys["availability"], threadKeepAlive: hap.threadKeepAlive.map { ($0, keys["hap"]) })
        file.matter = try keys["matter"].flatMap(Self.matter)
        file.options = try keys["options"].map(Self.options) ?? OptionsTable()
        return file
    }

    /// The `gateway:` section: `write_timeout`, `queue_limit`, `poll_interval`, `output`,
    /// `missed_trigger_grace`, `characteristic_meta`, `snapshot_interval`, `health_interval`,
    /// `last_seen_interval`.
    static func engine(_ node: ConfigNode) throws(ConfigError) -> Engine {
        let keys = try node.mapping(allowed: ["write_timeout", "queue_limit", "poll_interval", "output", "missed_trigger_grace", "characteristic_meta",
                                                       "snapshot_interval", "health_interval", "last_seen_interval"])
        var engine = Engine()
        if let timeout = keys["write_timeout"] { engine.writeTimeout = try timeout.seconds(in: 0.01...3600) }
        if let limit = keys["queue_limit"] { engine.queueLimit = try limit.int(in: 1...1_000_000, unit: "commands") }
        if let poll = keys["poll_interval"] { engine.pollInterval = try poll.seconds(in: 0.1...86_400) }
        if let output = keys["output"] { engine.output = Output(rawValue: try output.choice(Output.allCases.map(\.rawValue)))! }
        if let grace = keys["missed_trigger_grace"] { engine.missedTriggerGrace = try grace.seconds(in: 0...604_800) }
        if let meta = keys["characteristic_meta"] { engine.characteristicMeta = try meta.bool() }
        if let interval = keys["snapshot_interval"] { engine.snapshotInterval = try interval.seconds(in: 0...86_400) }
        if let interval = keys["health_interval"] { engine.healthInterval = try interval.seconds(in: 0...86_400) }
        if let interval = keys["last_seen_interval"] { engine.lastSeenInterval = try interval.seconds(in: 1...86_400) }
        return engine
    }

    /// Whether one topic prefix is the other or lies under it.
    static func overlaps(_ first: String, _ second: String) -> Bool {
        first == second || first.hasPrefix(second + "/") || second.hasPrefix(first + "/")
    }

    /// The `home_assistant:` section: `enabled`, `prefix`.
    static func homeAssistant(_ node: ConfigNode) throws(ConfigError) -> HomeAssistant {
        let keys = try node.mapping(allowed: ["enabled", "prefix"])
        var settings = HomeAssistant()
        if let enabled = keys["enabled"] { settings.enabled = try enabled.bool() }
        if let prefix = keys["prefix"] {
            let text = try prefix.nonEmptyString()
            do {
                settings.prefix = try validBaseTopic(text).string
            } catch {
                throw prefix.error(error.description)
            }
        }
        return settings
    }

    /// The `metrics:` section: `port` (required), `host`.
    static func metrics(_ node: ConfigNode) throws(ConfigError) -> Metrics {
        let keys = try node.mapping(allowed: ["port", "host"])
        guard let portNode = keys["port"] else { throw node.error("\"port\" is required here") }
        var settings = Metrics(port: try portNode.int(in: 1...65_535))
        if let host = keys["host"] { settings.host = try host.nonEmptyString() }
        return settings
    }

    /// The `hap:` section: `browse_interval`, `browser`, `thread_keep_alive`.
    static func hap(_ node: ConfigNode) throws(ConfigError) -> HAP {
        let keys = try node.mapping(allowed: ["browse_interval", "browser", "thread_keep_alive"])
        var settings = HAP()
        if let interval = keys["browse_interval"] { settings.browseInterval = try interval.seconds(in: 1...86_400) }
        if let browser = keys["browser"] { settings.alwaysBrowsing = try browser.choice(["on-request", "always"]) == "always" }
        if let keepAlive = keys["thread_keep_alive"] { settings.threadKeepAlive = try keepAlive.seconds(in: 1...3_600) }
        return settings
    }

    /// The `simulator:` section: `seed`.
    static func simulatorSeed(_ node: ConfigNode) throws(ConfigError) -> UInt64? {
        let keys = try node.mapping(allowed: ["seed"])
        guard let seed = keys["seed"] else { return nil }
        let text = try seed.string()
        guard let value = UInt64(text) else { throw seed.error("expected a whole number from 0 to 18446744073709551615, got \"\(text)\"") }
        return value
    }

    /// The log levels as written in the file and on the command line.
    public static let logLevelNames = Logger.Level.allCases.map(\.rawValue)

    static func logLevel(_ node: ConfigNode) throws(ConfigError) -> Logger.Level {
        Logger.Level(rawValue: try node.choice(logLevelNames))!
    }

    /// A base topic: a valid topic name without empty levels, not starting with `$`.
    static func baseTopic(_ node: ConfigNode) throws(ConfigError) -> TopicName {
        let text = try node.nonEmptyString()
        do {
            return try validBaseTopic(text)
        } catch {
            throw node.error(error.description)
        }
    }

    /// Checks a base topic given in the file or on the command line.
    public static func validBaseTopic(_ text: String) throws(BaseTopicError) -> TopicName {
        let topic: TopicName
        do {
            topic = try TopicName(text)
        } catch {
            throw BaseTopicError(description: error.reason)
        }
        if text.hasPrefix("$") { throw BaseTopicError(description: "must not start with '$' (brokers reserve those topics)") }
        if topic.levels.count > maximumBaseLevels || text.utf8.count > maximumBaseBytes {
            throw BaseTopicError(description: "is too long: at most \(maximumBaseLevels) levels and \(maximumBaseBytes) bytes (the gateway adds its own levels below it)")
        }
        if topic.levels.contains(where: \.isEmpty) {
            throw BaseTopicError(description: "\"\(text)\" has an empty level (a leading, trailing or doubled '/')")
        }
        return topic
    }

    /// Room left for the levels the gateway adds under the base (home, room, accessory, ...).
    static let maximumBaseLevels = 32
    static let maximumBaseBytes = 1024

    /// Why a base topic was refused.
    public struct BaseTopicError: Error, CustomStringConvertible {
        public let description: String
    }
}

extension TopicName {
    /// For compile-time constants known to be valid.
    init(uncheckedDefault text: String) {
        // The defaults are plain ASCII words: valid by construction.
        self = try! TopicName(text) // swiftlint:disable:this force_try
    }
}

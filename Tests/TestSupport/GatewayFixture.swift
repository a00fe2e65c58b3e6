import Foundation
import HomeModel
import MQTT

/// A running gateway for end-to-end tests: a real Mosquitto, the real `homegate run` on a
/// configuration of the test's, and a client that watches everything under the base.
public final class GatewayFixture: Sendable {
    public let broker: Mosquitto
    public let gateway: HomeGateProcess
    /// Subscribed to `<base>/#` from the start.
    public let watcher: TestClient
    public let base: String
    /// The folder with the configuration file and the data directory.
    public let folder: URL
    public let configFile: String

    /// The demo configuration (`config/demo.yml`) with the broker's URL and a fresh data folder.
    /// The kitchen sensor's drift is slowed from every 5 s to every hour, so that tests comparing
    /// snapshots (retained values against `$layout`) do not race a drift step on a loaded machine;
    /// drift itself has tests of its own. The demo's web page (`ui:` on port 8080) is left out, so
    /// that tests can run side by side; a test of the page adds its own on a free port.
    public static func demo(extraArguments: [String] = [], broker existing: Mosquitto? = nil) async throws -> GatewayFixture {
        try await start(config: demoText(), extraArguments: extraArguments, broker: existing)
    }

    /// The demo configuration's text as ``demo(extraArguments:broker:)`` runs it, with `extra`
    /// appended (a `gateway:` section).
    public static func demoText(appending extra: String = "") throws -> String {
        let text = try String(contentsOf: PackageRoot.url.appendingPathComponent("config/demo.yml"), encoding: .utf8)
        let slowed = text.replacingOccurrences(of: "every: 5}", with: "every: 3600}")
        guard slowed != text else { throw FixtureError("config/demo.yml no longer has the kitchen sensor's `every: 5}`; update GatewayFixture.demoText") }
        let withoutPage = slowed.replacingOccurrences(of: demoPage, with: "")
        guard withoutPage != slowed else { throw FixtureError("config/demo.yml no longer ends with its `ui:` section; update GatewayFixture.demoPage") }
        return extra.isEmpty ? withoutPage : withoutPage + "\n" + extra + "\n"
    }

    /// The demo's `ui:` section, as `config/demo.yml` ends.
    static let demoPage = "ui:\n  port: 8080\n"

    /// Starts a broker (unless given one), writes `config` (its `mqtt.url` is replaced by the
    /// broker's through `--mqtt-url`), starts the gateway and waits until it has synchronised.
    public static func start(config: String, extraArguments: [String] = [], broker existing: Mosquitto? = nil,
                             folder existingFolder: URL? = nil) async throws -> GatewayFixture {
        let broker: Mosquitto
        if let existing {
            broker = existing
        } else {
            broker = try await Mosquitto.start()
        }
        let folder = try existingFolder ?? TemporaryDirectory.make(prefix: "gateway")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let base = Self.baseTopic(of: config)
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "watcher"))
        try await watcher.subscribe("\(base)/#", qos: .atLeastOnce, retainAsPublished: true)
        let gateway = try HomeGateProcess(["run", "--config", configFile, "--mqtt-url", broker.url.description,
                                           "--data-dir", folder.appendingPathComponent("data").path] + extraArguments)
        try await gateway.waitForOutput(containing: "synchronised with the broker")
        return GatewayFixture(broker: broker, gateway: gateway, watcher: watcher, base: base, folder: folder, configFile: configFile)
    }

    private init(broker: Mosquitto, gateway: HomeGateProcess, watcher: TestClient, base: String, folder: URL, configFile: String) {
        self.broker = broker
        self.gateway = gateway
        self.watcher = watcher
        self.base = base
        self.folder = folder
        self.configFile = configFile
    }

    /// The `base_topic:` of a configuration text, or `homegate`.
    static func baseTopic(of config: String) -> String {
        for line in config.split(separator: "\n") where line.hasPrefix("base_topic:") {
            return line.dropFirst("base_topic:".count).trimmingCharacters(in: .whitespaces)
        }
        return "homegate"
    }

    /// Publishes `payload` to `topic` (a set or get) and returns the acknowledgement from
    /// `<topic>/result`, decoded.
    @discardableResult
    public func command(_ topic: String, _ payload: String, retain: Bool = false, timeout: Duration = HangGuard.standard) async throws -> [String: Any] {
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "commander"))
        try await client.subscribe("\(topic)/result")
        try await client.publish(topic, payload, qos: .atLeastOnce, retain: retain)
        let message = try await client.inbox.first(on: "\(topic)/result", timeout: timeout)
        await client.stop()
        return try Self.decode(message.payload)
    }

    /// Sends a `$request/<path>` and returns the answer from `$response/<path>`, decoded.
    @discardableResult
    public func request(_ path: String, _ body: String) async throws -> [String: Any] {
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "requester"))
        try await client.subscribe("\(base)/$response/\(path)")
        try await client.publish("\(base)/$request/\(path)", body)
        let message = try await client.inbox.first(on: "\(base)/$response/\(path)")
        await client.stop()
        return try Self.decode(message.payload)
    }

    /// Every retained message under the base as a fresh subscriber sees it: topic -> payload.
    public func retained() async throws -> [String: String] {
        // Everything the gateway published before this call is with the broker first (its
        // answer to a request comes after them on its one connection).
        if gateway.child.exit.value == nil { try await roundTrip() }
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "snapshot"))
        let marker = "probe/\(UUID().uuidString)"
        try await client.subscribe("\(base)/#")
        try await client.subscribe(marker)
        try await client.publish(marker, "end")
        _ = try await client.inbox.first(on: marker)
        await client.stop()
        var result: [String: String] = [:]
        for message in client.inbox.all where message.retain && message.topic.string.hasPrefix(base + "/") {
            result[message.topic.string] = message.payloadString
        }
        return result
    }

    /// The retained topics `layout` implies: the layout's parts, `$state`, each accessory's
    /// `$meta`, `$reachable` and (as `values` has it) `$last-seen`, each readable value, the
    /// `label` of a value (as `values` has it) that the catalog names, and the `$color` of a
    /// service with readable hue and saturation.
    public static func retainedTopics(of layout: [String: Any], base: String, values: [String: String]) -> Set<String> {
        var topics = LayoutAssembly.topics(of: layout, base: base).union(["\(base)/$state"])
        for home in layout["homes"] as? [[String: Any]] ?? [] {
            for accessory in home["accessories"] as? [[String: Any]] ?? [] {
                guard let topic = accessory["topic"] as? String else { continue }
                topics.insert("\(topic)/$meta")
                topics.insert("\(topic)/$reachable")
                // When the accessory was last heard from: there once it was (as `values` has it).
                if values["\(topic)/$last-seen"] != nil { topics.insert("\(topic)/$last-seen") }
                for service in accessory["services"] as? [[String: Any]] ?? [] {
                    let readable = (service["characteristics"] as? [[String: Any]] ?? []).filter { ($0["perms"] as? [String])?.contains("pr") == true }
                        .compactMap { $0["type"] as? String }
                    if readable.contains("hue"), readable.contains("saturation"), let serviceTopic = service["topic"] as? String {
                        topics.insert("\(serviceTopic)/$color")
                    }
                    for characteristic in service["characteristics"] as? [[String: Any]] ?? [] {
                        guard let topic = characteristic["topic"] as? String else { continue }
                        guard (characteristic["perms"] as? [String])?.contains("pr") == true, characteristic["momentary"] as? Bool != true else { continue }
                        topics.insert(topic)
                        if let type = characteristic["type"] as? String, let named = Catalog.standard.characteristic(type)?.validValues,
                           let value = values[topic].flatMap(Double.init), named.contains(where: { $0.value == value }) {
                            topics.insert("\(topic)/label")
                        }
                    }
                }
            }
        }
        return topics
    }

    /// Stops the gateway (SIGTERM) and the watcher, and the broker unless `keepBroker`.
    public func stop(keepBroker: Bool = false) async throws {
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit()
        await watcher.stop()
        if !keepBroker { await broker.stop() }
    }

    public static func decode(_ payload: [UInt8]) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            throw FixtureError("not a JSON object: \(String(decoding: payload, as: UTF8.self))")
        }
        return object
    }
}

import Foundation
import MQTT
import Testing
import TestSupport

/// Adaptive Lighting driven by HomeGate, through the real binary and Mosquitto, against the zoo's
/// Nanoleaf NL55 light strip served by zoo_peer.py, which decodes and follows a transition as
/// HAP-NodeJS's Adaptive Lighting controller does (the accessory side): `on` writes the day's
/// curve and the bulb follows it by itself, a colour set by hand ends it, the gateway gives it
/// again after a restart, `off` ends it; the state retained and a switch in Home Assistant.
@Suite(.startsProcesses) struct AdaptiveLightingTests {
    typealias Object = [String: Any]

    static let config = HAPEndToEndTests.config + "\nhome_assistant:\n  enabled: true\n"

    /// The peer's first line that `predicate` accepts, waited for.
    static func line(_ peer: ZooPeer, _ predicate: @escaping @Sendable (Object) -> Bool) async throws -> Object {
        let text = try await peer.waitForLine { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? Object else { return false }
            return predicate(object)
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? Object)
    }

    /// The peer's lines so far, as objects.
    static func lines(_ peer: ZooPeer) -> [Object] {
        peer.logText().split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? Object }
    }

    @Test("Adaptive Lighting: on writes the day's curve and the strip follows it alone; a colour by hand ends it; a restart gives it again; off ends it; retained and in Home Assistant")
    func adaptiveLighting() async throws {
        let peer = try await ZooPeer.start(database: "nanoleaf_strip_nl55")
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "adaptive-lighting")
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: Self.config)
        var fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let layout = try await fixture.layout()
        let strip = try #require(TreeLayout.accessories(layout).first { ($0["id"] as? String)?.hasPrefix("hap-") == true })
        let service = try #require(TreeLayout.services(strip).first { $0["type"] as? String == "lightbulb" }?["topic"] as? String)
        let state = "\(service)/adaptive-lighting"
        let temperature = "\(service)/color-temperature"
        #expect(try await fixture.retained()[state] == "off")

        // Home Assistant: a switch beside the light.
        let configs = try await EcosystemTests.discoveryConfigs(fixture)
        let components = (configs.values.first { ($0["components"] as? [String: Object])?.values.contains { $0["state_topic"] as? String == state } == true }?["components"] as? [String: Object]) ?? [:]
        let toggle = try #require(components.values.first { $0["state_topic"] as? String == state }, "\(configs.keys)")
        #expect(toggle["platform"] as? String == "switch" && toggle["command_topic"] as? String == "\(state)/set")

        // On: the curve is written (as the answer says, once the strip confirmed it), and the
        // strip sets the colour temperature of now by itself.
        let on = try await fixture.command("\(state)/set", "on")
        #expect(on["ok"] as? Bool == true && on["value"] as? String == "on", "\(on)")
        let started = try await Self.line(peer) { $0["event"] as? String == "adaptive-lighting" && $0["on"] as? Bool == true }
        #expect((started["entries"] as? Int).map { $0 >= 25 } == true, "a day of hourly points: \(started)")
        #expect(started["updateInterval"] as? Int == 60000)
        let first = try #require(started["temperature"] as? Int)
        _ = try await fixture.watcher.inbox.first { $0.topic.string == temperature && $0.payloadString == "\(first)" }
        _ = try await fixture.watcher.inbox.first { $0.topic.string == state && $0.retain && $0.payloadString == "on" }

        // The strip follows the curve with no traffic from the gateway: six hours later.
        let writesBefore = Self.lines(peer).filter { $0["event"] as? String == "write" }.count
        try await peer.advance(milliseconds: 6 * 3_600_000)
        let later = try await Self.line(peer) { $0["event"] as? String == "adaptive-lighting-update" && $0["cause"] as? String == "advance" }
        let followed = try #require(later["temperature"] as? Int)
        _ = try await fixture.watcher.inbox.first { $0.topic.string == temperature && $0.payloadString == "\(followed)" }
        #expect(Self.lines(peer).filter { $0["event"] as? String == "write" }.count == writesBefore, "no write from the gateway meanwhile")

        // A colour temperature set by hand ends it, as in the Home app (on the strip too).
        #expect(try await fixture.command("\(temperature)/set", "300")["ok"] as? Bool == true)
        _ = try await fixture.watcher.inbox.first { $0.topic.string == state && $0.retain && $0.payloadString == "off" }
        _ = try await Self.line(peer) { $0["event"] as? String == "adaptive-lighting" && $0["on"] as? Bool == false && $0["reason"] as? String == "manual write" }

        // On again, then a restart: the gateway gives the strip a new day's curve.
        #expect(try await fixture.command("\(state)/set", "true")["value"] as? String == "on")
        let startsBefore = Self.lines(peer).filter { $0["event"] as? String == "adaptive-lighting" && $0["on"] as? Bool == true }.count
        try await fixture.stop(keepBroker: true)
        fixture = try await GatewayFixture.start(config: Self.config, broker: fixture.broker, folder: folder)
        _ = try await peer.waitForLine { _ in
            Self.lines(peer).filter { $0["event"] as? String == "adaptive-lighting" && $0["on"] as? Bool == true }.count > startsBefore
        }
        _ = try await fixture.watcher.inbox.first { $0.topic.string == state && $0.retain && $0.payloadString == "on" }

        // Off: the strip is told, the state follows.
        let off = try await fixture.command("\(state)/set", "off")
        #expect(off["ok"] as? Bool == true && off["value"] as? String == "off", "\(off)")
        _ = try await Self.line(peer) { $0["event"] as? String == "adaptive-lighting" && $0["reason"] as? String == "disabled by the controller" }
        #expect(try await fixture.retained()[state] == "off")
        try await fixture.stop()
    }
}

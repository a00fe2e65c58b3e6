import Foundation
import Testing
@testable import Gateway
import HomeModel
import MQTT

/// A renamed accessory in Home Assistant: its discovery config moves the availability
/// (`$reachable`) and state topics, and Home Assistant subscribes to them when the config arrives.
/// They must be retained there already, or Home Assistant shows the entity unavailable (and its
/// state unknown) until they come.
@Suite struct HomeAssistantRenameTests {
    @Test("on a rename the moved $reachable and values are published before the new discovery config, the old topics cleared after it")
    func reachableBeforeConfig() async throws {
        let harness = try await EngineHarness(homeAssistantPrefix: "homeassistant")
        defer { Task { await harness.stop() } }
        let config = "homeassistant/device/homegate_lamp/config"
        _ = try await harness.bus.next(on: config)
        let before = harness.bus.sent.value.count

        var (home, _) = try EngineHarness.labHome(latency: .seconds(1))
        let index = try #require(home.accessories.firstIndex { $0.id == "lamp" })
        home.accessories[index].name = "Desk Lamp"
        await harness.gateway.reload { [home] _ in [home] }
        let renamed = try await harness.bus.next(on: config, after: 1)
        #expect(String(decoding: renamed.payload, as: UTF8.self).contains(#""name":"Desk Lamp""#))

        let sent = Array(harness.bus.sent.value.dropFirst(before)).filter(\.retain).map(\.topic.string)
        let reachable = try #require(sent.firstIndex(of: "homegate/lab/office/desk-lamp/$reachable"), "\(sent)")
        let on = try #require(sent.firstIndex(of: "homegate/lab/office/desk-lamp/lightbulb/on"), "\(sent)")
        let published = try #require(sent.firstIndex(of: config), "\(sent)")
        let cleared = try #require(sent.firstIndex(of: "homegate/lab/office/lamp/$reachable"), "\(sent)")
        #expect(reachable < published && on < published, "\(sent)")
        #expect(published < cleared, "\(sent)")
        // Home Assistant's availability topic is the accessory id's: unchanged, so not sent again.
        #expect(!sent.contains("homeassistant/device/homegate_lamp/reachable"), "\(sent)")
        #expect(harness.bus.sent.value.contains { $0.topic.string == "homeassistant/device/homegate_lamp/reachable" && $0.retain })
    }

    @Test("Home Assistant's copy of $reachable follows the accessory's reachability, and goes with its config")
    func reachabilityCopy() async throws {
        let harness = try await EngineHarness(homeAssistantPrefix: "homeassistant")
        defer { Task { await harness.stop() } }
        let copy = "homeassistant/device/homegate_lamp/reachable"
        let first = try await harness.bus.next(on: copy)
        #expect(String(decoding: first.payload, as: UTF8.self) == "true" && first.retain)
        let sent = harness.bus.sent.value.filter(\.retain).map(\.topic.string)
        let config = try #require(sent.firstIndex(of: "homeassistant/device/homegate_lamp/config"))
        #expect(try #require(sent.firstIndex(of: copy)) < config, "published before the config that points at it")

        try await harness.simulator.setReachable("lamp", false)
        let second = try await harness.bus.next(on: copy, after: 1)
        #expect(String(decoding: second.payload, as: UTF8.self) == "false")

        var (home, _) = try EngineHarness.labHome(latency: .seconds(1))
        home.accessories.removeAll { $0.id == "lamp" }
        await harness.gateway.reload { [home] _ in [home] }
        let removed = try await harness.bus.next(on: copy, after: 2)
        #expect(removed.payload.isEmpty && removed.retain, "cleared with the accessory")
    }
}

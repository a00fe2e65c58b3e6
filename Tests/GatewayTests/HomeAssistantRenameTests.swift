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
        await harness.gateway.reload(homes: [home])
        let renamed = try await harness.bus.next(on: config, after: 1)
        #expect(String(decoding: renamed.payload, as: UTF8.self).contains(#""name":"Desk Lamp""#))

        let sent = Array(harness.bus.sent.value.dropFirst(before)).filter(\.retain).map(\.topic.string)
        let reachable = try #require(sent.firstIndex(of: "homegate/lab/office/desk-lamp/$reachable"), "\(sent)")
        let on = try #require(sent.firstIndex(of: "homegate/lab/office/desk-lamp/lightbulb/on"), "\(sent)")
        let published = try #require(sent.firstIndex(of: config), "\(sent)")
        let cleared = try #require(sent.firstIndex(of: "homegate/lab/office/lamp/$reachable"), "\(sent)")
        #expect(reachable < published && on < published, "\(sent)")
        #expect(published < cleared, "\(sent)")
    }
}

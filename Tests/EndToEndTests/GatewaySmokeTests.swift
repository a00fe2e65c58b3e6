import Foundation
import Testing
import TestSupport

/// A first pass through the demo home: the fixture works and the main paths answer.
@Suite("gateway smoke test on the demo home")
struct GatewaySmokeTests {
    @Test("a set turns the lamp on: acknowledgement and retained value; the retained topics are exactly the layout's")
    func setAndHygiene() async throws {
        let fixture = try await GatewayFixture.demo()
        let ack = try await fixture.command("homegate/demo-home/living-room/floor-lamp/lightbulb/on/set", "on")
        #expect(ack["ok"] as? Bool == true)
        #expect(ack["value"] as? Bool == true)
        let retained = try await fixture.retained()
        #expect(retained["homegate/demo-home/living-room/floor-lamp/lightbulb/on"] == "true")
        let layout = try await fixture.layout()
        #expect(Set(retained.keys) == GatewayFixture.retainedTopics(of: layout, base: "homegate"))
        try await fixture.stop()
    }
}

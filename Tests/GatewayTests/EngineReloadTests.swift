import Accessories
@testable import Gateway
import HomeModel
import Testing
import Wire

/// A reloaded configuration with simulated accessories added and removed: the simulator takes
/// the devices first, then the engine the layout (as `homegate run` does on SIGHUP).
@Suite("engine: simulated accessories joining and leaving with a reload")
struct EngineReloadTests {
    static let wallSwitch = "homegate/lab/office/wall-switch/switch/on"

    /// The lab's home and devices with a wall switch added and the temperature sensor gone.
    static func reloadedLab() throws -> (Home, [Simulator.Device]) {
        var (home, devices) = try EngineHarness.labHome(latency: .seconds(1))
        let wallSwitch = try AccessoryBlueprint(id: "wall-switch", name: "Wall Switch", category: .switch, roomID: "office", services: [
            .init(type: "switch", characteristics: ["on": .bool(true)]),
        ]).build()
        home.accessories.removeAll { $0.id == "sensor" }
        devices.removeAll { $0.accessory.id == "sensor" }
        home.accessories.append(wallSwitch)
        devices.append(Simulator.Device(accessory: wallSwitch))
        return (home, devices)
    }

    @Test("a new simulated accessory joins: its retained topics and $layout are published and it takes sets; a gone one leaves, its topics cleared")
    func joinAndLeave() async throws {
        let harness = try await EngineHarness()
        #expect(harness.bus.retained[EngineHarness.sensor] == "21.5")
        let (home, devices) = try Self.reloadedLab()
        #expect(harness.simulator.replaceDevices(devices) == Simulator.DeviceChanges(added: ["wall-switch"], removed: ["sensor"]))
        let officeLayout = "homegate/$layout/lab/office"
        let layoutsBefore = harness.bus.count(on: officeLayout)

        let leftOut = await harness.gateway.reload { [home] _ in [home] }

        #expect(leftOut.isEmpty)
        let retained = harness.bus.retained
        #expect(retained[Self.wallSwitch] == "true")
        #expect(retained["homegate/lab/office/wall-switch/$reachable"] == "true")
        #expect(retained["homegate/lab/office/wall-switch/$meta"]?.contains(#""name":"Wall Switch""#) == true)
        #expect(retained[EngineHarness.sensor] == nil, "the gone sensor's value topic is cleared")
        #expect(retained.keys.filter { $0.hasPrefix("homegate/lab/office/sensor/") }.isEmpty, "\(retained.keys.sorted())")
        let layout = try await harness.bus.next(on: officeLayout, after: layoutsBefore).payloadString
        #expect(layout.contains(#""id":"wall-switch""#) && !layout.contains(#""id":"sensor""#), "\(layout)")

        let ack = try await harness.command("\(Self.wallSwitch)/set", "off")
        #expect(ack["ok"] == true, "\(ack.text)")
        #expect(try await harness.deviceValue("wall-switch", "on") == .bool(false))
        #expect(harness.bus.retained[Self.wallSwitch] == "false")
        let gone = try await harness.command("\(EngineHarness.sensor)/get", "")
        #expect(gone["ok"] == false, "\(gone.text)")
        await harness.stop()
    }

    @Test("an accessory new in the layout that no device has is left out, and said to be")
    func unknownLeftOut() async throws {
        let harness = try await EngineHarness()
        let (home, _) = try Self.reloadedLab()
        let leftOut = await harness.gateway.reload { [home] _ in [home] }
        #expect(leftOut == ["wall-switch"])
        #expect(harness.bus.retained[Self.wallSwitch] == nil)
        await harness.stop()
    }
}

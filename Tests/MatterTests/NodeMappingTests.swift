import Foundation
import HomeModel
import Matter
import Testing
import Wire
@testable import MatterDriver

/// Real devices' node dumps (Home Assistant's Matter fixtures, Tests/Fixtures/matter/zoo/nodes)
/// through the mapping table.
@Suite struct NodeMappingTests {
    static func node(_ fixture: String) throws -> NodeData {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/matter/zoo/nodes/\(fixture).json")
        return try NodeData(json: JSON.parse(Array(try Data(contentsOf: url))))
    }

    static func mapping(_ fixture: String) throws -> NodeMapping {
        NodeMapping(node: try node(fixture), fabric: 0xABC)
    }

    static func value(_ accessory: Accessory, _ service: String, _ characteristic: String) -> Value? {
        accessory.services.first { $0.type == service }?.characteristic(ofType: characteristic)?.value
    }

    @Test("an extended colour light: a Lightbulb with on, brightness, hue, saturation and colour temperature from On/Off, Level and Color Control")
    func extendedColorLight() throws {
        let node = try Self.node("extended_color_light")
        let mapping = NodeMapping(node: node, fabric: 0xABC)
        let light = try #require(mapping.accessories.first)
        #expect(light.id.rawValue == "matter-abc-\(node.nodeID)")
        #expect(light.category == .lightbulb)
        let bulb = try #require(light.services.first { $0.type == "lightbulb" })
        #expect(bulb.characteristics.map(\.type) == ["on", "brightness", "hue", "saturation", "color-temperature"])
        #expect(Self.value(light, "lightbulb", "on") == node[1, 6, 0].flatMap(\.bool).map(Value.bool))
        let level = try #require(node[1, 8, 0]?.double)
        #expect(Self.value(light, "lightbulb", "brightness") == .int(Int64(MatterUnits.percent(level: level))))
        let mireds = try #require(node[1, 0x300, 7]?.int)
        #expect(Self.value(light, "lightbulb", "color-temperature") == .uint(UInt64(mireds)))
        let temperature = try #require(bulb.characteristic(ofType: "color-temperature"))
        #expect(temperature.minValue == node[1, 0x300, 0x400B]?.double && temperature.maxValue == node[1, 0x300, 0x400C]?.double)
        // Accessory Information from Basic Information.
        #expect(light.manufacturer == node[0, 0x28, 1]?.string)
        #expect(light.services.first?.type == "accessory-information")
    }

    @Test("writes become the Matter commands: On/Off, MoveToLevelWithOnOff, MoveToHue, MoveToColorTemperature")
    func lightWrites() throws {
        let node = try Self.node("extended_color_light")
        let mapping = NodeMapping(node: node, fabric: 1)
        func action(_ type: String, _ value: Value) -> MatterWrite? {
            let binding = mapping.bindings.values.first { $0.rule.type == type }
            return binding.flatMap { $0.rule.write?(value, EndpointView(node: node, endpoint: $0.endpoint)) }
        }
        #expect(action("on", .bool(false)) == .command(cluster: 6, name: "Off", payload: [:]))
        #expect(action("on", .bool(true)) == .command(cluster: 6, name: "On", payload: [:]))
        #expect(action("brightness", .int(50)) == .command(cluster: 8, name: "MoveToLevelWithOnOff", payload: ["level": 127, "transitionTime": 0]))
        #expect(action("hue", .float(180)) == .command(cluster: 0x300, name: "MoveToHue", payload: ["hue": 127, "direction": 0, "transitionTime": 0]))
        #expect(action("color-temperature", .uint(300))
            == .command(cluster: 0x300, name: "MoveToColorTemperature", payload: ["colorTemperatureMireds": 300, "transitionTime": 0]))
    }

    @Test("a door lock: Lock Mechanism; locking and unlocking are timed Door Lock commands")
    func doorLock() throws {
        let node = try Self.node("door_lock")
        let mapping = NodeMapping(node: node, fabric: 1)
        let lock = try #require(mapping.accessories.first)
        #expect(lock.category == .doorLock)
        let binding = try #require(mapping.bindings.values.first { $0.rule.type == "lock-target-state" })
        #expect(binding.rule.write?(.uint(1), EndpointView(node: node, endpoint: binding.endpoint))
            == .command(cluster: 0x101, name: "LockDoor", payload: [:], timed: true))
        let state = try #require(node[1, 0x101, 0]?.double)
        #expect(Self.value(lock, "lock-mechanism", "lock-current-state") == .uint(MappingTable.lockCurrentState(state)))
    }

    @Test("an Eve Energy plug: an Outlet with Eve's power, energy, voltage and current from Eve's cluster")
    func eveEnergy() throws {
        let node = try Self.node("eve_energy_plug")
        let mapping = NodeMapping(node: node, fabric: 1)
        let plug = try #require(mapping.accessories.first)
        let outlet = try #require(plug.services.first { $0.type == "outlet" })
        #expect(outlet.characteristic(ofType: EveUUID.power)?.value == node[1, 0x130A_FC01, 0x130A_000A]?.double.map(Value.float))
        #expect(outlet.characteristic(ofType: EveUUID.voltage) != nil)
    }

    @Test("a contact sensor and a smoke alarm; batteries from Power Source")
    func sensors() throws {
        let contact = try #require(try Self.mapping("eve_contact_sensor").accessories.first)
        let node = try Self.node("eve_contact_sensor")
        let state = node.attributes.first { $0.key.cluster == 0x45 && $0.key.attribute == 0 }?.value
        guard let closed = state?.bool else {
            Issue.record("the dump has no Boolean State value")
            return
        }
        #expect(Self.value(contact, "contact-sensor", "contact-sensor-state") == .uint(closed ? 0 : 1))
        #expect(contact.services.contains { $0.type == "battery-service" })
        let smoke = try #require(try Self.mapping("smoke_detector").accessories.first)
        #expect(smoke.services.contains { $0.type == "smoke-sensor" })
    }

    @Test("every cluster without a HomeKit service is kept as a named vendor-style service with one read-only characteristic per attribute")
    func unmappedClustersAreKept() throws {
        let node = try Self.node("extended_color_light")
        let accessory = try #require(NodeMapping(node: node, fabric: 1).accessories.first)
        let modeSelect = try #require(accessory.services.first { $0.name == "Mode Select" })
        #expect(modeSelect.uuid == "00000050-0000-1000-8000-4D6174746572")
        #expect(modeSelect.characteristics.contains { $0.description == "Current Mode" && $0.perms == [.read, .events] })
    }

    @Test("every fixture of the zoo maps: each node an accessory, every accessory a visible service, no two characteristics with one iid")
    func everyFixtureMaps() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/matter/zoo/nodes")
        let fixtures = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(!fixtures.isEmpty)
        for file in fixtures {
            let mapping = try Self.mapping(String(file.dropLast(5)))
            #expect(!mapping.accessories.isEmpty, "\(file)")
            for accessory in mapping.accessories {
                #expect(accessory.category == .bridge || !accessory.visibleServices.isEmpty, "\(file): \(accessory.name) has no visible service")
                let iids = accessory.services.flatMap { [$0.iid] + $0.characteristics.map(\.iid) }
                #expect(Set(iids).count == iids.count, "\(file): \(accessory.name) repeats an iid")
            }
        }
    }
}

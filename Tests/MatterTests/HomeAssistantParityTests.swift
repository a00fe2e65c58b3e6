import Foundation
import HomeModel
import Matter
import Testing
import Wire
@testable import MatterDriver

/// Home Assistant parity: the entities HA's Matter integration makes of the same node dumps
/// (its syrupy snapshots, transcribed into Tests/Fixtures/matter/zoo/expected-entities.json: the
/// platforms of device state and control, sensor, binary_sensor, cover, light, switch, lock, fan,
/// climate, event and valve), against the characteristics HomeGate makes. An entity is matched
/// when a characteristic of HomeGate's is computed from the attribute the entity reads (its
/// endpoint, cluster and attribute). HA's configuration platforms (number, select, button,
/// update) are left out: HomeKit has no counterpart for a device's settings (docs/matter.md,
/// "Home Assistant parity").
@Suite struct HomeAssistantParityTests {
    struct Entity: Decodable {
        let entity_id: String
        let endpoint: Int
        let cluster_id: UInt32
        let attribute_id: UInt32
    }

    struct Fixture: Decodable {
        let entities: [Entity]
    }

    struct Expected: Decodable {
        let fixtures: [String: Fixture]
    }

    /// Entities whose attribute the kept dump does not have: the index held another version of
    /// the fixture than the snapshot was made from, so they cannot be compared (docs/matter.md).
    static let otherVersion: [String: String] = [
        "sensor.dishwasher_countdown_time": "silabs_dishwasher.json has no OperationalState CountdownTime (1/96/2)",
        "sensor.dishwasher_current": "silabs_dishwasher.json has no Electrical Power Measurement on endpoint 2",
        "sensor.dishwasher_voltage": "silabs_dishwasher.json has no Electrical Power Measurement on endpoint 2",
        "binary_sensor.valve_general_fault": "valve.json has no ValveFault (1/129/9)",
        "binary_sensor.valve_valve_blocked": "valve.json has no ValveFault (1/129/9)",
        "binary_sensor.valve_valve_leaking": "valve.json has no ValveFault (1/129/9)",
    ]

    static var zoo: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/matter/zoo")
    }

    /// (endpoint, cluster, attribute) of every attribute a characteristic of the mapping reads.
    static func covered(_ mapping: NodeMapping) -> Set<AttributePath> {
        Set(mapping.bindings.values.flatMap { binding in
            binding.rule.sources.map { AttributePath(endpoint: binding.endpoint, cluster: $0.cluster, attribute: $0.attribute) }
        })
    }

    static func path(_ entity: Entity) -> AttributePath {
        AttributePath(endpoint: entity.endpoint, cluster: entity.cluster_id, attribute: entity.attribute_id)
    }

    @Test("every one of Home Assistant's entities is matched on every node (at least 90% each); those the dump cannot show are known, with their reason")
    func parity() throws {
        let expected = try JSONDecoder().decode(Expected.self, from: Data(contentsOf: Self.zoo.appendingPathComponent("expected-entities.json")))
        var compared = 0
        var entities = 0
        for (name, fixture) in expected.fixtures.sorted(by: { $0.key < $1.key }) {
            let file = Self.zoo.appendingPathComponent("nodes/\(name).json")
            guard FileManager.default.fileExists(atPath: file.path), !fixture.entities.isEmpty else { continue }
            let node = try NodeData(json: JSON.parse(Array(try Data(contentsOf: file))))
            let (comparable, absent) = (fixture.entities.filter { node.attributes[Self.path($0)] != nil },
                                        fixture.entities.filter { node.attributes[Self.path($0)] == nil })
            #expect(absent.allSatisfy { Self.otherVersion[$0.entity_id] != nil },
                    "\(name): entities whose attribute the dump lacks, not listed: \(absent.map(\.entity_id))")
            guard !comparable.isEmpty else { continue }
            compared += 1
            entities += comparable.count
            let covered = Self.covered(NodeMapping(node: node, fabric: 1))
            let missing = comparable.filter { !covered.contains(Self.path($0)) }
            let matched = Double(comparable.count - missing.count) / Double(comparable.count)
            #expect(matched >= 0.9, "\(name): \(Int(matched * 100))% of HA's entities matched; missing \(missing.map(\.entity_id))")
            #expect(missing.isEmpty, "\(name): not matched \(missing.map { "\($0.entity_id) (\($0.endpoint)/\($0.cluster_id)/\($0.attribute_id))" })")
        }
        #expect(compared >= 60 && entities >= 200, "only \(compared) nodes and \(entities) entities compared")
    }
}

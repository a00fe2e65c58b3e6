import Foundation
import HomeModel
import Matter
import Testing
import Wire
@testable import MatterDriver

/// Home Assistant parity: the entities HA's Matter integration makes of the same node dumps
/// (its syrupy snapshots, transcribed into Tests/Fixtures/matter/zoo/expected-entities.json:
/// the sensor and cover platforms), against the characteristics HomeGate makes. An entity is
/// matched when a characteristic of HomeGate's is computed from the attribute the entity reads
/// (its endpoint, cluster and attribute).
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

    /// Entities HomeGate deliberately does not make, and why (docs/matter.md, "Home Assistant parity").
    static let knownGaps: [String: String] = [:]

    static var zoo: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/matter/zoo")
    }

    /// (endpoint, cluster, attribute) of every attribute a characteristic of the mapping reads.
    static func covered(_ mapping: NodeMapping) -> Set<AttributePath> {
        Set(mapping.bindings.values.flatMap { binding in
            binding.rule.sources.map { AttributePath(endpoint: binding.endpoint, cluster: $0.cluster, attribute: $0.attribute) }
        })
    }

    @Test("at least 90% of Home Assistant's entities per node are matched; every gap is known and has its reason")
    func parity() throws {
        let expected = try JSONDecoder().decode(Expected.self, from: Data(contentsOf: Self.zoo.appendingPathComponent("expected-entities.json")))
        var compared = 0
        for (name, fixture) in expected.fixtures.sorted(by: { $0.key < $1.key }) {
            let file = Self.zoo.appendingPathComponent("nodes/\(name).json")
            guard FileManager.default.fileExists(atPath: file.path), !fixture.entities.isEmpty else { continue }
            compared += 1
            let node = try NodeData(json: JSON.parse(Array(try Data(contentsOf: file))))
            let covered = Self.covered(NodeMapping(node: node, fabric: 1))
            let missing = fixture.entities.filter { entity in
                !covered.contains(AttributePath(endpoint: entity.endpoint, cluster: entity.cluster_id, attribute: entity.attribute_id))
            }
            let unexplained = missing.filter { Self.knownGaps[$0.entity_id] == nil }
            let matched = Double(fixture.entities.count - missing.count) / Double(max(1, fixture.entities.count))
            #expect(matched >= 0.9, "\(name): \(Int(matched * 100))% of HA's entities matched; missing \(missing.map(\.entity_id))")
            #expect(unexplained.isEmpty, "\(name): unexplained gaps \(unexplained.map { "\($0.entity_id) (\($0.endpoint)/\($0.cluster_id)/\($0.attribute_id))" })")
        }
        #expect(compared >= 10, "only \(compared) fixtures have both a node dump and HA's entities")
    }
}

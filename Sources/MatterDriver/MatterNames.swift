/// The names of Matter clusters and attributes (from the CHIP SDK's data model, in
/// ``MatterNames/table``), for the vendor-style services of clusters HomeKit has no service for.
enum MatterNames {
    /// `Occupancy Sensing`; an unknown cluster as `Matter cluster 0x1234ABCD`.
    static func cluster(_ id: UInt32) -> String {
        table[id]?.0 ?? "Matter cluster 0x\(String(id, radix: 16, uppercase: true))"
    }

    /// `Switch: Multi Press Complete`; an unknown event as `Switch: event 0x9`.
    static func event(cluster: UInt32, event: UInt32) -> String {
        "\(self.cluster(cluster)): " + (events[cluster]?[event] ?? "event 0x\(String(event, radix: 16, uppercase: true))")
    }

    /// `Hold Time`; an unknown attribute as `Attribute 0x0010`.
    static func attribute(cluster: UInt32, attribute: UInt32) -> String {
        table[cluster]?.1[attribute] ?? "Attribute 0x\(String(attribute, radix: 16, uppercase: true))"
    }
}

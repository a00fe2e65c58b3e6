import HomeModel
import Matter
import Wire

/// One endpoint of a node as the mapping reads it: its attribute values, device types and
/// server clusters.
struct EndpointView: Sendable {
    let node: NodeData
    let endpoint: Int

    /// The value of `cluster`/`attribute` on this endpoint; nil when absent or null.
    subscript(_ cluster: UInt32, _ attribute: UInt32) -> JSON? {
        guard let value = node[endpoint, cluster, attribute], value != .null else { return nil }
        return value
    }

    func number(_ cluster: UInt32, _ attribute: UInt32) -> Double? {
        self[cluster, attribute]?.double
    }

    func bool(_ cluster: UInt32, _ attribute: UInt32) -> Bool? {
        self[cluster, attribute]?.bool
    }

    /// Whether the attribute is there (a null value counts: the device has it, without a value yet).
    func has(_ cluster: UInt32, _ attribute: UInt32) -> Bool {
        node[endpoint, cluster, attribute] != nil
    }

    /// The Descriptor's DeviceTypeList: each entry's device type.
    var deviceTypes: [UInt32] {
        (node[endpoint, ClusterID.descriptor, 0]?.array ?? []).compactMap { entry in
            (entry["0"] ?? entry["deviceType"])?.int.flatMap { UInt32(exactly: $0) }
        }
    }

    /// The Descriptor's ServerList, and every cluster the endpoint has attributes of: only
    /// server clusters have attributes, and a ServerList may leave one out (Home Assistant's
    /// mock temperature, humidity, light and pressure sensors list Identify and OnOff but not
    /// their measurement cluster, as Home Assistant reads them by their attributes too).
    var serverClusters: [UInt32] {
        let listed = (node[endpoint, ClusterID.descriptor, 1]?.array ?? []).compactMap { $0.int.flatMap { UInt32(exactly: $0) } }
        let present = node.attributes.keys.filter { $0.endpoint == endpoint }.map(\.cluster)
        return Array(Set(listed).union(present)).sorted()
    }

    /// The Descriptor's PartsList: the endpoints below this one.
    var parts: [Int] {
        (node[endpoint, ClusterID.descriptor, 3]?.array ?? []).compactMap { $0.int.map(Int.init) }
    }

    func hasServer(_ cluster: UInt32) -> Bool {
        serverClusters.contains(cluster)
    }

    /// A cluster's FeatureMap.
    func features(_ cluster: UInt32) -> UInt32 {
        self[cluster, ClusterID.featureMap]?.int.flatMap { UInt32(exactly: $0) } ?? 0
    }
}

/// How a HomeKit write is carried out on the node: a command, or an attribute write.
enum MatterWrite: Sendable, Hashable {
    case command(cluster: UInt32, name: String, payload: [String: JSON], timed: Bool = false)
    case attribute(cluster: UInt32, attribute: UInt32, value: JSON)
}

/// One HomeKit characteristic of a service made from a Matter endpoint: the attributes its
/// value comes from, how it is computed, and how a write goes to the node.
struct CharacteristicRule: Sendable {
    /// A catalog characteristic name, or a vendor characteristic's UUID.
    let type: String
    /// The attributes (of the same endpoint) the value is computed from; a change of any of them
    /// computes it again. The characteristic exists when the first is there (or `present` says so).
    let sources: [(cluster: UInt32, attribute: UInt32)]
    let read: @Sendable (EndpointView) -> Value?
    let write: (@Sendable (Value, EndpointView) -> MatterWrite?)?
    /// The device's own bounds, where it gives them (colour temperature, setpoints).
    let bounds: (@Sendable (EndpointView) -> AccessoryBlueprint.Bounds?)?
    /// The device's own valid values (the system modes a thermostat offers).
    let validValues: (@Sendable (EndpointView) -> [Double]?)?
    let present: (@Sendable (EndpointView) -> Bool)?

    init(_ type: String, _ sources: [(cluster: UInt32, attribute: UInt32)], read: @escaping @Sendable (EndpointView) -> Value?,
         write: (@Sendable (Value, EndpointView) -> MatterWrite?)? = nil, bounds: (@Sendable (EndpointView) -> AccessoryBlueprint.Bounds?)? = nil,
         validValues: (@Sendable (EndpointView) -> [Double]?)? = nil, present: (@Sendable (EndpointView) -> Bool)? = nil) {
        self.type = type
        self.sources = sources
        self.read = read
        self.write = write
        self.bounds = bounds
        self.validValues = validValues
        self.present = present
    }

    func isPresent(on view: EndpointView) -> Bool {
        if let present { return present(view) }
        guard let first = sources.first else { return true }
        return view.has(first.cluster, first.attribute)
    }
}

/// A HomeKit service made from a Matter endpoint: when it applies, which clusters it covers
/// (so they get no vendor-style service of their own), and its characteristics.
struct ServiceRule: Sendable {
    /// The catalog service name.
    let type: String
    /// Its place in the table: part of the service's instance id, so ids stay stable.
    let slot: Int
    let covers: Set<UInt32>
    let applies: @Sendable (EndpointView) -> Bool
    let characteristics: [CharacteristicRule]
    /// Attributes of the covered clusters HomeKit has no characteristic for, kept on the service
    /// as vendor-style characteristics (a battery's voltage), when the endpoint has them.
    var extras: [(cluster: UInt32, attribute: UInt32)] = []
}

extension Value {
    /// A Boolean written as `true`/`false` or 1/0.
    var isTrue: Bool {
        switch self {
        case .bool(let value): value
        default: number.map { $0 != 0 } ?? false
        }
    }
}

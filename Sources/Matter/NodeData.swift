import Wire

/// A commissioned node as the Matter Server describes it (`MatterNodeData`): its id on the
/// server's fabric, whether it answers, whether it is a bridge, and every attribute value of its
/// last interview and subscription, by path.
public struct NodeData: Sendable, Hashable {
    public var nodeID: UInt64
    /// The server has a live subscription with the node.
    public var isAvailable: Bool
    /// The node has an Aggregator endpoint (a Matter bridge).
    public var isBridge: Bool
    public var attributes: [AttributePath: JSON]

    public init(nodeID: UInt64, isAvailable: Bool, isBridge: Bool = false, attributes: [AttributePath: JSON]) {
        self.nodeID = nodeID
        self.isAvailable = isAvailable
        self.isBridge = isBridge
        self.attributes = attributes
    }

    /// Reads the server's JSON object; attribute keys that are no path are left out.
    /// - Throws: ``ServerError/malformed(_:)`` without a `node_id`.
    public init(json: JSON) throws(ServerError) {
        guard let id = json["node_id"].flatMap(Self.unsigned) else {
            throw .malformed("a node without a node_id: \(json.text.prefix(80))")
        }
        nodeID = id
        isAvailable = json["available"]?.bool ?? false
        isBridge = json["is_bridge"]?.bool ?? false
        var attributes: [AttributePath: JSON] = [:]
        for (key, value) in json["attributes"]?.object ?? [:] {
            if let path = AttributePath(key) { attributes[path] = value }
        }
        self.attributes = attributes
    }

    /// The value at `endpoint/cluster/attribute`.
    public subscript(endpoint: Int, cluster: UInt32, attribute: UInt32) -> JSON? {
        attributes[AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)]
    }

    /// The node's endpoints, in order.
    public var endpoints: [Int] {
        Array(Set(attributes.keys.map(\.endpoint))).sorted()
    }

    static func unsigned(_ json: JSON) -> UInt64? {
        switch json {
        case .int(let value) where value >= 0: UInt64(value)
        case .uint(let value): value
        default: nil
        }
    }
}

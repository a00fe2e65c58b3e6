import Wire

/// An event a node sent (`node_event`): a switch pressed, a door lock alarm, ...
public struct NodeEvent: Sendable, Hashable {
    public var nodeID: UInt64
    public var endpoint: Int
    public var cluster: UInt32
    public var event: UInt32
    /// The event's fields as the server writes them (struct fields by name), or nil.
    public var data: JSON?

    public init(nodeID: UInt64, endpoint: Int, cluster: UInt32, event: UInt32, data: JSON? = nil) {
        self.nodeID = nodeID
        self.endpoint = endpoint
        self.cluster = cluster
        self.event = event
        self.data = data
    }

    init(json: JSON) throws(ServerError) {
        guard let node = json["node_id"].flatMap(NodeData.unsigned), let endpoint = json["endpoint_id"]?.int,
              let cluster = json["cluster_id"]?.int, let event = json["event_id"]?.int,
              let clusterID = UInt32(exactly: cluster), let eventID = UInt32(exactly: event) else {
            throw .malformed("a node event without node, endpoint, cluster or event id: \(json.text.prefix(120))")
        }
        self.init(nodeID: node, endpoint: Int(endpoint), cluster: clusterID, event: eventID,
                  data: json["data"].flatMap { $0 == .null ? nil : $0 })
    }
}

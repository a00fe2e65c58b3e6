import Wire

/// One message from the Matter Server, read (parsing only; the client decides what to do).
public enum ServerMessage: Sendable, Hashable {
    /// The first message of a connection.
    case serverInfo(ServerInfo)
    /// The answer to command `id`.
    case result(id: String, JSON)
    /// Command `id` failed.
    case error(id: String, ServerError.ErrorCode, details: String)
    /// Something happened on the server.
    case event(ServerEvent)

    /// Reads one WebSocket text message.
    /// - Throws: ``ServerError/malformed(_:)`` for anything that is not one of the server's messages.
    public init(text: String) throws(ServerError) {
        let json: JSON
        do {
            json = try JSON.parse(text, limits: .init(maximumDepth: 96))
        } catch {
            throw .malformed("not JSON: \(error)")
        }
        guard json.object != nil else { throw .malformed("not a JSON object: \(text.prefix(80))") }
        if let id = json["message_id"]?.string {
            if let code = json["error_code"]?.int {
                self = .error(id: id, ServerError.ErrorCode(rawValue: Int(code)) ?? .unknown, details: json["details"]?.string ?? "")
            } else {
                self = .result(id: id, json["result"] ?? .null)
            }
        } else if let name = json["event"]?.string {
            self = .event(try ServerEvent(name: name, data: json["data"] ?? .null))
        } else if let info = ServerInfo(json: json) {
            self = .serverInfo(info)
        } else {
            throw .malformed("a message that is no result, event or server info: \(text.prefix(80))")
        }
    }
}

/// An event the Matter Server sends to listening clients.
public enum ServerEvent: Sendable, Hashable {
    /// A node was commissioned and interviewed.
    case nodeAdded(NodeData)
    /// A node was interviewed again or its availability changed.
    case nodeUpdated(NodeData)
    case nodeRemoved(UInt64)
    /// An attribute changed on a node.
    case attributeUpdated(node: UInt64, AttributePath, JSON)
    /// A node sent an event.
    case nodeEvent(NodeEvent)
    /// An endpoint appeared on or left a node (a bridge's device added or removed); the node's
    /// data follows in a `node_updated`.
    case endpointChanged(node: UInt64)
    /// The server is stopping.
    case serverShutdown
    /// An event this client does not use.
    case other(String)

    init(name: String, data: JSON) throws(ServerError) {
        switch name {
        case "node_added": self = .nodeAdded(try NodeData(json: data))
        case "node_updated": self = .nodeUpdated(try NodeData(json: data))
        case "node_removed":
            guard let id = NodeData.unsigned(data) else { throw .malformed("node_removed without a node id") }
            self = .nodeRemoved(id)
        case "attribute_updated":
            guard let parts = data.array, parts.count == 3, let node = NodeData.unsigned(parts[0]),
                  let text = parts[1].string, let path = AttributePath(text) else {
                throw .malformed("attribute_updated not [node, path, value]: \(data.text.prefix(80))")
            }
            self = .attributeUpdated(node: node, path, parts[2])
        case "node_event": self = .nodeEvent(try NodeEvent(json: data))
        case "endpoint_added", "endpoint_removed":
            guard let node = data["node_id"].flatMap(NodeData.unsigned) else { throw .malformed("\(name) without a node id") }
            self = .endpointChanged(node: node)
        case "server_shutdown": self = .serverShutdown
        default: self = .other(name)
        }
    }
}

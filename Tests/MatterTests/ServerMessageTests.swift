import Matter
import Testing
import Wire

@Suite struct ServerMessageTests {
    @Test("the server's first message is its info; a server of schema 11, or a later one that still serves 11, is compatible")
    func serverInfo() throws {
        let text = """
            {"fabric_id": 1, "compressed_fabric_id": 10285444452341027329, "schema_version": 11, "min_supported_schema_version": 9,
             "sdk_version": "2025.7.0", "wifi_credentials_set": false, "thread_credentials_set": false, "bluetooth_enabled": false}
            """
        guard case .serverInfo(let info) = try ServerMessage(text: text) else { Issue.record("not server info"); return }
        #expect(info.compressedFabricID == 10_285_444_452_341_027_329)
        #expect(info.schemaVersion == 11 && info.isCompatible)
        #expect(ServerInfo(schemaVersion: 12, minimumSupportedSchemaVersion: 10).isCompatible)
        #expect(!ServerInfo(schemaVersion: 10, minimumSupportedSchemaVersion: 5).isCompatible)
        #expect(!ServerInfo(schemaVersion: 14, minimumSupportedSchemaVersion: 12).isCompatible)
        let refusal = ServerError.incompatible(ServerInfo(schemaVersion: 14, minimumSupportedSchemaVersion: 12)).description
        #expect(refusal.contains("schema 14") && refusal.contains("update HomeGate"), "\(refusal)")
    }

    @Test("results, errors and events are read; anything else is refused as malformed")
    func messages() throws {
        #expect(try ServerMessage(text: #"{"message_id": "7", "result": null}"#) == .result(id: "7", .null))
        #expect(try ServerMessage(text: #"{"message_id": "8", "error_code": 3, "details": "Node 5 is not (yet) available."}"#)
            == .error(id: "8", .nodeNotReady, details: "Node 5 is not (yet) available."))
        #expect(try ServerMessage(text: #"{"event": "attribute_updated", "data": [900001, "1/6/0", false]}"#)
            == .event(.attributeUpdated(node: 900_001, AttributePath(endpoint: 1, cluster: 6, attribute: 0), .bool(false))))
        #expect(try ServerMessage(text: #"{"event": "node_removed", "data": 4}"#) == .event(.nodeRemoved(4)))
        let event = try ServerMessage(text: """
            {"event": "node_event", "data": {"node_id": 3, "endpoint_id": 2, "cluster_id": 59, "event_id": 6, "event_number": 10,
             "priority": 1, "timestamp": 1, "timestamp_type": 0, "data": {"newPosition": 0, "previousPosition": 1, "totalNumberOfPressesCounted": 2}}}
            """)
        guard case .event(.nodeEvent(let nodeEvent)) = event else { Issue.record("\(event)"); return }
        #expect(nodeEvent.endpoint == 2 && nodeEvent.cluster == 59 && nodeEvent.event == 6)
        #expect(nodeEvent.data?["totalNumberOfPressesCounted"] == .int(2))
        #expect(throws: ServerError.self) { try ServerMessage(text: "[1, 2]") }
        #expect(throws: ServerError.self) { try ServerMessage(text: #"{"hello": 1}"#) }
        #expect(throws: ServerError.self) { try ServerMessage(text: #"{"event": "attribute_updated", "data": [1, "x/6", 0]}"#) }
    }

    @Test("attribute paths are endpoint/cluster/attribute; wildcards and junk are not paths")
    func paths() {
        #expect(AttributePath("1/768/16394") == AttributePath(endpoint: 1, cluster: 0x300, attribute: 0x400A))
        #expect(AttributePath("1/319486977/319422474")?.cluster == 0x130A_FC01)
        #expect(AttributePath("1/*/0") == nil)
        #expect(AttributePath("1/6") == nil)
        #expect(AttributePath("70000/6/0") == nil)
    }
}

import Wire

/// What the Matter Server says of itself when a client connects (its first message).
public struct ServerInfo: Sendable, Hashable {
    public var fabricID: UInt64
    public var compressedFabricID: UInt64
    /// The API schema the server speaks.
    public var schemaVersion: Int
    /// The oldest client schema the server still serves.
    public var minimumSupportedSchemaVersion: Int
    public var sdkVersion: String
    /// The server can commission over Bluetooth (else only devices already on the network).
    public var bluetoothEnabled: Bool

    /// The API schema this client speaks: python-matter-server 8.x (and the matter.js server,
    /// which keeps its API).
    public static let clientSchemaVersion = 11

    public init(fabricID: UInt64 = 0, compressedFabricID: UInt64 = 0, schemaVersion: Int, minimumSupportedSchemaVersion: Int,
                sdkVersion: String = "", bluetoothEnabled: Bool = false) {
        self.fabricID = fabricID
        self.compressedFabricID = compressedFabricID
        self.schemaVersion = schemaVersion
        self.minimumSupportedSchemaVersion = minimumSupportedSchemaVersion
        self.sdkVersion = sdkVersion
        self.bluetoothEnabled = bluetoothEnabled
    }

    /// Reads the server's `server_info` message; nil when it is not one (no schema version).
    public init?(json: JSON) {
        guard let schema = json["schema_version"]?.int, let minimum = json["min_supported_schema_version"]?.int else { return nil }
        self.init(fabricID: json["fabric_id"].flatMap(NodeData.unsigned) ?? 0,
                  compressedFabricID: json["compressed_fabric_id"].flatMap(NodeData.unsigned) ?? 0,
                  schemaVersion: Int(schema), minimumSupportedSchemaVersion: Int(minimum),
                  sdkVersion: json["sdk_version"]?.string ?? "", bluetoothEnabled: json["bluetooth_enabled"]?.bool ?? false)
    }

    /// Whether the server serves a client of ``clientSchemaVersion``: it speaks that schema or a
    /// later one that still serves it.
    public var isCompatible: Bool {
        minimumSupportedSchemaVersion <= Self.clientSchemaVersion && Self.clientSchemaVersion <= schemaVersion
    }
}

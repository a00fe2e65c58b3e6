/// The `matter:` section: Matter devices through a Matter Server.
///
/// ```yaml
/// matter:
///   url: ws://192.168.1.10:5580/ws   # a Matter Server you run (python-matter-server or matter.js)
/// ```
/// or `managed: true` to have HomeGate start `matter-server` itself (its storage under the data
/// directory, `matter/`), listening on `port` (default 5580) on the loopback interface.
extension ConfigFile {
    public struct Matter: Sendable, Equatable {
        /// The server's WebSocket API (`ws://host:port/ws`).
        public var url: String
        /// HomeGate starts and stops the server itself.
        public var managed: Bool
        /// The managed server's program (`matter-server`, found on PATH).
        public var command: String
        /// The managed server's port.
        public var port: Int

        public init(url: String, managed: Bool = false, command: String = "matter-server", port: Int = 5580) {
            self.url = url
            self.managed = managed
            self.command = command
            self.port = port
        }
    }

    /// Reads the `matter:` section: `url`, or `managed: true` with `port` and `command`.
    static func matter(_ node: ConfigNode) throws(ConfigError) -> Matter? {
        let keys = try node.mapping(allowed: ["url", "managed", "port", "command"])
        let managed = try keys["managed"]?.bool() ?? false
        let port = try keys["port"]?.int(in: 1...65_535) ?? 5580
        let command = try keys["command"]?.nonEmptyString() ?? "matter-server"
        if let urlNode = keys["url"] {
            let url = try urlNode.nonEmptyString()
            guard url.hasPrefix("ws://") || url.hasPrefix("wss://"), url.count > 6 else {
                throw urlNode.error("expected the Matter Server's WebSocket address, ws://host:5580/ws, got \"\(url)\"")
            }
            if managed { throw urlNode.error("\"url\" is for a server you run; with \"managed: true\" HomeGate runs its own on \"port\"") }
            return Matter(url: url, managed: false, command: command, port: port)
        }
        guard managed else {
            throw node.error("\"url\" (a Matter Server you run, ws://host:5580/ws) or \"managed: true\" is required here")
        }
        return Matter(url: "ws://127.0.0.1:\(port)/ws", managed: true, command: command, port: port)
    }
}

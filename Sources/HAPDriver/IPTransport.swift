import HAP

/// HAP over IP: a TCP connection to the device (a SwiftNIO channel on
/// ``HAP/Client/eventLoopGroup``), pair-verify, then the encrypted session (``HAP/Client``).
public struct IPTransport: HAPTransport {
    public init() {}

    public func openSession(host: String, port: Int, controller: ControllerIdentity, accessory: AccessoryPairing,
                            timeout: Duration) async throws(HAPError) -> any AccessorySession {
        try await Client.session(host: host, port: port, controller: controller, accessory: accessory, timeout: timeout)
    }

    public func pairSetup(host: String, port: Int, code: String, controller: ControllerIdentity) async throws(HAPError) -> AccessoryPairing {
        let client = try await Client.connect(host: host, port: port)
        defer { client.close() }
        return try await client.pairSetup(code: code, controller: controller)
    }
}

extension Client: AccessorySession {
    public var preferredExecutor: (any TaskExecutor)? { taskExecutor }
}

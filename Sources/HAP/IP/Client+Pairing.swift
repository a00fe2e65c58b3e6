import NIOCore
import Wire

/// HAP over IP's pairing procedures: `POST /pair-setup` and `POST /pair-verify` on the connection.
extension Client: PairingChannel {
    func exchange(_ procedure: PairingProcedure, _ message: TLV8, timeout: Duration) async throws(HAPError) -> TLV8 {
        try await tlvRequest(procedure == .setup ? "/pair-setup" : "/pair-verify", message, timeout: timeout)
    }
}

extension Client {
    /// Pairs with the accessory using its setup code: pair-setup M1-M6 (`POST /pair-setup`).
    ///
    /// The connection stays in plaintext; verify on a connection (this one or a new one) to
    /// use the pairing.
    /// - Returns: the accessory's pairing id and long-term public key, to store.
    /// - Throws: ``HAPError``: ``HAPError/Kind/pairing`` with ``PairingErrorCode/authentication``
    ///   for a wrong code, ``PairingErrorCode/unavailable`` when the accessory is paired already.
    public func pairSetup(code: String, controller: ControllerIdentity) async throws(HAPError) -> AccessoryPairing {
        try await performPairSetup(code: code, controller: controller, timeout: .seconds(30))
    }

    /// Proves both sides' identities (pair-verify M1-M4, `POST /pair-verify`) and switches the
    /// connection to the encrypted session.
    /// - Throws: ``HAPError`` if the accessory is not the one paired, or no longer knows us.
    public func verify(controller: ControllerIdentity, accessory: AccessoryPairing) async throws(HAPError) {
        guard !connection.isEncrypted else { throw HAPError(.state, "the connection to \(host):\(port) is verified already") }
        let keys = try await performPairVerify(controller: controller, accessory: accessory, deadline: .now + Client.defaultTimeout)
        try await connection.encrypt(with: keys)
    }

    /// Connects and verifies: a ready encrypted session.
    public static func session(host: String, port: Int, controller: ControllerIdentity, accessory: AccessoryPairing,
                               timeout: Duration = .seconds(5), group: any EventLoopGroup = Client.eventLoopGroup) async throws(HAPError) -> Client {
        let client = try await connect(host: host, port: port, timeout: timeout, group: group)
        do {
            try await client.verify(controller: controller, accessory: accessory)
        } catch {
            client.close()
            throw error
        }
        return client
    }

    func requireSession(_ operation: String) throws(HAPError) {
        guard connection.isEncrypted else { throw HAPError(.state, "\(operation) needs a verified session with \(host):\(port)") }
    }
}

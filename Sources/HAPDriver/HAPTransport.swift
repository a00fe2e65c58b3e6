import HAP
import Wire

/// How the driver reaches a paired device: it opens a verified session with it.
///
/// The driver's engine (``DeviceLink``: reconnects, keep-alive, events, reads and writes) sees
/// only this and ``AccessorySession``, so a second transport, such as HAP over CoAP for Thread
/// accessories, goes beside ``IPTransport`` without touching it.
public protocol HAPTransport: Sendable {
    /// Opens a session with the accessory server at `host`:`port` and verifies the pairing
    /// (pair-verify with `controller`'s identity against `accessory`'s long-term key).
    /// - Parameter timeout: how long reaching the device and verifying may take.
    /// - Throws: ``HAPError`` if the device cannot be reached, does not answer in time, or is not
    ///   the one paired (or no longer knows the controller).
    func openSession(host: String, port: Int, controller: ControllerIdentity, accessory: AccessoryPairing,
                     timeout: Duration) async throws(HAPError) -> any AccessorySession

    /// Pairs with the accessory at `host`:`port` using its setup code (pair-setup M1-M6).
    /// - Returns: the accessory's pairing id and long-term public key, to store.
    func pairSetup(host: String, port: Int, code: String, controller: ControllerIdentity) async throws(HAPError) -> AccessoryPairing
}

extension HAPTransportKind {
    /// The transport that reaches devices of this kind.
    public var transport: any HAPTransport {
        switch self {
        case .ip: IPTransport()
        case .coap: CoAPTransport()
        }
    }
}

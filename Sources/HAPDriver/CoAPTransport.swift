import HAP

/// HAP over CoAP, for Thread accessories: a UDP socket to the device (IPv6 as border routers
/// route them), pair-verify on `POST /2`, then the encrypted PDU session (``HAP/CoAPSession``).
public struct CoAPTransport: HAPTransport {
    public init() {}

    public func openSession(host: String, port: Int, controller: ControllerIdentity, accessory: AccessoryPairing,
                            timeout: Duration) async throws(HAPError) -> any AccessorySession {
        try await CoAPSession.open(host: host, port: port, controller: controller, accessory: accessory, timeout: timeout)
    }

    public func pairSetup(host: String, port: Int, code: String, controller: ControllerIdentity) async throws(HAPError) -> AccessoryPairing {
        try await CoAPSession.pairSetup(host: host, port: port, code: code, controller: controller)
    }
}

extension CoAPSession: AccessorySession {}

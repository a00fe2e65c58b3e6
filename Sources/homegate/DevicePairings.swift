import Gateway
import HAP
import HAPDriver
import HomeStore
import Logging

/// The controllers a paired HomeKit device knows, listed and removed on a verified session of
/// this gateway's own: `$request/accessory/pairings` (``GatewayPairing``) and
/// `homegate pairings --device` both go through here. This gateway's own pairing is never
/// removed here (unpairing is ``GatewayPairing/unpair(_:)``).
struct DevicePairings {
    let controller: ControllerIdentity
    let logger: Logger

    /// The controllers the device lists, this gateway marked.
    func controllers(of stored: StoredPairing) async throws -> [DeviceController] {
        do throws(HAPError) {
            let entries = try await withSession(stored) { client throws(HAPError) in try await client.pairings() }
            return entries.map { entry in
                DeviceController(pairingID: entry.pairingID, isAdmin: entry.isAdmin, isThisGateway: Self.same(entry.pairingID, controller.pairingID))
            }
        } catch {
            throw Self.refusal(error, doing: "list the controllers of \(stored.name)")
        }
    }

    /// Removes controller `pairingID` from the device, after checking the device lists it.
    func remove(_ pairingID: String, from stored: StoredPairing) async throws {
        guard !Self.same(pairingID, controller.pairingID) else {
            throw PairingFailure(code: "not-allowed", message: "\(pairingID) is this gateway's own pairing; to unpair the device, use accessory/unpair")
        }
        do throws(HAPError) {
            try await withSession(stored) { client throws(HAPError) in
                guard try await client.pairings().contains(where: { Self.same($0.pairingID, pairingID) }) else {
                    throw HAPError(.state, "no controller \(pairingID) is paired with it")
                }
                try await client.removePairing(pairingID)
            }
            logger.info("removed controller \(pairingID) from \(stored.name) (\(stored.deviceID))")
        } catch {
            if error.kind == .state { throw PairingFailure(code: "not-found", message: "\(stored.name): \(error.message)") }
            throw Self.refusal(error, doing: "remove controller \(pairingID) from \(stored.name)")
        }
    }

    /// Runs `body` on a verified session of its own with the stored device.
    func withSession<Result: Sendable>(_ stored: StoredPairing, _ body: (any AccessorySession) async throws(HAPError) -> Result)
        async throws(HAPError) -> Result {
        let transport = (HAPTransportKind(rawValue: stored.transport) ?? .ip).transport
        let client = try await transport.openSession(host: stored.host, port: stored.port, controller: controller,
                                                     accessory: AccessoryPairing(pairingID: stored.deviceID, publicKey: stored.publicKey), timeout: .seconds(8))
        defer { client.close() }
        return try await body(client)
    }

    /// Pairing identifiers are UUIDs; devices keep them in either case.
    static func same(_ one: String, _ other: String) -> Bool {
        one.caseInsensitiveCompare(other) == .orderedSame
    }

    /// A device's answer to a pairings request, in words: not an admin, not now, not supported,
    /// or what failed.
    static func refusal(_ error: HAPError, doing what: String) -> PairingFailure {
        switch (error.pairingError, error.status) {
        case (.authentication?, _), (_, .insufficientPrivileges?), (_, .insufficientAuthorization?):
            return PairingFailure(code: "device-error", message: "the device refused to \(what): this gateway is not an admin of it")
        case (.unavailable?, _), (.busy?, _), (_, .notAllowedInCurrentState?):
            return PairingFailure(code: "device-error", message: "the device refused to \(what) now (\(error.message))")
        default:
            if error.kind == .status, error.status == nil, error.pairingError == nil {
                return PairingFailure(code: "device-error", message: "the device does not support managing its pairings: could not \(what) (\(error.message))")
            }
            return PairingFailure(code: error.kind == .timeout ? "timeout" : "device-error", message: "could not \(what): \(error.message)")
        }
    }
}

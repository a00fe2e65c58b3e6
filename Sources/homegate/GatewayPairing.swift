import Accessories
import Foundation
import Gateway
import HAP
import HAPDriver
import HomeModel
import HomeStore
import Logging
import Matter
import MatterDriver

/// `$request/accessory/pair` and `unpair` for a running gateway: the same steps as `homegate
/// pair` and `homegate unpair`, then the HAP driver takes the new set of pairings at once (the
/// new device's accessories join when it answers; an unpaired one's leave).
struct GatewayPairing: PairingService {
    let store: HomeStore
    let controller: ControllerIdentity
    let driver: HAPDriver
    /// The Matter driver, when the configuration has a `matter:` section.
    let matter: MatterDriver?
    /// HomeKit accessories and Matter devices found, not paired.
    let browser: AccessoryBrowser
    let logger: Logger

    func pair(host: String, port: Int, transport: String, code: String, placement: Placement) async throws -> [AccessoryID] {
        if transport == "matter" { return try await commission(code: code, placement: placement) }
        do {
            _ = try PairSetup.normalised(code)
        } catch {
            throw PairingFailure(code: "invalid-request", message: error.message)
        }
        guard let kind = HAPTransportKind(rawValue: transport) else {
            throw PairingFailure(code: "invalid-request", message: "\"transport\" must be \"ip\" or \"coap\", not \"\(transport)\"")
        }
        do {
            let (pairing, database) = try await Self.pair(host: host, port: port, transport: kind, code: code, controller: controller, logger: logger) { pairing, database in
                let name = PairCommand.name(of: database) ?? "Accessory \(pairing.pairingID)"
                try store.savePairing(StoredPairing(deviceID: pairing.pairingID, publicKey: pairing.publicKey, host: host, port: port, name: name,
                                                    home: placement.home, room: placement.room, transport: kind.rawValue))
                logger.info("paired with \(name) (\(pairing.pairingID)) at \(host):\(port) over \(kind == .coap ? "HAP over CoAP" : "HAP over IP")")
            }
            driver.replaceDevices(PairingStore.devices(try store.pairings()))
            return database.map { HAPDriver.accessoryID(deviceID: pairing.pairingID, aid: $0.aid) }
        } catch let error as HAPError {
            throw PairingFailure(code: error.kind == .timeout ? "timeout" : "device-error", message: PairCommand.explain(error, host: host, port: port))
        } catch {
            throw PairingFailure(code: "device-error", message: "\(error)")
        }
    }

    /// Commissions a Matter device through the Matter Server.
    private func commission(code: String, placement: Placement) async throws -> [AccessoryID] {
        guard let matter else {
            throw PairingFailure(code: "not-allowed", message: "this gateway has no Matter Server (add a matter: section to the configuration)")
        }
        let setupCode: SetupCode
        do {
            setupCode = try SetupCode(code)
        } catch {
            throw PairingFailure(code: "invalid-request", message: error.description)
        }
        do {
            return try await matter.commission(setupCode, placement: placement)
        } catch {
            throw PairingFailure(code: error.code, message: error.message)
        }
    }

    func setBrowsing(_ on: Bool) -> Bool {
        browser.setBrowsing(on)
    }

    var browserUpdates: AsyncStream<[FoundAccessory]> { browser.rounds }

    func unpair(_ accessory: AccessoryID) async throws {
        if MatterDriver.isMatterAccessory(accessory), let matter {
            do {
                try await matter.decommission(accessory)
            } catch {
                throw PairingFailure(code: error.code, message: error.message)
            }
            return
        }
        let stored = try storedPairing(of: accessory)
        do throws(HAPError) {
            try await Self.removeOwnPairing(AccessoryPairing(pairingID: stored.deviceID, publicKey: stored.publicKey), host: stored.host, port: stored.port,
                                            transport: (HAPTransportKind(rawValue: stored.transport) ?? .ip).transport, controller: controller)
        } catch {
            throw PairingFailure(code: "device-error", message: "could not remove the pairing on \(stored.name) at \(stored.host):\(stored.port): \(error.message)")
        }
        try store.removePairing(deviceID: stored.deviceID)
        logger.info("unpaired \(stored.name) (\(stored.deviceID))")
        driver.replaceDevices(PairingStore.devices(try store.pairings()))
    }

    func controllers(of accessory: AccessoryID) async throws -> [DeviceController] {
        try await devicePairings.controllers(of: try storedPairing(of: accessory))
    }

    func removeController(_ pairingID: String, from accessory: AccessoryID) async throws {
        try await devicePairings.remove(pairingID, from: try storedPairing(of: accessory))
    }

    private var devicePairings: DevicePairings {
        DevicePairings(controller: controller, logger: logger)
    }

    /// The stored pairing of the HomeKit device `accessory` belongs to.
    private func storedPairing(of accessory: AccessoryID) throws -> StoredPairing {
        if MatterDriver.isMatterAccessory(accessory) {
            throw PairingFailure(code: "not-allowed", message: "\(accessory) is a Matter device: its other controllers are fabrics, kept on the device "
                                 + "(its maker's app, or Apple Home's Settings, shows and removes them), not HomeKit pairings")
        }
        guard let stored = try store.pairings().first(where: { pairing in
            accessory.rawValue.hasPrefix(HAPDriver.accessoryID(deviceID: pairing.deviceID, aid: 1).rawValue.dropLast())
        }) else {
            throw PairingFailure(code: "not-found", message: "\(accessory) is not an accessory of a paired HomeKit device")
        }
        return stored
    }

    /// Pairs with the accessory: pair-setup, then the accessory database on a verified session,
    /// then `keep` (which stores the pairing). Should anything after pair-setup fail (the
    /// database is refused, the store cannot be written), the new pairing is removed from the
    /// accessory again before the error is thrown: an accessory is never left paired with a
    /// controller that kept nothing (it would answer every later pair-setup "already paired",
    /// and a real lock would need a factory reset).
    static func pair(
        host: String, port: Int, transport kind: HAPTransportKind = .ip, code: String, controller: ControllerIdentity, logger: Logger,
        keep: (AccessoryPairing, [AccessoryDescription]) async throws -> Void
    ) async throws -> (AccessoryPairing, [AccessoryDescription]) {
        let transport = kind.transport
        let pairing = try await transport.pairSetup(host: host, port: port, code: code, controller: controller)
        do {
            let database = try await describe(host: host, port: port, transport: transport, pairing: pairing, controller: controller)
            try await keep(pairing, database)
            return (pairing, database)
        } catch {
            await forget(pairing, host: host, port: port, transport: transport, controller: controller, logger: logger)
            throw afterPairSetup(error)
        }
    }

    /// An error after pair-setup succeeded, told as such: the setup code was right, so a
    /// pairing error there (a pair-verify the accessory refused) is not the code's.
    private static func afterPairSetup(_ error: any Error) -> any Error {
        guard let error = error as? HAPError, let code = error.pairingError else { return error }
        let answer = code == .authentication ? "it did not accept the new pairing's signature (authentication)" : code.description
        return HAPError(error.kind, "the setup code was accepted, but pair-verify with the new pairing failed: \(answer)")
    }

    /// Asks the accessory to remove this controller's pairing; logs what came of it. It needs
    /// only a verified session (and over CoAP the database's pairings characteristic), never a
    /// value; a step that failed once may work the next time (a dropped datagram, a device
    /// busy after pair-setup), so it is tried ``forgetAttempts`` times, a second apart.
    static func forget(_ pairing: AccessoryPairing, host: String, port: Int, transport: any HAPTransport, controller: ControllerIdentity, logger: Logger) async {
        var lastError: HAPError?
        for attempt in 1...forgetAttempts {
            if attempt > 1 { try? await Task.sleep(for: .seconds(1)) }
            do throws(HAPError) {
                try await removeOwnPairing(pairing, host: host, port: port, transport: transport, controller: controller)
                logger.warning("pairing with \(host):\(port) failed after pair-setup; the accessory was told to forget the new pairing, so it can be paired again")
                return
            } catch {
                lastError = error
            }
        }
        logger.error("pairing with \(host):\(port) failed after pair-setup, and the accessory could not be told to forget the new pairing (\(lastError?.message ?? "")); remove it on the accessory (or reset the accessory) before pairing again")
    }

    /// How many times a failed pairing's removal is tried.
    static let forgetAttempts = 3

    /// Removes this controller's pairing on a session of its own (`homegate unpair` too).
    static func removeOwnPairing(_ pairing: AccessoryPairing, host: String, port: Int, transport: any HAPTransport,
                                         controller: ControllerIdentity) async throws(HAPError) {
        let client = try await transport.openSession(host: host, port: port, controller: controller, accessory: pairing, timeout: .seconds(8))
        defer { client.close() }
        do {
            try await client.removePairing(controller.pairingID)
        } catch {
            guard error.kind == .connection else { throw error } // it may close the session once it forgot us
        }
    }

    /// Verifies the new pairing on a fresh session and reads the accessory database.
    static func describe(host: String, port: Int, transport: any HAPTransport, pairing: AccessoryPairing,
                         controller: ControllerIdentity) async throws(HAPError) -> [AccessoryDescription] {
        let client = try await transport.openSession(host: host, port: port, controller: controller, accessory: pairing, timeout: .seconds(8))
        defer { client.close() }
        return try await client.accessoryDatabase(timeout: Client.defaultTimeout).accessories
    }
}

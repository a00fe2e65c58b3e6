import Accessories
import Foundation
import HAP
import HAPDriver
import HomeGateConfig
import HomeModel
import HomeStore
import Logging

/// What the pairing commands share: the store of the configuration's data directory, the
/// controller identity kept in it (made on first use), and the paired devices as the HAP
/// driver takes them.
struct PairingStore {
    let store: HomeStore
    let file: ConfigFile

    /// Opens the store named by the configuration (or `--data-dir`); exits 78 if it cannot.
    static func open(config: String, dataDirectory: String?) throws -> PairingStore {
        let overrides = ConfigFile.Overrides(dataDirectory: dataDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        let file = try loadConfigFileOrExit(config, overrides: overrides)
        do {
            return PairingStore(store: try HomeStore(directory: file.dataDirectory), file: file)
        } catch {
            printError("\(error)")
            throw HomeGateExit.configuration
        }
    }

    /// The gateway's controller identity; made and stored the first time (in the database, mode 0600).
    func controllerIdentity() throws -> ControllerIdentity {
        if let stored = try store.controllerIdentity() {
            return try ControllerIdentity(pairingID: stored.pairingID, privateKey: stored.privateKey)
        }
        let fresh = ControllerIdentity.generate()
        let kept = try store.saveControllerIdentity(pairingID: fresh.pairingID, privateKey: fresh.privateKeyForStorage)
        return try ControllerIdentity(pairingID: kept.pairingID, privateKey: kept.privateKey)
    }

    /// The controller identity if one was made; nil before the first pairing.
    func existingControllerIdentity() throws -> ControllerIdentity? {
        try store.controllerIdentity().map { stored in try ControllerIdentity(pairingID: stored.pairingID, privateKey: stored.privateKey) }
    }

    /// The homes as the gateway would start with them (the store's layout, else the configuration's).
    func homes() throws -> [Home] {
        try store.hasLayout() ? store.loadHomes() : file.homes
    }

    /// The stored pairing that `reference` names: a device id (any case, colons optional) or
    /// the id of one of its accessories (`hap-aabbccddeeff-2`).
    func pairing(named reference: String) throws -> StoredPairing? {
        let wanted = reference.lowercased().filter { $0.isLetter || $0.isNumber }
        return try store.pairings().first { pairing in
            let compact = pairing.deviceID.lowercased().filter { $0.isLetter || $0.isNumber }
            return compact == wanted || reference.lowercased().hasPrefix("hap-\(compact)-")
        }
    }

    /// The stored pairings as the HAP driver takes them.
    /// A paired device was found at a new address: it is kept in the store, so the next start
    /// goes there first.
    static func storeAddress(of device: HAPDriver.Device, in store: HomeStore, logger: Logger) {
        do {
            guard var stored = try store.pairings().first(where: { $0.deviceID == device.deviceID }) else { return }
            stored.host = device.host
            stored.port = device.port
            try store.savePairing(stored)
        } catch {
            logger.error("the new address of \(device.name) could not be stored: \(error)")
        }
    }

    /// `host:port`, an IPv6 address in brackets (`[fd12::5]:5683`).
    static func address(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    static func devices(_ pairings: [StoredPairing]) -> [HAPDriver.Device] {
        pairings.map { pairing in
            HAPDriver.Device(deviceID: pairing.deviceID, publicKey: pairing.publicKey, host: pairing.host, port: pairing.port,
                             name: pairing.name, placement: Placement(home: pairing.home, room: pairing.room),
                             transport: HAPTransportKind(rawValue: pairing.transport) ?? .ip)
        }
    }
}

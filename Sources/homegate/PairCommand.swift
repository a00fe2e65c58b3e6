import ArgumentParser
import Foundation
import HAP
import HAPDriver
import HomeModel
import HomeStore
import Logging
import Matter

/// `homegate pair`: pairs the gateway's HAP controller with an accessory or a bridge, or
/// commissions a Matter device through the Matter Server (`--matter CODE`).
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a HomeKit accessory or bridge (--host, --port, --code), or commission a Matter device (--matter CODE).",
        discussion: """
            A HAP pairing is kept in the data directory. A running gateway brings the accessories in on SIGHUP \
            (systemctl reload homegate); a gateway started later brings them in at start. A Matter device is \
            commissioned onto the fabric of the Matter Server the configuration's matter: section names, which keeps it; \
            a running gateway connected to that server brings it in at once, into the default room.
            """
    )

    @Option(name: .long, help: "A Matter setup code: the 11- or 21-digit manual code (also Apple Home's \"Turn On Pairing Mode\" code) or the MT: QR payload.")
    var matter: String?

    @Option(name: .long, help: "The YAML configuration file (for data_dir and the homes).")
    var config: String

    @Option(name: .customLong("data-dir"), help: "Where the gateway keeps its state; overrides data_dir.")
    var dataDirectory: String?

    @Option(name: .long, help: "The accessory's address (IP or host name).")
    var host: String = ""

    @Option(name: .long, help: "The accessory's HAP port.")
    var port: Int = 0

    @Option(name: .long, help: "ip (HAP over IP, the default) or coap (HAP over CoAP: a Thread accessory, as `homegate discover` lists it).")
    var transport: String = "ip"

    @Option(name: .long, help: "The setup code, 123-45-678.")
    var code: String = ""

    @Option(name: .long, help: "The home its accessories join (default: the primary home).")
    var home: String?

    @Option(name: .long, help: "The room the accessory (or the bridge) goes into; made if missing. Accessories behind a bridge start in the default room.")
    var room: String?

    func validate() throws {
        if let matter {
            guard host.isEmpty, port == 0, code.isEmpty else { throw ValidationError("--matter takes no --host, --port or --code") }
            guard room == nil, home == nil else {
                throw ValidationError("--room and --home are for HAP pairings; a Matter device joins the default room (move it with $request/accessory/assign-room)")
            }
            do {
                _ = try SetupCode(matter)
            } catch {
                throw ValidationError("--matter: \(error)")
            }
            return
        }
        guard !host.isEmpty else { throw ValidationError("--host is required (or --matter CODE for a Matter device)") }
        guard !code.isEmpty else { throw ValidationError("--code is required") }
        guard (1...65535).contains(port) else { throw ValidationError("--port: expected 1 to 65535, got \(port)") }
        guard HAPTransportKind(rawValue: transport) != nil else { throw ValidationError("--transport: expected ip or coap, got \(transport)") }
        do {
            _ = try PairSetup.normalised(code)
        } catch {
            throw ValidationError("--code: \(error.message)")
        }
        if let room {
            do {
                _ = try HomeKitName(room)
            } catch {
                throw ValidationError("--room: \(error)")
            }
        }
    }

    func run() async throws {
        if let matter {
            try await MatterCommissioning.commission(matter, config: config, dataDirectory: dataDirectory)
            return
        }
        let pairings = try PairingStore.open(config: config, dataDirectory: dataDirectory)
        let homeName = try resolveHome(in: pairings)
        let controller = try pairings.controllerIdentity()
        do {
            let kind = HAPTransportKind(rawValue: transport) ?? .ip
            let (pairing, database) = try await GatewayPairing.pair(host: host, port: port, transport: kind, code: code, controller: controller,
                                                                    logger: Logger(label: "homegate", factory: { StreamLogHandler.standardError(label: $0) })) { pairing, database in
                let name = Self.name(of: database) ?? "Accessory \(pairing.pairingID)"
                try pairings.store.savePairing(StoredPairing(deviceID: pairing.pairingID, publicKey: pairing.publicKey, host: host, port: port,
                                                             name: name, home: homeName, room: room, transport: kind.rawValue))
            }
            report(name: Self.name(of: database) ?? "Accessory \(pairing.pairingID)", pairing: pairing, database: database)
        } catch let error as HAPError {
            printError(Self.explain(error, host: host, port: port))
            throw error.kind == .connection || error.kind == .timeout ? HomeGateExit.refused : ExitCode.failure
        } catch let error as StoreError {
            printError("the pairing could not be stored: \(error)")
            throw ExitCode.failure
        }
    }

    /// The home named by `--home` (checked against the homes), or nil for the primary home.
    private func resolveHome(in pairings: PairingStore) throws -> String? {
        guard let home else { return nil }
        let homes = try pairings.homes()
        guard let match = homes.first(where: { HomeKitName.key($0.name) == HomeKitName.key(home) || $0.id.rawValue == home }) else {
            printError("--home: no home \"\(home)\"; the homes are: \(homes.map(\.name).joined(separator: ", "))")
            throw HomeGateExit.usage
        }
        return match.name
    }

    private func report(name: String, pairing: AccessoryPairing, database: [AccessoryDescription]) {
        print("paired with \(name) (\(pairing.pairingID)) at \(PairingStore.address(host: host, port: port))")
        for accessory in database {
            let id = HAPDriver.accessoryID(deviceID: pairing.pairingID, aid: accessory.aid)
            print("  \(id)  \(Self.name(of: [accessory]) ?? "accessory \(accessory.aid)")")
        }
        print("a running gateway brings them in on SIGHUP (systemctl reload homegate); otherwise at its next start")
    }

    /// The Name of aid 1 (the bridge or the accessory itself).
    static func name(of database: [AccessoryDescription]) -> String? {
        let information = AccessoryDescription.fullUUID("3E")
        let name = AccessoryDescription.fullUUID("23")
        return (database.first { $0.aid == 1 } ?? database.first)?.characteristic(name, in: information)?.value?.string
    }

    static func explain(_ error: HAPError, host: String, port: Int) -> String {
        let address = PairingStore.address(host: host, port: port)
        switch error.pairingError {
        case .authentication?: return "pairing with \(address) failed: the accessory refused the setup code (check it and try again)"
        case .unavailable?: return "pairing with \(address) failed: the accessory is already paired with a controller (reset it, or unpair it there first)"
        case .maxTries?: return "pairing with \(address) failed: too many wrong setup codes; the accessory needs a reset"
        case .backoff?, .busy?: return "pairing with \(address) failed: the accessory is busy pairing; try again in a while"
        default: return "pairing with \(address) failed: \(error.message)"
        }
    }
}

import ArgumentParser
import HAP
import HomeStore

/// `homegate unpair ID`: removes a pairing, on the device and in the gateway.
struct UnpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair",
        abstract: "Remove a pairing: on the accessory (it forgets the gateway), then here.",
        discussion: "ID is the device id (AA:BB:CC:DD:EE:FF) or the id of one of its accessories (hap-aabbccddeeff-1). A running gateway drops its accessories on SIGHUP."
    )

    @Option(name: .long, help: "The YAML configuration file (for data_dir).")
    var config: String

    @Option(name: .customLong("data-dir"), help: "Where the gateway keeps its state; overrides data_dir.")
    var dataDirectory: String?

    @Flag(name: .long, help: "Forget the pairing here even if the accessory cannot be reached to remove it there.")
    var force = false

    @Argument(help: "The device id, or an accessory id.")
    var id: String

    func run() async throws {
        let pairings = try PairingStore.open(config: config, dataDirectory: dataDirectory)
        guard let pairing = try pairings.pairing(named: id) else {
            printError("no pairing \"\(id)\" (homegate pairings lists them)")
            throw HomeGateExit.usage
        }
        guard let controller = try pairings.existingControllerIdentity() else {
            printError("the store has pairings but no controller identity; it is damaged")
            throw ExitCode.failure
        }
        do {
            try await removeOnDevice(pairing, controller: controller)
        } catch {
            guard force else {
                printError("could not remove the pairing on \(pairing.name) at \(pairing.host):\(pairing.port): \(error.message); --force forgets it here only")
                throw HomeGateExit.refused
            }
            printError("could not reach \(pairing.name) (\(error.message)); forgetting the pairing here only (--force)")
        }
        try pairings.store.removePairing(deviceID: pairing.deviceID)
        print("unpaired \(pairing.name) (\(pairing.deviceID)); a running gateway drops its accessories on SIGHUP")
    }

    private func removeOnDevice(_ pairing: StoredPairing, controller: ControllerIdentity) async throws(HAPError) {
        try await GatewayPairing.removeOwnPairing(AccessoryPairing(pairingID: pairing.deviceID, publicKey: pairing.publicKey), host: pairing.host,
                                                  port: pairing.port, transport: (HAPTransportKind(rawValue: pairing.transport) ?? .ip).transport,
                                                  controller: controller)
    }
}

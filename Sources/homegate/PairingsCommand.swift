import ArgumentParser
import Foundation
import Gateway
import HAPDriver
import HomeModel
import Logging

/// `homegate pairings`: lists the accessories and bridges the gateway is paired with; with
/// `--device`, the controllers that device is paired with, and `--remove` takes one off it.
struct PairingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pairings",
        abstract: "List the accessories and bridges the gateway is paired with, or the controllers a device is paired with.",
        discussion: """
            With --device ID (a device id, AA:BB:CC:DD:EE:FF, or one of its accessories' ids), asks the device for every \
            controller it is paired with (this gateway marked); --remove PAIRING-ID then removes that controller from it \
            (a controller that is gone, a second Home Assistant). This gateway's own pairing is never removed here: use homegate unpair.
            """
    )

    @Option(name: .long, help: "The YAML configuration file (for data_dir).")
    var config: String

    @Option(name: .customLong("data-dir"), help: "Where the gateway keeps its state; overrides data_dir.")
    var dataDirectory: String?

    @Option(name: .long, help: "A paired device (its device id, or an accessory id): list the controllers it is paired with.")
    var device: String?

    @Option(name: .long, help: "With --device: remove this controller (its pairing id) from the device.")
    var remove: String?

    func run() async throws {
        let pairings = try PairingStore.open(config: config, dataDirectory: dataDirectory)
        if let device {
            try await deviceControllers(device, pairings: pairings)
            return
        }
        guard remove == nil else {
            printError("--remove needs --device: the device to remove the controller from")
            throw HomeGateExit.usage
        }
        let stored = try pairings.store.pairings()
        guard !stored.isEmpty else {
            print("no pairings (pair with: homegate pair --config \(config) --host H --port P --code 123-45-678)")
            return
        }
        if let controller = try pairings.existingControllerIdentity() { print("controller \(controller.pairingID)") }
        let accessories = (try? pairings.homes())?.flatMap(\.accessories) ?? []
        let formatter = ISO8601DateFormatter()
        for pairing in stored {
            let prefix = HAPDriver.accessoryID(deviceID: pairing.deviceID, aid: 1).rawValue.dropLast()
            let own = accessories.filter { $0.id.rawValue.hasPrefix(prefix) }.sorted { $0.id < $1.id }
            let address = PairingStore.address(host: pairing.host, port: pairing.port)
            var line = "\(pairing.deviceID)  \(pairing.name)  \(address)  paired \(formatter.string(from: pairing.pairedAt))"
            if pairing.transport != "ip" { line += "  over \(pairing.transport == "coap" ? "CoAP (Thread)" : pairing.transport)" }
            if let home = pairing.home { line += "  home \(home)" }
            if let room = pairing.room { line += "  room \(room)" }
            print(line)
            for accessory in own { print("  \(accessory.id)  \(accessory.name)") }
        }
    }

    /// The controllers `reference`'s device is paired with, after `--remove`.
    private func deviceControllers(_ reference: String, pairings: PairingStore) async throws {
        guard let stored = try pairings.pairing(named: reference) else {
            printError("no pairing \"\(reference)\" (homegate pairings lists them)")
            throw HomeGateExit.usage
        }
        guard let controller = try pairings.existingControllerIdentity() else {
            printError("the store has pairings but no controller identity; it is damaged")
            throw ExitCode.failure
        }
        let devicePairings = DevicePairings(controller: controller, logger: Logger(label: "homegate"))
        do {
            if let remove {
                try await devicePairings.remove(remove, from: stored)
                print("removed controller \(remove) from \(stored.name)")
            }
            for entry in try await devicePairings.controllers(of: stored) {
                print("\(entry.pairingID)  \(entry.isAdmin ? "admin" : "user")\(entry.isThisGateway ? "  this gateway" : "")")
            }
        } catch let failure as PairingFailure {
            printError(failure.message)
            throw failure.code == "not-found" || failure.code == "not-allowed" ? HomeGateExit.usage : HomeGateExit.refused
        }
    }
}

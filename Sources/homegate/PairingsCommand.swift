import ArgumentParser
import Foundation
import HAPDriver
import HomeModel

/// `homegate pairings`: lists the accessories and bridges the gateway is paired with.
struct PairingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pairings",
        abstract: "List the accessories and bridges the gateway is paired with."
    )

    @Option(name: .long, help: "The YAML configuration file (for data_dir).")
    var config: String

    @Option(name: .customLong("data-dir"), help: "Where the gateway keeps its state; overrides data_dir.")
    var dataDirectory: String?

    func run() throws {
        let pairings = try PairingStore.open(config: config, dataDirectory: dataDirectory)
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
}

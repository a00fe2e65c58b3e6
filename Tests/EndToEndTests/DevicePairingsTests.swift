import Foundation
import Testing
import TestSupport

/// A paired device's other controllers, through the binary: `$request/accessory/pairings` lists
/// every controller the device knows and removes one a person names, never the gateway's own;
/// `homegate pairings --device` does the same from the shell. Over HAP over IP (HAP-python
/// serving the zoo's Eve Energy) and over CoAP (`coap_peer.py` serving the Nanoleaf bulb), each
/// peer told that a second controller paired with it.
@Suite(.serialized, .startsProcesses) struct DevicePairingsTests {
    /// The peer of either transport, as the test drives it.
    struct Device {
        let host: String
        let port: Int
        let pincode: String
        let deviceID: String
        let addPairing: @Sendable (String, Bool) async throws -> Void
        let waitForLine: @Sendable (@escaping @Sendable (String) -> Bool) async throws -> Void
        let stop: @Sendable () async -> Void
    }

    static func device(_ transport: String) async throws -> Device {
        if transport == "coap" {
            let peer = try await CoAPZooPeer.start(database: "nanoleaf_bulb")
            return Device(host: peer.host, port: peer.port, pincode: peer.pincode, deviceID: peer.deviceID,
                          addPairing: { try await peer.addPairing(controller: $0, admin: $1) },
                          waitForLine: { predicate in _ = try await peer.waitForLine(where: predicate) }, stop: { await peer.stop() })
        }
        let peer = try await ZooPeer.start(database: "eve_energy")
        return Device(host: peer.host, port: peer.port, pincode: peer.pincode, deviceID: peer.deviceID,
                      addPairing: { try await peer.addPairing(controller: $0, admin: $1) },
                      waitForLine: { predicate in _ = try await peer.waitForLine(where: predicate) }, stop: { await peer.stop() })
    }

    static func controllers(_ answer: [String: Any]) -> [[String: Any]] {
        (answer["data"] as? [String: Any])?["controllers"] as? [[String: Any]] ?? []
    }

    @Test("a device's controllers are listed over MQTT (this gateway marked); a second one is removed by its id; the gateway's own is refused; homegate pairings --device lists them too",
          arguments: ["ip", "coap"])
    func controllersOfADevice(_ transport: String) async throws {
        let device = try await Self.device(transport)
        defer { Task { await device.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "device-pairings-\(transport)")
        let config = transport == "coap" ? ThreadDeviceTests.config : HAPEndToEndTests.config
        let paired = try await HAPEndToEndTests.pair(host: device.host, port: device.port, code: device.pincode, folder: folder, config: config,
                                                     transport: transport)
        #expect(paired.contains("paired with"), "\(paired)")
        let second = UUID().uuidString
        try await device.addPairing(second, false)
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        let accessory = "hap-\(device.deviceID.lowercased().replacingOccurrences(of: ":", with: ""))-1"

        let listed = try await fixture.request("accessory/pairings", #"{"accessory": "\#(accessory)"}"#)
        #expect(listed["ok"] as? Bool == true, "\(listed)")
        let controllers = Self.controllers(listed)
        #expect(controllers.count == 2, "\(listed)")
        let own = try #require(controllers.first { $0["thisGateway"] as? Bool == true }, "\(listed)")
        #expect(own["admin"] as? Bool == true)
        let other = try #require(controllers.first { ($0["id"] as? String)?.lowercased() == second.lowercased() }, "\(listed)")
        #expect(other["admin"] as? Bool == false && other["thisGateway"] as? Bool == false)

        let ownID = try #require(own["id"] as? String)
        let refused = try await fixture.request("accessory/pairings", #"{"accessory": "\#(accessory)", "remove": "\#(ownID)"}"#)
        #expect(refused["ok"] as? Bool == false && refused["error"] as? String == "not-allowed", "\(refused)")
        let unknown = try await fixture.request("accessory/pairings", #"{"accessory": "\#(accessory)", "remove": "\#(UUID().uuidString)"}"#)
        #expect(unknown["error"] as? String == "not-found", "\(unknown)")

        let removed = try await fixture.request("accessory/pairings", #"{"accessory": "\#(accessory)", "remove": "\#(second)"}"#)
        #expect(removed["ok"] as? Bool == true, "\(removed)")
        #expect(Self.controllers(removed).count == 1 && Self.controllers(removed).first?["thisGateway"] as? Bool == true, "\(removed)")
        try await device.waitForLine { $0.contains(#""event": "unpaired""#) && $0.lowercased().contains(second.lowercased()) }

        let shell = try HomeGateProcess(["pairings", "--config", fixture.configFile, "--data-dir", folder.appendingPathComponent("data").path,
                                         "--device", device.deviceID])
        #expect(try await shell.waitForExit() == 0, "\(shell.output)")
        #expect(shell.output.contains("\(ownID)  admin  this gateway"), "\(shell.output)")
        let shellOwn = try HomeGateProcess(["pairings", "--config", fixture.configFile, "--data-dir", folder.appendingPathComponent("data").path,
                                            "--device", accessory, "--remove", ownID])
        #expect(try await shellOwn.waitForExit() == 64, "\(shellOwn.output)")
        #expect(shellOwn.output.contains("this gateway's own pairing"), "\(shellOwn.output)")
        try await fixture.stop()
    }
}

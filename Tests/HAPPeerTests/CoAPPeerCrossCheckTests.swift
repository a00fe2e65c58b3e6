import Foundation
import Testing
import TestSupport

/// The HAP-over-CoAP test peer (`Tests/Fixtures/hap/coap_peer.py`) against the reference client,
/// aiohomekit 4.0.1's own CoAP controller (`coap_crosscheck.py`), and the Swift harness that
/// starts it (``CoAPZooPeer``).
@Suite(.serialized, .startsProcesses) struct CoAPPeerCrossCheckTests {
    @Test func aiohomekitsCoAPControllerAgreesWithThePeerOnEveryThreadDeviceOfTheZoo() async throws {
        let result = try await CoAPZooPeer.runCrossCheck()
        #expect(result.status == 0, "coap_crosscheck.py failed:\n\(result.output.suffix(6000))")
        for fixture in ["airversa_ap2", "nanoleaf_bulb", "nanoleaf_strip_nl55", "eve_energy"] {
            #expect(result.output.contains("ok   \(fixture): remove pairing"), "\(fixture) was not checked to the end:\n\(result.output.suffix(3000))")
        }
        #expect(result.output.contains("came as Block2 blocks of 1024 bytes (szx 6)"), "no database was checked for Block2")
        #expect(result.output.contains("4 passed, 0 failed"))
    }

    @Test func theHarnessStartsThePeerOnAFreePortAndItsControlsAnswer() async throws {
        let peer = try await CoAPZooPeer.start(database: "nanoleaf_bulb", mac: "0E:0A:0B:0C:0D:01")
        #expect(peer.host == "::1")
        #expect(peer.port > 0)
        #expect(peer.deviceID == "0E:0A:0B:0C:0D:01")
        try await peer.set(aid: 1, iid: 51, json: "true")
        try await peer.refuseEvents(true)
        try await peer.drop()
        try await peer.misbehave("slow", seconds: 0.2)
        try await peer.misbehave(nil)
        await #expect(throws: FixtureError.self) { try await peer.misbehave("sideways") }
        await #expect(throws: FixtureError.self) { try await peer.set(aid: 1, iid: 9999, json: "1") }
        let stateFile = peer.stateFile
        await peer.stop()
        try await peer.waitForLine { $0.hasPrefix("{\"event\": \"stopped\"") }

        let again = try await CoAPZooPeer.start(database: "nanoleaf_bulb", stateFile: stateFile)
        #expect(again.deviceID == "0E:0A:0B:0C:0D:01", "a restarted peer keeps its identity from the state file")
        await again.stop()
    }
}

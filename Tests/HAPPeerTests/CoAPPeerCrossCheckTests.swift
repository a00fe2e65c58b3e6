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
        // The zoo's Thread devices, and four IP captures with what a CoAP database must make of
        // them: no Pairing service (netamo_doorbell, vocolinc_vp3, simpleconnect_fan), null values,
        // an `int` holding 4294967295 (simpleconnect_fan), a characteristic without a format
        // (schlage_sense).
        for fixture in ["airversa_ap2", "nanoleaf_bulb", "nanoleaf_strip_nl55", "eve_energy",
                        "netamo_doorbell", "vocolinc_vp3", "simpleconnect_fan", "schlage_sense"] {
            #expect(result.output.contains("ok   \(fixture): remove pairing"), "\(fixture) was not checked to the end:\n\(result.output.suffix(3000))")
        }
        #expect(result.output.contains("came as Block2 blocks of 1024 bytes (szx 6)"), "no database was checked for Block2")
        #expect(result.output.contains("ok   netamo_doorbell: has no Pairing service (55): expected at iid 58"))
        #expect(result.output.contains("outside their format, read as two's complement (48: 4294967295 -> -1"))
        #expect(result.output.contains("1 captured without a format, declared (34 as string)"))
        for step in ["verify", "database", "values"] {
            #expect(result.output.contains("ok   eve_energy: break \(step): "), "the break check of \(step) did not run:\n\(result.output.suffix(3000))")
        }
        #expect(result.output.contains("8 passed, 0 failed"))
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

import Foundation
import MQTT
import Testing
import TestSupport

/// The `availability:` section through the real binary, HAP-python peers and Mosquitto: how long
/// a silent device stays reachable is set per transport and per accessory.
@Suite(.startsProcesses) struct AvailabilityTests {
    static func reachability(_ fixture: GatewayFixture, _ topic: String, _ payload: String, after seen: Int) async throws {
        _ = try await fixture.watcher.inbox.wait(for: "\(topic) \(payload)") { messages in
            messages.dropFirst(seen).first { $0.topic.string == topic && $0.payloadString == payload }
        }
    }

    @Test("availability: a device silent past its own accessory's setting goes unreachable (twice, and back each time), while a device under the transport's longer setting stays reachable all along")
    func accessoryOverTransport() async throws {
        let quick = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await quick.stop() } }
        let patient = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await patient.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "availability")
        let quickID = "hap-\(quick.deviceID.lowercased().filter { $0.isLetter || $0.isNumber })-1"
        let config = HAPEndToEndTests.config + """

            availability:
              ip: 3600
              accessories:
                \(quickID): 2
            """
        _ = try await HAPEndToEndTests.pair(host: quick.host, port: quick.port, code: quick.pincode, folder: folder, room: "Office", config: config)
        _ = try await HAPEndToEndTests.pair(host: patient.host, port: patient.port, code: patient.pincode, folder: folder, room: nil, config: config)
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        // Each peer is a bridge (its bridged accessories go to the default room, HomeKit's way).
        let quickLamp = "hgtest/test-home/office/homegate-test-bridge/$reachable"
        let patientLamp = "hgtest/test-home/default-room/homegate-test-bridge/$reachable"
        try await Self.reachability(fixture, quickLamp, "true", after: 0)
        try await Self.reachability(fixture, patientLamp, "true", after: 0)

        // Both fall silent. The quick one goes unreachable after its 2 s, twice (it answers
        // in between): more than the 3.5 s after which the patient one would have gone
        // unreachable without the transport's setting of an hour.
        patient.pause()
        defer { patient.resume() }
        for _ in 1...2 {
            let seen = fixture.watcher.inbox.all.count
            quick.pause()
            try await Self.reachability(fixture, quickLamp, "false", after: seen)
            quick.resume()
            try await Self.reachability(fixture, quickLamp, "true", after: seen)
        }
        let patientChanges = fixture.watcher.inbox.all.filter { $0.topic.string == patientLamp }.map(\.payloadString)
        #expect(patientChanges == ["true"], "the patient device under ip: 3600 stayed reachable: \(patientChanges)")
        patient.resume()
        try await fixture.stop()
    }
}

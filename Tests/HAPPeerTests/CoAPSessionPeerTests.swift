import Foundation
import HAP
import Testing
import TestSupport

/// The HAP-over-CoAP client (``CoAPSession``) against `coap_peer.py` serving the Nanoleaf bulb's
/// database (a real Thread device's): what the gateway's end-to-end tests do not reach directly:
/// timed writes, a value the format cannot carry, an unknown characteristic, answers that come
/// late (an empty ACK, then a separate response), non-confirmable events, a wrong setup code.
@Suite(.serialized, .startsProcesses) struct CoAPSessionPeerTests {
    /// The bulb's On (bool) and Hue (float) characteristics.
    static let on = CharacteristicAddress(aid: 1, iid: 51)
    static let hue = CharacteristicAddress(aid: 1, iid: 53)

    static func pairedSession(_ peer: CoAPZooPeer) async throws -> CoAPSession {
        let controller = ControllerIdentity.generate()
        let pairing = try await CoAPSession.pairSetup(host: peer.host, port: peer.port, code: peer.pincode, controller: controller)
        #expect(pairing.pairingID == peer.deviceID)
        let session = try await CoAPSession.open(host: peer.host, port: peer.port, controller: controller, accessory: pairing)
        _ = try await session.accessoryDatabase()
        return session
    }

    @Test("a timed write (0x04 with its TTL, then 0x05) is carried out; a value the format cannot carry and an unknown iid are refused without asking")
    func timedWritesAndRefusals() async throws {
        let peer = try await CoAPZooPeer.start(database: "nanoleaf_bulb")
        defer { Task { await peer.stop() } }
        let session = try await Self.pairedSession(peer)
        defer { session.close() }
        let timed = try await session.write([CharacteristicWrite(Self.hue, .double(120.5))], timed: .seconds(5))
        #expect(timed[Self.hue]?.status == .success)
        _ = try await peer.waitForLine { $0.contains(#""event": "write", "aid": 1, "iid": 53, "value": 120.5"#) }
        #expect(try await session.read([Self.hue])[Self.hue]?.value == .double(120.5))

        let unknown = CharacteristicAddress(aid: 1, iid: 999)
        let refused = try await session.write([CharacteristicWrite(Self.on, .string("on")), CharacteristicWrite(unknown, .bool(true))])
        #expect(refused[Self.on]?.status == .invalidValue)
        #expect(refused[unknown]?.status == .noSuchResource)
        #expect(!peer.logText().contains(#""iid": 51, "value": "on""#))
        #expect(session.isOpen)
    }

    @Test("late answers (an empty ACK first, the answer as a separate response) are taken; events sent non-confirmable arrive")
    func slowAnswersAndNonConfirmableEvents() async throws {
        let peer = try await CoAPZooPeer.start(database: "nanoleaf_bulb")
        defer { Task { await peer.stop() } }
        let session = try await Self.pairedSession(peer)
        defer { session.close() }
        try await peer.misbehave("slow", seconds: 0.5)
        let read = try await session.read([Self.on], timeout: HangGuard.standard)
        #expect(read[Self.on]?.status == .success)
        try await peer.misbehave(nil)

        let subscribed = try await session.subscribe([Self.on], enabled: true)
        #expect(subscribed[Self.on]?.status == .success)
        try await peer.sendEventsNonConfirmable(true)
        var events = session.events.makeAsyncIterator()
        try await peer.set(aid: 1, iid: 51, json: "false")
        let first = await events.next()
        #expect(first == [CharacteristicValue(address: Self.on, value: .bool(false))])
    }

    @Test("a wrong setup code is refused with the accessory's authentication error")
    func wrongSetupCode() async throws {
        let peer = try await CoAPZooPeer.start(database: "nanoleaf_bulb")
        defer { Task { await peer.stop() } }
        let error = await #expect(throws: HAPError.self) {
            try await CoAPSession.pairSetup(host: peer.host, port: peer.port, code: "111-22-333", controller: .generate())
        }
        #expect(error?.pairingError == .authentication)
    }
}

import Foundation
import HAP
import Testing
import TestSupport

/// The HAP client against HAP-python 5.0.0 (the accessory peer): pairing, the accessory
/// database, reads, writes (the peer prints what it received), events, timed writes, pairings.
@Suite(.serialized, .startsProcesses) struct ClientPeerTests {
    @Test func pairsReadsAndWritesTheLightbulb() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        #expect(pairing.pairingID == peer.deviceID)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let database = try await client.accessories()
        #expect(database.map(\.aid) == [1, 2, 3, 4])
        let on = try address(database, aid: 2, type: PeerType.on)
        let outcomes = try await client.write([CharacteristicWrite(on, .bool(true))])
        #expect(outcomes[on]?.status == .success)
        let received = try await peer.waitForWrite { $0.aid == 2 && $0.characteristic == "On" }
        #expect(received.valueJSON == "true")
        let read = try await client.read([on])
        #expect(read[on]?.value == .bool(true))
    }

    @Test func aWrongSetupCodeIsRefusedWithAClearMessage() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let client = try await Client.connect(host: peer.host, port: peer.port)
        defer { client.close() }
        let error = await #expect(throws: HAPError.self) {
            try await client.pairSetup(code: "111-22-333", controller: .generate())
        }
        #expect(error?.pairingError == .authentication)
        #expect(error?.message.contains("setup code is wrong") == true)
    }

    @Test func eventsArriveForSubscribedCharacteristics() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0.3)
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let temperature = try address(try await client.accessories(), aid: 3, type: PeerType.currentTemperature)
        let subscribed = try await client.subscribe([temperature])
        #expect(subscribed[temperature]?.status == .success)
        let event = try await first(in: client.events) { values in values.contains { $0.address == temperature } }
        #expect(event.first { $0.address == temperature }?.value.double != nil)
    }

    @Test func timedWritesPrepareFirstAndCarryThePid() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let database = try await client.accessories()
        let target = try address(database, aid: 4, type: PeerType.lockTargetState)
        let perms = database.first { $0.aid == 4 }?.services.flatMap(\.characteristics).first { $0.iid == target.iid }?.perms ?? []
        #expect(perms.contains("tw"))
        let outcomes = try await client.write([CharacteristicWrite(target, .int(1))], timed: .seconds(5))
        #expect(outcomes[target]?.status == .success)
        let received = try await peer.waitForWrite { $0.aid == 4 && $0.characteristic == "LockTargetState" }
        #expect(received.valueJSON == "1")
        #expect(received.pid != nil)
    }

    @Test func writeResponsesCarryTheValue() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let brightness = try address(try await client.accessories(), aid: 2, type: PeerType.brightness)
        let outcomes = try await client.write([CharacteristicWrite(brightness, .int(42), wantsResponse: true)])
        #expect(outcomes[brightness]?.status == .success)
        _ = try await peer.waitForWrite { $0.aid == 2 && $0.characteristic == "Brightness" && $0.valueJSON == "42" }
    }

    @Test func pairingsAreListedAddedAndRemoved() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let initial = try await client.pairings()
        #expect(initial.map(\.pairingID) == [controller.pairingID])
        #expect(initial.first?.isAdmin == true)
        #expect(initial.first?.publicKey == controller.publicKey)
        let guest = ControllerIdentity.generate()
        try await client.addPairing(PairingEntry(pairingID: guest.pairingID, publicKey: guest.publicKey, isAdmin: false))
        let withGuest = try await client.pairings()
        #expect(Set(withGuest.map(\.pairingID)) == [controller.pairingID, guest.pairingID])
        #expect(withGuest.first { $0.pairingID == guest.pairingID }?.isAdmin == false)
        try await client.removePairing(guest.pairingID)
        #expect(try await client.pairings().map(\.pairingID) == [controller.pairingID])
    }

    @Test func unpairingRemovesOurPairingSoVerifyFails() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        let removal: HAPError?
        do {
            try await client.removePairing(controller.pairingID)
            removal = nil
        } catch {
            removal = error
        }
        // The accessory may close the session as soon as it forgot us.
        #expect(removal == nil || removal?.kind == .connection)
        client.close()
        await #expect(throws: HAPError.self) {
            let again = try await session(with: peer, controller, pairing)
            again.close()
        }
    }

    @Test func identifyWritesTheIdentifyCharacteristic() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let identify = try address(try await client.accessories(), aid: 2, type: PeerType.identify)
        _ = try await client.write([CharacteristicWrite(identify, .bool(true))])
        _ = try await peer.waitForWrite { $0.aid == 2 && $0.characteristic == "Identify" }
    }

    @Test func aClosedPeerEndsTheSession() async throws {
        let peer = try await HAPPeer.start()
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        await peer.kill()
        let reason = await client.closed()
        #expect(reason.kind == .connection)
        #expect(!client.isOpen)
    }
}

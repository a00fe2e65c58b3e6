import Accessories
import Foundation
import HAP
import HAPDriver
import HomeModel
import Logging
import Testing
import TestSupport
import Wire

/// Camera snapshots (`POST /resource`) against HAP-python's Camera on the peer's bridge (aid 5):
/// the client's request and the driver's, the JPEG exactly as served, and the refusals.
@Suite(.serialized, .startsProcesses) struct SnapshotPeerTests {
    @Test func theClientGetsTheCamerasJPEGForTheAidAndSizeAskedFor() async throws {
        let peer = try await HAPPeer.start(camera: true)
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let image = try await client.snapshot(aid: 5, width: 640, height: 480)
        #expect(image == (try HAPPeer.snapshotJPEG()))
        #expect(try await peer.snapshotRequests(atLeast: 1) == [SnapshotRequest(aid: 5, width: 640, height: 480)])
    }

    @Test func anAccessoryThatIsNoCameraIsRefusedWithTheDevicesStatus() async throws {
        let peer = try await HAPPeer.start(camera: true)
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let client = try await session(with: peer, controller, pairing)
        defer { client.close() }
        let error = await #expect(throws: HAPError.self) { try await client.snapshot(aid: 2, width: 640, height: 480) }
        #expect(error?.kind == .status)
        #expect(error?.message.contains("POST /resource") == true)
        // The session survives the refusal.
        #expect(try await client.snapshot(aid: 5, width: 320, height: 240) == (try HAPPeer.snapshotJPEG()))
    }

    @Test func theDriverAsksTheCamerasAidAndRefusesOtherAccessoriesItself() async throws {
        let peer = try await HAPPeer.start(camera: true)
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        let device = HAPDriver.Device(deviceID: pairing.pairingID, publicKey: pairing.publicKey, host: peer.host, port: peer.port, name: "Test Bridge")
        let driver = HAPDriver(controller: controller, devices: [device], logger: Logger(label: "test"))
        let task = Task { await driver.run() }
        defer { task.cancel() }
        let accessories = try await driver.accessories()
        let camera = try #require(accessories.first { $0.name == "Porch Camera" })
        #expect(camera.isCamera)
        #expect(accessories.filter(\.isCamera).map(\.id) == [camera.id])
        let image = try await driver.snapshot(of: camera.id, width: 1280, height: 720)
        #expect(image == (try HAPPeer.snapshotJPEG()))
        let lamp = HAPDriver.accessoryID(deviceID: peer.deviceID, aid: 2)
        let error = await #expect(throws: StatusError.self) { try await driver.snapshot(of: lamp, width: 640, height: 480) }
        #expect(error?.status == .noSuchResource)
        #expect(try await peer.snapshotRequests(atLeast: 1) == [SnapshotRequest(aid: 5, width: 1280, height: 720)])
    }
}

import Foundation
import MQTT
import Testing
import TestSupport

/// Camera snapshots through the real `homegate`, a real Mosquitto and HAP-python's Camera on the
/// peer's bridge (aid 5, "Porch Camera"): `$request/accessory/snapshot` publishes the exact JPEG
/// the camera serves on `<accessory>/$snapshot`, a refusal publishes nothing, and Home
/// Assistant's discovery has a camera component on that topic.
@Suite(.serialized, .startsProcesses) struct CameraSnapshotTests {
    static let config = HAPEndToEndTests.config + """

        home_assistant:
          enabled: true
        """
    static let camera = "hgtest/test-home/default-room/porch-camera"
    static let snapshotTopic = "\(camera)/$snapshot"

    @Test func aSnapshotRequestPublishesTheCamerasJPEGAndAnAccessoryThatIsNoCameraIsRefused() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0, camera: true)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "camera-e2e")
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: Self.config)
        let fixture = try await GatewayFixture.start(config: Self.config, folder: folder)
        let discovery = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "discovery"))
        try await discovery.subscribe("homeassistant/#")
        _ = try await fixture.watcher.inbox.first(on: "\(Self.camera)/$reachable", payload: "true", timeout: HangGuard.standard)

        // Not a camera: a clear refusal, and nothing on any $snapshot topic.
        let refused = try await fixture.request("accessory/snapshot", #"{"accessory": "Desk Lamp", "transaction": 1}"#)
        #expect(refused["ok"] as? Bool == false)
        #expect(refused["error"] as? String == "not-allowed")
        #expect((refused["message"] as? String)?.contains("Desk Lamp is not a camera") == true)
        let invalid = try await fixture.request("accessory/snapshot", #"{"accessory": "Porch Camera", "width": 0}"#)
        #expect(invalid["error"] as? String == "invalid-request")
        // The watcher sees the gateway's messages in the order sent: once it has the last answer,
        // a snapshot published for either request would be in its inbox before it.
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "hgtest/$response/accessory/snapshot" && $0.payloadString.contains("invalid-request") }
        #expect(!fixture.watcher.inbox.all.contains { $0.topic.string.hasSuffix("/$snapshot") })
        #expect(peer.snapshotRequests().isEmpty)

        // The camera: the exact bytes the peer serves, not retained, then the answer.
        let listener = try await TestClient.connect(TestClient.configuration(fixture.broker.url, id: "viewer"))
        try await listener.subscribe(Self.snapshotTopic)
        let answer = try await fixture.request("accessory/snapshot", #"{"accessory": "Porch Camera", "width": 320, "height": 240}"#)
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        let data = try #require(answer["data"] as? [String: Any])
        #expect(data["topic"] as? String == Self.snapshotTopic)
        let jpeg = try HAPPeer.snapshotJPEG()
        #expect(data["bytes"] as? Int == jpeg.count)
        let image = try await listener.inbox.first(on: Self.snapshotTopic)
        #expect(image.payload == jpeg)
        #expect(image.retain == false)
        #expect(try await peer.snapshotRequests(atLeast: 1) == [SnapshotRequest(aid: 5, width: 320, height: 240)])
        #expect(try await fixture.retained()[Self.snapshotTopic] == nil)

        // Home Assistant: a camera component on the snapshot topic.
        let config = try await discovery.inbox.first(timeout: HangGuard.standard) { $0.payloadString.contains("porch-camera/$snapshot") }
        let components = try #require(try GatewayFixture.decode(config.payload)["components"] as? [String: Any])
        let component = try #require(components["snapshot"] as? [String: Any])
        #expect(component["platform"] as? String == "camera")
        #expect(component["topic"] as? String == Self.snapshotTopic)
        await listener.stop()
        await discovery.stop()
        try await fixture.stop()
    }

    @Test func withASnapshotIntervalEveryReachableCameraIsPublishedUnasked() async throws {
        let config = HAPEndToEndTests.config.replacingOccurrences(of: "log_level: info", with: "log_level: info\ngateway:\n  snapshot_interval: 0.2")
        let peer = try await HAPPeer.start(temperatureInterval: 0, camera: true)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "camera-e2e")
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: config)
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        let jpeg = try HAPPeer.snapshotJPEG()
        let images = try await fixture.watcher.inbox.collect(2, timeout: HangGuard.standard) { $0.topic.string.hasSuffix("/$snapshot") }
        #expect(images.allSatisfy { $0.topic.string == Self.snapshotTopic && $0.payload == jpeg && !$0.retain })
        #expect(try await peer.snapshotRequests(atLeast: 2).prefix(2) == [SnapshotRequest(aid: 5, width: 640, height: 480), SnapshotRequest(aid: 5, width: 640, height: 480)])
        try await fixture.stop()
    }

    @Test func thePageAsksForASnapshotAndGetsItAsADataURL() async throws {
        let port = try FreePort.next()
        let config = HAPEndToEndTests.config + "\nui:\n  port: \(port)\n"
        let peer = try await HAPPeer.start(temperatureInterval: 0, camera: true)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "camera-e2e")
        _ = try await HAPEndToEndTests.pair(host: peer.host, port: peer.port, code: peer.pincode, folder: folder, config: config)
        let fixture = try await GatewayFixture.start(config: config, folder: folder)
        try await fixture.gateway.waitForOutput(containing: "web page: connected to the broker")
        _ = try await fixture.watcher.inbox.first(on: "\(Self.camera)/$reachable", payload: "true", timeout: HangGuard.standard)
        let browser = try WebPageTests.browser(port)
        _ = try await browser.get("/api/session")
        let csrf = try await browser.csrf()
        let frames = WebPageFeedTests.Frames()
        let expected = "data:image/jpeg;base64," + Data(try HAPPeer.snapshotJPEG()).base64EncodedString()
        let code = try await WebPageFeedTests.feed(port: port, headers: ["Cookie": try WebPageFeedTests.sessionCookie(browser)], frames: frames) {
            let request = #"{"topic": "hgtest/$request/accessory/snapshot", "payload": "{\"accessory\": \"Porch Camera\"}"}"#
            #expect(try await browser.post("/api/publish", request, headers: ["X-CSRF-Token: \(csrf)"]).status == 202)
            try await frames.wait(for: "the snapshot", WebPageFeedTests.isMessage(Self.snapshotTopic))
        }
        #expect(code == 1000)
        let frame = try #require(frames.all.first { $0.topic == Self.snapshotTopic })
        #expect(frame.payload == expected)
        #expect(frame.retained == false)
        try await fixture.stop()
    }
}

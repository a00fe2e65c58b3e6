import Foundation
import Testing
import TestSupport

/// The HAP-python peer fixture itself: it starts, listens, reports and stops.
@Suite("HAP peer fixture", .startsProcesses)
struct HAPPeerFixtureTests {
    @Test("the peer listens on its port on 127.0.0.1 and stops on SIGTERM")
    func startsListensAndStops() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        #expect(peer.host == "127.0.0.1")
        #expect(peer.pincode == "031-45-154")
        #expect(peer.deviceID.wholeMatch(of: /[0-9A-F]{2}(:[0-9A-F]{2}){5}/) != nil, "\(peer.deviceID)")
        #expect(FreePort.accepts(peer.port), "\(peer.logText())")
        #expect(peer.writes().isEmpty)
        await peer.stop()
        #expect(!FreePort.accepts(peer.port))
        #expect(peer.logText().contains("{\"event\": \"stopped\"}"), "\(peer.logText())")
    }

    @Test("a restarted peer listens on the same port with the same device id")
    func restartKeepsPortAndDeviceID() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        let deviceID = peer.deviceID
        await peer.kill()
        #expect(!FreePort.accepts(peer.port))
        try await peer.restart()
        #expect(peer.deviceID == deviceID)
        #expect(FreePort.accepts(peer.port), "\(peer.logText())")
        await peer.stop()
    }

    @Test("write lines parse with the value's exact JSON text")
    func writeLinesParse() throws {
        let line = #"{"event": "write", "aid": 4, "iid": 10, "accessory": "Front Door", "characteristic": "LockTargetState", "value": 1, "pid": 42}"#
        let write = try #require(PeerWrite(line: line))
        #expect(write.aid == 4 && write.iid == 10)
        #expect(write.accessory == "Front Door" && write.characteristic == "LockTargetState")
        #expect(write.value == .int(1) && write.valueJSON == "1" && write.pid == 42)
        let float = try #require(PeerWrite(line: #"{"event": "write", "aid": 2, "iid": 10, "accessory": "Desk Lamp", "characteristic": "Brightness", "value": 55.0}"#))
        #expect(float.value == .double(55) && float.valueJSON == "55.0" && float.pid == nil)
        let text = try #require(PeerWrite(line: #"{"event": "write", "aid": 9, "iid": 1, "accessory": null, "characteristic": null, "value": "a \"b\", {c}"}"#))
        #expect(text.value == .string("a \"b\", {c}") && text.accessory == nil)
        #expect(PeerWrite(line: #"{"event": "ready", "port": 1, "pincode": "031-45-154", "id": "AA:BB:CC:DD:EE:FF"}"#) == nil)
    }
}

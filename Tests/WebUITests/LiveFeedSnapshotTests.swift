import Foundation
import MQTT
import Testing
@testable import WebUI

/// What the page gets of a camera's `$snapshot`: a data URL, not the raw bytes as text.
@Suite struct LiveFeedSnapshotTests {
    @Test func aSnapshotReachesThePageAsADataURLAndOtherPayloadsAsText() throws {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        let snapshot = Message(topic: try TopicName("hg/home/room/cam/$snapshot"), payload: jpeg, qos: .atLeastOnce)
        #expect(LiveFeed.pageText(of: snapshot) == "data:image/jpeg;base64,/9j/2Q==")
        let value = Message(topic: try TopicName("hg/home/room/lamp/lightbulb/on"), payload: Array("true".utf8), qos: .atLeastOnce)
        #expect(LiveFeed.pageText(of: value) == "true")
    }
}

import Testing
@testable import MQTT

@Suite("Redeliveries after a reconnect")
struct RedeliveryFilterTests {
    static func message(_ payload: String, topic: String = "home/lamp/set", expiry: UInt32? = nil) -> Message {
        // Test topics are valid.
        Message(topic: try! TopicName(topic), payload: payload, properties: Message.Properties(messageExpiryInterval: expiry)) // swiftlint:disable:this force_try
    }

    @Test("a message the broker sends again on a later connection of the same session is recognised once")
    func redeliveryOnLaterConnection() {
        var filter = RedeliveryFilter(window: 20)
        filter.connectionBegan(sessionPresent: false)
        let admitted1 = filter.admit(mid: 7, Self.message("on"))
        #expect(admitted1)
        filter.connectionBegan(sessionPresent: true)
        let admitted2 = filter.admit(mid: 7, Self.message("on"))
        #expect(!admitted2, "the re-send")
        let admitted3 = filter.admit(mid: 7, Self.message("on"))
        #expect(admitted3, "the same identifier once more is a new message")
    }

    @Test("the same identifier and content on the same connection is a new message (identifiers wrap)")
    func sameConnectionIsNew() {
        var filter = RedeliveryFilter(window: 20)
        filter.connectionBegan(sessionPresent: false)
        let admitted4 = filter.admit(mid: 3, Self.message("on"))
        #expect(admitted4)
        let admitted5 = filter.admit(mid: 3, Self.message("on"))
        #expect(admitted5)
    }

    @Test("a different topic, payload or correlation under a remembered identifier is new; the expiry the broker counts down is not part of it")
    func contentDecides() {
        var filter = RedeliveryFilter(window: 20)
        filter.connectionBegan(sessionPresent: false)
        let admitted6 = filter.admit(mid: 1, Self.message("on"))
        #expect(admitted6)
        let admitted7 = filter.admit(mid: 2, Self.message("on", expiry: 60))
        #expect(admitted7)
        let admitted8 = filter.admit(mid: 3, Self.message("on"))
        #expect(admitted8)
        filter.connectionBegan(sessionPresent: true)
        let admitted9 = filter.admit(mid: 1, Self.message("off"))
        #expect(admitted9, "another payload")
        let admitted10 = filter.admit(mid: 2, Self.message("on", expiry: 42))
        #expect(!admitted10, "re-sent with what is left of its expiry")
        let admitted11 = filter.admit(mid: 3, Self.message("on", topic: "home/fan/set"))
        #expect(admitted11, "another topic")
    }

    @Test("a connection without the old session forgets everything")
    func cleanSessionForgets() {
        var filter = RedeliveryFilter(window: 20)
        filter.connectionBegan(sessionPresent: false)
        let admitted12 = filter.admit(mid: 9, Self.message("on"))
        #expect(admitted12)
        filter.connectionBegan(sessionPresent: false)
        let admitted13 = filter.admit(mid: 9, Self.message("on"))
        #expect(admitted13)
        #expect(filter.count == 1)
    }

    @Test("a re-send not made on the first connection back is still recognised on the next one")
    func survivesShortConnections() {
        var filter = RedeliveryFilter(window: 20)
        filter.connectionBegan(sessionPresent: false)
        let admitted14 = filter.admit(mid: 5, Self.message("25"))
        #expect(admitted14)
        filter.connectionBegan(sessionPresent: true) // ended before the broker re-sent anything
        filter.connectionBegan(sessionPresent: true)
        let admitted15 = filter.admit(mid: 5, Self.message("25"))
        #expect(!admitted15)
    }

    @Test("only the last window's messages are remembered")
    func windowBounds() {
        var filter = RedeliveryFilter(window: 20)
        filter.connectionBegan(sessionPresent: false)
        let firstTime = (Int32(1)...30).map { filter.admit(mid: $0, Self.message("v\($0)")) }
        #expect(firstTime.allSatisfy { $0 })
        #expect(filter.count == 20)
        filter.connectionBegan(sessionPresent: true)
        let admitted16 = filter.admit(mid: 11, Self.message("v11"))
        #expect(!admitted16)
        let admitted17 = filter.admit(mid: 30, Self.message("v30"))
        #expect(!admitted17)
        let admitted18 = filter.admit(mid: 10, Self.message("v10"))
        #expect(admitted18, "fell out of the window: the broker cannot have it in flight")
    }
}

import Foundation
import Testing
@testable import Gateway
import HomeModel

/// ``LastSeen``: published at once the first time, then at most once per interval with the
/// latest time; a time kept from before never overrides one heard since.
@Suite("LastSeen") struct LastSeenMachineTests {
    let lamp = AccessoryID("lamp")
    let start = ContinuousClock.now
    let noon = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("the first time at once; later ones wait for the interval, carrying the latest time")
    func atMostOncePerInterval() {
        var seen = LastSeen(interval: .seconds(60))
        let result1 = seen.heard(lamp, at: noon, now: start)
        #expect(result1)
        #expect(seen.published(lamp) == noon)
        let result2 = seen.heard(lamp, at: noon + 10, now: start + .seconds(10))
        #expect(!result2)
        let result3 = seen.heard(lamp, at: noon + 20, now: start + .seconds(20))
        #expect(!result3)
        let result4 = seen.due(now: start + .seconds(59))
        #expect(result4.isEmpty, "within the interval")
        #expect(seen.published(lamp) == noon)
        let result5 = seen.due(now: start + .seconds(60))
        #expect(result5 == [lamp])
        #expect(seen.published(lamp) == noon + 20, "the latest time")
        let result6 = seen.due(now: start + .seconds(200))
        #expect(result6.isEmpty, "nothing heard since")
        #expect(seen.heard(lamp) == noon + 20)
    }

    @Test("a time kept from the broker is published with the rest, never overrides what was heard, and a heard one replaces it at the next due time")
    func keptFromBefore() {
        var seen = LastSeen(interval: .seconds(60))
        seen.remember(lamp, at: noon - 3600)
        #expect(seen.published(lamp) == noon - 3600)
        let result7 = seen.heard(lamp, at: noon, now: start)
        #expect(!result7, "known already: waits for its due time")
        let result8 = seen.due(now: start)
        #expect(result8 == [lamp], "never published by this run: due at once")
        #expect(seen.published(lamp) == noon)
        seen.remember(lamp, at: noon - 7200)
        #expect(seen.published(lamp) == noon, "a kept time never overrides")
        seen.forget(lamp)
        #expect(seen.published(lamp) == nil)
    }

    @Test("the payload is ISO 8601 in UTC to the second, and reads back")
    func payload() {
        let text = String(decoding: LastSeen.payload(noon), as: UTF8.self)
        #expect(text == "2027-01-15T08:00:00Z")
        #expect(LastSeen.date(fromPayload: Array(text.utf8)) == noon)
        #expect(LastSeen.date(fromPayload: Array("yesterday".utf8)) == nil)
    }
}

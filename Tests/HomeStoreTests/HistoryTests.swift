import Foundation
import HomeModel
import Testing
@testable import HomeStore

@Suite("Characteristic history")
struct HistoryTests {
    private let lamp = CharacteristicReference(accessoryID: "lamp", iid: 10)
    private let sensor = CharacteristicReference(accessoryID: "sensor", iid: 10)

    private func point(_ characteristic: CharacteristicReference, _ time: Int64, _ value: String) -> HistoryPoint {
        HistoryPoint(characteristic: characteristic, time: time, value: value)
    }

    private func times(_ range: HistoryRange) -> [Int64] { range.points.map(\.time) }

    @Test("points are kept per characteristic (accessory id and iid), read back oldest first with their values, and survive reopening")
    func recording() throws {
        try withTemporaryDirectory { directory in
            do {
                let store = try HomeStore(directory: directory)
                try store.recordHistory([point(lamp, 1_000, "true"), point(sensor, 1_500, "21.5"), point(lamp, 2_000, "false")], maxPoints: 100)
                try store.recordHistory([point(lamp, 3_000, "true")], maxPoints: 100)
            }
            let store = try HomeStore(directory: directory)
            let range = try store.history(of: lamp, from: 0, to: 10_000, limit: 100)
            #expect(range.points == [.init(time: 1_000, value: "true"), .init(time: 2_000, value: "false"), .init(time: 3_000, value: "true")])
            #expect(!range.truncated)
            #expect(range.previous == nil)
            #expect(try store.history(of: sensor, from: 0, to: 10_000, limit: 100).points == [.init(time: 1_500, value: "21.5")])
            #expect(try store.history(of: CharacteristicReference(accessoryID: "lamp", iid: 11), from: 0, to: 10_000, limit: 100).points.isEmpty)
            #expect(try store.historyPointCount() == 4)
        }
    }

    @Test("a range includes both ends; the point before it is the value it starts with; equal times keep their order")
    func ranges() throws {
        let store = try HomeStore.inMemory()
        try store.recordHistory((1...10).map { point(lamp, Int64($0) * 100, "\($0)") } + [point(lamp, 500, "5b")], maxPoints: 100)
        let range = try store.history(of: lamp, from: 300, to: 500, limit: 100)
        #expect(range.points.map(\.value) == ["3", "4", "5", "5b"])
        #expect(range.previous == .init(time: 200, value: "2"))
        #expect(try store.history(of: lamp, from: 1_001, to: 2_000, limit: 100).points.isEmpty)
        #expect(try store.history(of: lamp, from: 1_001, to: 2_000, limit: 100).previous == .init(time: 1_000, value: "10"))
    }

    @Test("more points than the limit: the newest of them, oldest first, marked truncated")
    func limit() throws {
        let store = try HomeStore.inMemory()
        try store.recordHistory((1...10).map { point(lamp, Int64($0), "\($0)") }, maxPoints: 100)
        let range = try store.history(of: lamp, from: 0, to: 100, limit: 3)
        #expect(times(range) == [8, 9, 10])
        #expect(range.truncated)
        #expect(try !store.history(of: lamp, from: 0, to: 100, limit: 10).truncated)
    }

    @Test("a characteristic keeps at most max points, its oldest going first, leaving others alone; a batch larger than the limit too")
    func cap() throws {
        let store = try HomeStore.inMemory()
        try store.recordHistory([point(sensor, 1, "1")], maxPoints: 5)
        for time in 1...8 { try store.recordHistory([point(lamp, Int64(time), "\(time)")], maxPoints: 5) }
        #expect(times(try store.history(of: lamp, from: 0, to: 100, limit: 100)) == [4, 5, 6, 7, 8])
        try store.recordHistory((20...40).map { point(lamp, Int64($0), "\($0)") }, maxPoints: 5)
        #expect(times(try store.history(of: lamp, from: 0, to: 100, limit: 100)) == [36, 37, 38, 39, 40])
        #expect(times(try store.history(of: sensor, from: 0, to: 100, limit: 100)) == [1])
        #expect(try store.historyPointCount() == 6)
    }

    @Test("pruning removes the points older than the cutoff and applies a lower limit; a characteristic left empty starts over")
    func pruning() throws {
        let store = try HomeStore.inMemory()
        let day: Int64 = 86_400_000
        let now: Int64 = 1_800_000_000_000
        try store.recordHistory([point(sensor, now - 9 * day, "18"), point(sensor, now - 8 * day, "19")], maxPoints: 100)
        try store.recordHistory((0..<6).map { point(lamp, now - 6 * day + Int64($0), "\($0)") } + [point(lamp, now, "x")], maxPoints: 100)
        let cutoff = now - 7 * day
        #expect(try store.pruneHistory(olderThan: cutoff, maxPoints: 100) == 2)
        #expect(try store.history(of: sensor, from: 0, to: now, limit: 100).points.isEmpty)
        #expect(try store.history(of: lamp, from: 0, to: now, limit: 100).points.count == 7)
        #expect(try store.pruneHistory(olderThan: cutoff, maxPoints: 3) == 4)
        #expect(try store.history(of: lamp, from: 0, to: now, limit: 100).points.map(\.value) == ["4", "5", "x"])
        #expect(try store.pruneHistory(olderThan: cutoff, maxPoints: 3) == 0)
        // The sensor's series was forgotten; its next point starts a new one, counted from zero.
        try store.recordHistory([point(sensor, now, "20")], maxPoints: 1)
        try store.recordHistory([point(sensor, now + 1, "21")], maxPoints: 1)
        #expect(try store.history(of: sensor, from: 0, to: now + 1, limit: 100).points == [.init(time: now + 1, value: "21")])
    }

    @Test("deleting the history (it was turned off) removes every point")
    func deleting() throws {
        let store = try HomeStore.inMemory()
        try store.recordHistory([point(lamp, 1, "true"), point(sensor, 2, "20")], maxPoints: 100)
        try store.deleteHistory()
        #expect(try store.historyPointCount() == 0)
        #expect(try store.history(of: lamp, from: 0, to: 10, limit: 10).points.isEmpty)
        try store.recordHistory([point(lamp, 3, "false")], maxPoints: 100)
        #expect(try store.history(of: lamp, from: 0, to: 10, limit: 10).points == [.init(time: 3, value: "false")])
    }
}

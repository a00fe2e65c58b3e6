import Foundation
import HomeModel
import Testing
@testable import Gateway

/// The scheduler's looks on their own, at chosen wall-clock times.
@Suite("trigger scheduler")
struct TriggerSchedulerTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func homes(_ triggers: [TimerTrigger]) -> [Home] {
        [Home(id: "home", name: "Home", isPrimary: true, triggers: triggers)]
    }

    static func scheduler() -> TriggerScheduler {
        TriggerScheduler(schedule: TriggerSchedule(calendar: TriggerSchedule.calendar(in: TimeZone(identifier: "UTC")!), grace: 60))
    }

    @Test("a due trigger fires once, its fire recorded in the homes; the look says when to look again")
    func firesOnce() throws {
        var scheduler = Self.scheduler()
        var homes = Self.homes([TimerTrigger(id: "t", name: "Hourly", fireDate: Self.start, recurrence: .init(unit: .hour, every: 1))])
        let early = scheduler.look(at: &homes, now: Self.start.addingTimeInterval(-10))
        #expect(early.fires.isEmpty && !early.changed && early.wait(from: Self.start.addingTimeInterval(-10)) == 10)
        let due = scheduler.look(at: &homes, now: Self.start)
        #expect(due.fires.map(\.trigger.name) == ["Hourly"] && due.changed)
        #expect(homes[0].triggers[0].lastFireDate == Self.start)
        #expect(due.wait(from: Self.start) == TriggerScheduler.longestSleep, "the next hour is beyond the longest sleep")
        let again = scheduler.look(at: &homes, now: Self.start.addingTimeInterval(1))
        #expect(again.fires.isEmpty && !again.changed)
    }

    @Test("at the first look an occurrence missed beyond the grace period is skipped; a trigger added later with a past date is armed afresh, not missed")
    func missedAndAfresh() throws {
        var scheduler = Self.scheduler()
        let missed = TimerTrigger(id: "m", name: "Missed", fireDate: Self.start.addingTimeInterval(-3600))
        var homes = Self.homes([missed])
        let first = scheduler.look(at: &homes, now: Self.start)
        #expect(first.skips.map(\.trigger.name) == ["Missed"] && first.fires.isEmpty && first.changed)
        #expect(first.skips.first?.skip.announcement(of: missed, in: homes[0]).kind == "trigger-missed")
        homes[0].triggers.append(TimerTrigger(id: "n", name: "New", fireDate: Self.start.addingTimeInterval(-3600), recurrence: .init(unit: .day, every: 1)))
        let later = scheduler.look(at: &homes, now: Self.start.addingTimeInterval(5))
        #expect(later.skips.isEmpty && later.fires.isEmpty && later.changed, "armed: its past occurrences were never missed")
        #expect(homes[0].triggers[1].lastFireDate == Self.start.addingTimeInterval(5))
    }
}

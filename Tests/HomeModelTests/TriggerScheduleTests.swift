import Foundation
import Testing
@testable import HomeModel

@Suite("Timer triggers: occurrences and the missed-fire policy")
struct TriggerScheduleTests {
    static let berlin = TriggerSchedule.calendar(in: TimeZone(identifier: "Europe/Berlin")!)
    static let utc = TriggerSchedule.calendar(in: TimeZone(identifier: "UTC")!)
    /// A schedule in UTC with the default grace (5 minutes) and on-time tolerance (10 seconds).
    static let schedule = TriggerSchedule(calendar: utc)

    /// `2026-03-27T06:00:00Z` and the like.
    static func date(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    static func trigger(_ fireDate: Date, _ unit: TimerTrigger.Recurrence.Unit? = nil, every: Int = 1, enabled: Bool = true,
                        lastFireDate: Date? = nil) -> TimerTrigger {
        TimerTrigger(id: "t", name: "T", fireDate: fireDate, recurrence: unit.map { .init(unit: $0, every: every) }, actionSetIDs: ["a"],
                     isEnabled: enabled, lastFireDate: lastFireDate)
    }

    /// The first `count` occurrences after `start` (each after the previous one).
    static func occurrences(_ trigger: TimerTrigger, after start: Date, count: Int, schedule: TriggerSchedule = schedule) -> [Date] {
        var dates: [Date] = []
        var date = start
        for _ in 0..<count {
            guard let next = schedule.nextOccurrence(of: trigger, after: date) else { break }
            dates.append(next)
            date = next
        }
        return dates
    }

    static let t0 = date("2026-05-04T07:00:00Z")

    // MARK: Occurrences

    @Test("the defaults: 5 minutes of grace, on time within 10 seconds, the gateway's time zone")
    func defaults() {
        let schedule = TriggerSchedule()
        #expect(schedule.grace == 300)
        #expect(schedule.onTimeTolerance == 10)
        #expect(schedule.calendar.timeZone == TimeZone.current)
        #expect(schedule.calendar.identifier == .gregorian)
    }

    @Test("every N minutes: the fire date, then fixed steps; strictly after the date asked")
    func minutes() {
        let trigger = Self.trigger(Self.t0, .minute, every: 15)
        #expect(Self.schedule.nextOccurrence(of: trigger, after: Self.t0.addingTimeInterval(-1)) == Self.t0)
        #expect(Self.schedule.nextOccurrence(of: trigger, after: Self.t0) == Self.t0.addingTimeInterval(900))
        #expect(Self.schedule.nextOccurrence(of: trigger, after: Self.t0.addingTimeInterval(900)) == Self.t0.addingTimeInterval(1800))
        #expect(Self.schedule.nextOccurrence(of: trigger, after: Self.t0.addingTimeInterval(901)) == Self.t0.addingTimeInterval(1800))
        #expect(Self.schedule.occurrence(4, of: trigger) == Self.t0.addingTimeInterval(3600))
        // A year later, still on the grid.
        let later = Self.t0.addingTimeInterval(365 * 86_400 + 7)
        #expect(Self.schedule.nextOccurrence(of: trigger, after: later) == Self.t0.addingTimeInterval(365 * 86_400 + 900))
        #expect(Self.occurrences(Self.trigger(Self.t0, .minute), after: Self.t0, count: 3)
            == [60, 120, 180].map { Self.t0.addingTimeInterval($0) })
    }

    @Test("every N hours: fixed steps of 3600 s, also across a daylight-saving change")
    func hours() {
        // 2026-03-29 in Berlin: 02:00 CET becomes 03:00 CEST.
        let start = Self.date("2026-03-28T23:00:00Z") // 00:00 CET
        let trigger = Self.trigger(start, .hour, every: 2)
        let dates = Self.occurrences(trigger, after: start, count: 3, schedule: TriggerSchedule(calendar: Self.berlin))
        #expect(dates == [7200, 14_400, 21_600].map { start.addingTimeInterval($0) })
        let hours = dates.map { Self.berlin.component(.hour, from: $0) }
        #expect(hours == [3, 5, 7], "02:00 CET does not exist: 2 h after midnight is 03:00 CEST")
    }

    @Test("a daily 07:00 trigger in Europe/Berlin stays at 07:00 local across the March and October changes")
    func dailyAcrossDaylightSaving() {
        let schedule = TriggerSchedule(calendar: Self.berlin)
        let march = Self.trigger(Self.date("2026-03-27T06:00:00Z"), .day) // 07:00 CET
        let dates = Self.occurrences(march, after: march.fireDate, count: 3, schedule: schedule)
        #expect(dates == ["2026-03-28T06:00:00Z", "2026-03-29T05:00:00Z", "2026-03-30T05:00:00Z"].map(Self.date))
        for date in [march.fireDate] + dates {
            #expect(Self.berlin.dateComponents([.hour, .minute], from: date) == DateComponents(hour: 7, minute: 0))
        }
        // Found from far away too (not only step by step).
        #expect(schedule.nextOccurrence(of: march, after: Self.date("2026-07-01T12:00:00Z")) == Self.date("2026-07-02T05:00:00Z"))
        let october = Self.trigger(Self.date("2026-10-24T05:00:00Z"), .day) // 07:00 CEST
        #expect(Self.occurrences(october, after: october.fireDate, count: 2, schedule: schedule)
            == ["2026-10-25T06:00:00Z", "2026-10-26T06:00:00Z"].map(Self.date))
    }

    @Test("every 3 days and every 2 weeks count calendar days")
    func daysAndWeeks() {
        let schedule = TriggerSchedule(calendar: Self.berlin)
        let threeDays = Self.trigger(Self.date("2026-03-26T06:00:00Z"), .day, every: 3)
        #expect(Self.occurrences(threeDays, after: threeDays.fireDate, count: 2, schedule: schedule)
            == ["2026-03-29T05:00:00Z", "2026-04-01T05:00:00Z"].map(Self.date))
        // Monday 2026-03-23 07:00 CET, every other Monday.
        let fortnightly = Self.trigger(Self.date("2026-03-23T06:00:00Z"), .week, every: 2)
        let dates = Self.occurrences(fortnightly, after: fortnightly.fireDate, count: 2, schedule: schedule)
        #expect(dates == ["2026-04-06T05:00:00Z", "2026-04-20T05:00:00Z"].map(Self.date))
        #expect(dates.map { Self.berlin.component(.weekday, from: $0) } == [2, 2])
        #expect(schedule.occurrence(2, of: Self.trigger(Self.t0, .week)) == Self.t0.addingTimeInterval(14 * 86_400))
    }

    @Test("a local time a daylight-saving change skips moves forward that day only")
    func nonexistentLocalTime() {
        let schedule = TriggerSchedule(calendar: Self.berlin)
        let trigger = Self.trigger(Self.date("2026-03-28T01:30:00Z"), .day) // 02:30 CET
        let dates = Self.occurrences(trigger, after: trigger.fireDate, count: 2, schedule: schedule)
        #expect(dates == ["2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"].map(Self.date))
        #expect(dates.map { Self.berlin.component(.hour, from: $0) } == [3, 2])
    }

    @Test("a one-time trigger has its fire date only; an `every` below 1 does not recur")
    func oneTime() {
        let once = Self.trigger(Self.t0)
        #expect(Self.schedule.nextOccurrence(of: once, after: Self.t0.addingTimeInterval(-0.5)) == Self.t0)
        #expect(Self.schedule.nextOccurrence(of: once, after: Self.t0) == nil)
        #expect(Self.schedule.occurrence(1, of: once) == nil)
        #expect(Self.schedule.occurrence(-1, of: once) == nil)
        let never = Self.trigger(Self.t0, .day, every: 0)
        #expect(Self.schedule.nextOccurrence(of: never, after: Self.t0) == nil)
    }

    // MARK: What a trigger waits for

    @Test("never fired: it waits for its fire date, even a past one; fired: for the occurrence after its last fire")
    func pending() {
        let daily = Self.trigger(Self.t0, .day)
        #expect(Self.schedule.pendingOccurrence(of: daily) == Self.t0)
        var fired = daily
        fired.lastFireDate = Self.t0.addingTimeInterval(2 * 86_400)
        #expect(Self.schedule.pendingOccurrence(of: fired) == Self.t0.addingTimeInterval(3 * 86_400))
        // A last fire date read back with a rounding is the same occurrence.
        fired.lastFireDate = Self.t0.addingTimeInterval(2 * 86_400 - 1e-7)
        #expect(Self.schedule.pendingOccurrence(of: fired) == Self.t0.addingTimeInterval(3 * 86_400))
        // A last fire date between occurrences (a trigger armed at that moment).
        fired.lastFireDate = Self.t0.addingTimeInterval(2 * 86_400 + 5)
        #expect(Self.schedule.pendingOccurrence(of: fired) == Self.t0.addingTimeInterval(3 * 86_400))
    }

    @Test("a one-time trigger that fired (or was skipped) is done; a disabled trigger waits for nothing")
    func doneAndDisabled() {
        let once = Self.trigger(Self.t0, lastFireDate: Self.t0)
        #expect(Self.schedule.pendingOccurrence(of: once) == nil)
        #expect(Self.schedule.decide(once, now: Self.t0.addingTimeInterval(1)) == .idle)
        #expect(Self.schedule.decide(once, now: Self.t0.addingTimeInterval(86_400)) == .idle)
        let disabled = Self.trigger(Self.t0, .minute, enabled: false)
        #expect(Self.schedule.pendingOccurrence(of: disabled) == nil)
        #expect(Self.schedule.decide(disabled, now: Self.t0) == .idle)
        #expect(Self.schedule.decide(disabled, now: Self.t0.addingTimeInterval(-60)) == .idle)
        // A one-time trigger whose date moved past its last fire waits again.
        let moved = Self.trigger(Self.t0.addingTimeInterval(3600), lastFireDate: Self.t0)
        #expect(Self.schedule.decide(moved, now: Self.t0) == .wait(until: Self.t0.addingTimeInterval(3600)))
    }

    // MARK: Deciding

    @Test("before its date a trigger waits; at its date it fires on time, and then waits for the next")
    func onTime() {
        let trigger = Self.trigger(Self.t0, .hour)
        #expect(Self.schedule.decide(trigger, now: Self.t0.addingTimeInterval(-30)) == .wait(until: Self.t0))
        let next = Self.t0.addingTimeInterval(3600)
        #expect(Self.schedule.decide(trigger, now: Self.t0)
            == .fire(.init(occurrence: Self.t0, lateness: 0, isLate: false, missed: 0, next: next)))
        #expect(Self.schedule.decide(trigger, now: Self.t0.addingTimeInterval(10))
            == .fire(.init(occurrence: Self.t0, lateness: 10, isLate: false, missed: 0, next: next)))
        var fired = trigger
        fired.lastFireDate = Self.t0
        #expect(Self.schedule.decide(fired, now: Self.t0.addingTimeInterval(1)) == .wait(until: next))
        #expect(Self.schedule.decide(fired, now: next.addingTimeInterval(0.25))
            == .fire(.init(occurrence: next, lateness: 0.25, isLate: false, missed: 0, next: next.addingTimeInterval(3600))))
    }

    @Test("missed while down, the latest within the grace period: one late fire, however many were missed")
    func lateFireOnce() {
        // Every minute; it last fired at t0; the gateway comes back at t0 + 10 min 30 s.
        let trigger = Self.trigger(Self.t0, .minute, lastFireDate: Self.t0)
        let now = Self.t0.addingTimeInterval(630)
        let decision = Self.schedule.decide(trigger, now: now)
        #expect(decision == .fire(.init(occurrence: Self.t0.addingTimeInterval(600), lateness: 30, isLate: true, missed: 9,
                                        next: Self.t0.addingTimeInterval(660))))
        // Recorded, nothing more is due until the next occurrence.
        var fired = trigger
        fired.lastFireDate = Self.t0.addingTimeInterval(600)
        #expect(Self.schedule.decide(fired, now: now) == .wait(until: Self.t0.addingTimeInterval(660)))
        // At the edge of the grace period it still fires.
        let daily = Self.trigger(Self.t0, .day)
        #expect(Self.schedule.decide(daily, now: Self.t0.addingTimeInterval(300))
            == .fire(.init(occurrence: Self.t0, lateness: 300, isLate: true, missed: 0, next: Self.t0.addingTimeInterval(86_400))))
    }

    @Test("missed while down, older than the grace period: skipped, and the trigger goes on at its next occurrence")
    func skipped() {
        // Daily at 07:00 UTC, last fired on day 0; back on day 2 at 09:00.
        let trigger = Self.trigger(Self.t0, .day, lastFireDate: Self.t0)
        let now = Self.t0.addingTimeInterval(2 * 86_400 + 7200)
        #expect(Self.schedule.decide(trigger, now: now)
            == .skip(.init(occurrence: Self.t0.addingTimeInterval(2 * 86_400), lateness: 7200, missed: 2,
                           next: Self.t0.addingTimeInterval(3 * 86_400))))
        // Never fired: its fire date counts as missed too.
        let fresh = Self.trigger(Self.t0, .day)
        #expect(Self.schedule.decide(fresh, now: now)
            == .skip(.init(occurrence: Self.t0.addingTimeInterval(2 * 86_400), lateness: 7200, missed: 3,
                           next: Self.t0.addingTimeInterval(3 * 86_400))))
        // Just beyond the grace period.
        #expect(Self.schedule.decide(fresh, now: Self.t0.addingTimeInterval(300.5))
            == .skip(.init(occurrence: Self.t0, lateness: 300.5, missed: 1, next: Self.t0.addingTimeInterval(86_400))))
    }

    @Test("a one-time trigger missed within the grace period fires late once; beyond it is skipped; then it is done")
    func oneTimeMissed() {
        let once = Self.trigger(Self.t0)
        #expect(Self.schedule.decide(once, now: Self.t0.addingTimeInterval(60))
            == .fire(.init(occurrence: Self.t0, lateness: 60, isLate: true, missed: 0, next: nil)))
        #expect(Self.schedule.decide(once, now: Self.t0.addingTimeInterval(3600))
            == .skip(.init(occurrence: Self.t0, lateness: 3600, missed: 1, next: nil)))
        var done = once
        done.lastFireDate = Self.t0
        #expect(Self.schedule.decide(done, now: Self.t0.addingTimeInterval(3600)) == .idle)
    }

    @Test("a grace period of 0 never fires late; within the on-time tolerance it is still on time")
    func noGrace() {
        let schedule = TriggerSchedule(calendar: Self.utc, grace: 0)
        let trigger = Self.trigger(Self.t0, .hour)
        let next = Self.t0.addingTimeInterval(3600)
        #expect(schedule.decide(trigger, now: Self.t0.addingTimeInterval(60))
            == .skip(.init(occurrence: Self.t0, lateness: 60, missed: 1, next: next)))
        #expect(schedule.decide(trigger, now: Self.t0.addingTimeInterval(5))
            == .fire(.init(occurrence: Self.t0, lateness: 5, isLate: false, missed: 0, next: next)))
        #expect(TriggerSchedule(grace: -5).grace == 0)
    }

    @Test("a longer grace period fires what the default one skips")
    func longerGrace() {
        let schedule = TriggerSchedule(calendar: Self.utc, grace: 7200)
        let trigger = Self.trigger(Self.t0, .day)
        #expect(schedule.decide(trigger, now: Self.t0.addingTimeInterval(3600))
            == .fire(.init(occurrence: Self.t0, lateness: 3600, isLate: true, missed: 0, next: Self.t0.addingTimeInterval(86_400))))
    }

    // MARK: Arming

    @Test("a trigger added or enabled while the gateway runs does not count past occurrences as missed")
    func arming() {
        let now = Self.t0.addingTimeInterval(3 * 86_400 + 60)
        let daily = Self.trigger(Self.t0, .day)
        let armed = Self.schedule.armed(daily, at: now)
        #expect(armed?.lastFireDate == now)
        #expect(armed.map { Self.schedule.decide($0, now: now) } == .wait(until: Self.t0.addingTimeInterval(4 * 86_400)))
        // Nothing past: unchanged.
        #expect(Self.schedule.armed(Self.trigger(now.addingTimeInterval(10), .day), at: now) == nil)
        // Disabled: unchanged (it is armed when enabled).
        #expect(Self.schedule.armed(Self.trigger(Self.t0, .day, enabled: false), at: now) == nil)
        // A one-time trigger whose date has passed is done without firing.
        let once = Self.schedule.armed(Self.trigger(Self.t0), at: now)
        #expect(once.map { Self.schedule.decide($0, now: now) } == .idle)
    }
}

import Foundation
import HomeModel
import Wire

/// The timer triggers' scheduler as a value: each look at the homes' triggers at a wall-clock
/// time says what fires, what is skipped and when to look again; the engine carries it out
/// (`Gateway+Triggers.swift`). When one trigger fires or is skipped is ``TriggerSchedule``'s
/// business; this keeps what the previous look saw, so that a trigger that appears, is enabled
/// again or has its date or recurrence changed starts afresh (occurrences already past are not
/// missed fires). The first look (at start) applies the missed-fire policy to what passed while
/// the gateway was down.
struct TriggerScheduler {
    /// The longest the engine sleeps before it looks at the wall clock again (seconds).
    static let longestSleep: TimeInterval = 60

    /// A trigger, by home and id.
    struct Key: Hashable {
        let home: HomeID
        let trigger: TriggerID
    }

    /// What a look saw of a trigger.
    struct Watched: Equatable {
        let isEnabled: Bool
        let fireDate: Date
        let recurrence: TimerTrigger.Recurrence?

        init(_ trigger: TimerTrigger) {
            isEnabled = trigger.isEnabled
            fireDate = trigger.fireDate
            recurrence = trigger.recurrence
        }

        /// Whether `trigger` goes on from this: it was enabled and its schedule is the same.
        func continues(_ trigger: TimerTrigger) -> Bool {
            isEnabled && fireDate == trigger.fireDate && recurrence == trigger.recurrence
        }
    }

    /// What one look decided.
    struct Look {
        /// The triggers to run now (their last fire date is recorded in the homes already).
        var fires: [(home: HomeID, trigger: TimerTrigger, fire: TriggerSchedule.Fire)] = []
        /// The occurrences missed beyond the grace period (recorded, not run).
        var skips: [(home: Home, trigger: TimerTrigger, skip: TriggerSchedule.Skip)] = []
        /// Whether the homes' triggers changed (a fire or skip recorded, a trigger armed afresh): store them.
        var changed = false
        /// The earliest occurrence ahead; nil when none is.
        var earliest: Date?

        /// How long to sleep before the next look: until the earliest occurrence, at most
        /// ``longestSleep``, at least a millisecond.
        func wait(from now: Date) -> TimeInterval {
            let ahead = earliest.map { $0.timeIntervalSince(now) } ?? TriggerScheduler.longestSleep
            return min(max(ahead, 0.001), TriggerScheduler.longestSleep)
        }
    }

    let schedule: TriggerSchedule
    /// The triggers as the previous look saw them; nil before the first.
    private var watched: [Key: Watched]?

    init(schedule: TriggerSchedule) {
        self.schedule = schedule
    }

    /// One look at every trigger of `homes` at `now`: records in them what fires and what is
    /// skipped, and says so.
    mutating func look(at homes: inout [Home], now: Date) -> Look {
        var look = Look()
        var seen: [Key: Watched] = [:]
        for homeIndex in homes.indices {
            let home = homes[homeIndex]
            for (index, original) in home.triggers.enumerated() {
                let key = Key(home: home.id, trigger: original.id)
                seen[key] = Watched(original)
                let trigger = decide(original, in: home, afresh: watched.map { $0[key]?.continues(original) != true } ?? false, now: now, into: &look)
                if trigger != original { homes[homeIndex].triggers[index] = trigger }
            }
        }
        watched = seen
        return look
    }

    /// One trigger at `now` (armed afresh first when `afresh`): the trigger as recorded after.
    private func decide(_ original: TimerTrigger, in home: Home, afresh: Bool, now: Date, into look: inout Look) -> TimerTrigger {
        var trigger = original
        if afresh, let armed = schedule.armed(trigger, at: now) {
            trigger = armed
            look.changed = true
        }
        var next: Date?
        switch schedule.decide(trigger, now: now) {
        case .idle:
            break
        case .wait(let date):
            next = date
        case .fire(let fire):
            trigger.lastFireDate = fire.occurrence
            look.changed = true
            look.fires.append((home.id, trigger, fire))
            next = fire.next
        case .skip(let skip):
            trigger.lastFireDate = skip.occurrence
            look.changed = true
            look.skips.append((home, trigger, skip))
            next = skip.next
        }
        if let next { look.earliest = look.earliest.map { min($0, next) } ?? next }
        return trigger
    }
}

extension TriggerSchedule.Skip {
    /// `trigger-missed` on `$events`.
    func announcement(of trigger: TimerTrigger, in home: Home) -> Announcement {
        Announcement("trigger-missed", [
            "home": .string(home.name), "trigger": .string(trigger.name), "fireDate": .string(ISODate.text(occurrence)),
            "missed": .int(missed), "lateSeconds": .double(lateness.toTheMillisecond), "next": .string(next.map(ISODate.text)),
        ])
    }
}

extension TimeInterval {
    /// Seconds to the millisecond (a trigger's lateness in `$events`).
    var toTheMillisecond: Double {
        (self * 1000).rounded() / 1000
    }
}

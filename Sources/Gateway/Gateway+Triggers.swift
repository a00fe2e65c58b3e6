import Foundation
import HomeModel
import Synchronization
import Timing
import Wire

/// Timer triggers: the gateway runs each enabled trigger's action sets at its occurrences, and
/// announces each fire (`trigger-fired`) and each skip (`trigger-missed`) on `$events`.
///
/// When a trigger fires or is skipped is ``TriggerSchedule``'s business (occurrences, the
/// missed-fire policy); here the scheduler looks at every trigger, acts on its decision, and
/// sleeps until the earliest next occurrence: at most a minute at a time, checking the wall
/// clock again after every sleep (a machine that slept, or a clock set forward, does not hold a
/// trigger back), and woken at once when the layout changes (``triggersChanged()``).
///
/// The first look, at start, applies the missed-fire policy to what passed while the gateway
/// was down. A trigger that appears later (added over MQTT), that is enabled again, or whose
/// date or recurrence changed, starts afresh: occurrences already past are not missed fires.
///
/// A fire is recorded (the trigger's last fire date, stored) before its action sets run: a
/// fire is never repeated, even if the gateway stops while the writes are under way.
extension Gateway {
    /// Wakes the trigger scheduler: triggers may have been added, removed, enabled or disabled.
    func triggersChanged() {
        triggerAlarm.ring()
    }

    /// Runs the timer triggers until cancelled.
    func runTriggers() async throws {
        let schedule = TriggerSchedule(calendar: configuration.calendar, grace: configuration.missedTriggerGrace.secondsValue)
        var watched: [TriggerKey: WatchedTrigger]?
        while true {
            try Task.checkCancellation()
            // The sleep is measured from before the look: a clock that moves while the scheduler
            // looks shortens the sleep and never lengthens it.
            let looked = clock.now
            let now = configuration.now()
            let (earliest, seen) = checkTriggers(schedule, now: now, watched: watched)
            watched = seen
            // Nothing suspends between the look and here: a change after it rings a new generation.
            let generation = triggerAlarm.generation
            let ahead = earliest.map { $0.timeIntervalSince(now) } ?? Self.longestTriggerSleep
            let wait = min(max(ahead, 0.001), Self.longestTriggerSleep)
            try await triggerAlarm.sleep(until: looked.advanced(by: .seconds(wait)), on: clock, unlessRungAfter: generation)
        }
    }

    /// The longest the scheduler sleeps before it looks at the wall clock again (seconds).
    static let longestTriggerSleep: TimeInterval = 60

    /// A trigger, by home and id.
    struct TriggerKey: Hashable {
        let home: HomeID
        let trigger: TriggerID
    }

    /// What the scheduler saw of a trigger at its last look.
    struct WatchedTrigger: Equatable {
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

    /// One look at every trigger at `now`: fires what is due (the action sets run beside the
    /// scheduler), skips what was missed, and records both.
    /// - Parameter watched: the triggers as the previous look saw them; nil at start.
    /// - Returns: the earliest occurrence ahead, and the triggers as this look saw them.
    private func checkTriggers(_ schedule: TriggerSchedule, now: Date,
                               watched: [TriggerKey: WatchedTrigger]?) -> (earliest: Date?, seen: [TriggerKey: WatchedTrigger]) {
        var earliest: Date?
        func consider(_ date: Date?) {
            guard let date else { return }
            earliest = earliest.map { min($0, date) } ?? date
        }
        var seen: [TriggerKey: WatchedTrigger] = [:]
        var changed = false
        var fires: [(home: HomeID, trigger: TimerTrigger, fire: TriggerSchedule.Fire)] = []
        for homeIndex in tree.homes.indices {
            let home = tree.homes[homeIndex]
            for (index, original) in home.triggers.enumerated() {
                var trigger = original
                let key = TriggerKey(home: home.id, trigger: trigger.id)
                seen[key] = WatchedTrigger(trigger)
                if let watched, watched[key]?.continues(trigger) != true, let armed = schedule.armed(trigger, at: now) {
                    trigger = armed
                    changed = true
                }
                switch schedule.decide(trigger, now: now) {
                case .idle:
                    break
                case .wait(let date):
                    consider(date)
                case .fire(let fire):
                    trigger.lastFireDate = fire.occurrence
                    changed = true
                    fires.append((home.id, trigger, fire))
                    consider(fire.next)
                case .skip(let skip):
                    trigger.lastFireDate = skip.occurrence
                    changed = true
                    announceMissed(trigger, in: home, skip)
                    consider(skip.next)
                }
                if trigger != original { tree.homes[homeIndex].triggers[index] = trigger }
            }
        }
        if changed { layoutDidChange(saving: true) }
        for (home, trigger, fire) in fires {
            work.start { [weak self] in await self?.fire(trigger, inHome: home, fire) }
        }
        return (earliest, seen)
    }

    private func announceMissed(_ trigger: TimerTrigger, in home: Home, _ skip: TriggerSchedule.Skip) {
        logger.notice("""
            trigger "\(trigger.name)" in "\(home.name)": \(skip.missed) occurrence(s) missed, the latest \
            \(ISODate.text(skip.occurrence)), \(skip.lateness.toTheMillisecond) s ago (more than the grace period); not run
            """)
        announce(Announcement("trigger-missed", [
            "home": .string(home.name), "trigger": .string(trigger.name), "fireDate": .string(ISODate.text(skip.occurrence)),
            "missed": .int(skip.missed), "lateSeconds": .double(skip.lateness.toTheMillisecond), "next": .string(skip.next.map(ISODate.text)),
        ]))
    }

    /// Runs the trigger's action sets together, then announces `trigger-fired` with each one's
    /// results.
    private func fire(_ trigger: TimerTrigger, inHome homeID: HomeID, _ fire: TriggerSchedule.Fire) async {
        await storeWriter.flush() // the fire is stored before its action sets run: never repeated
        let homeName = tree.homes.first { $0.id == homeID }?.name ?? homeID.rawValue
        logger.info("""
            trigger "\(trigger.name)" in "\(homeName)" fires for \(ISODate.text(fire.occurrence))\
            \(fire.isLate ? ", \(fire.lateness.toTheMillisecond) s late" : "")
            """)
        let executions = await withTaskGroup(of: (Int, ActionSetExecution?).self) { group in
            for (index, id) in trigger.actionSetIDs.enumerated() {
                group.addTask { (index, await self.executeActionSet(id, inHome: homeID, cause: "trigger")) }
            }
            var executions = [ActionSetExecution?](repeating: nil, count: trigger.actionSetIDs.count)
            for await (index, execution) in group { executions[index] = execution }
            return executions
        }
        let entries: [JSON] = zip(trigger.actionSetIDs, executions).map { id, execution in
            guard let execution else {
                // Removed since the trigger was made (or while it fired).
                return .object(["actionSet": .string(id.rawValue), "ok": false, "results": [], "message": "no such action set"])
            }
            return .object(["actionSet": .string(execution.actionSet), "ok": .bool(execution.ok), "results": .array(tree.listed(execution.outcomes))])
        }
        var fields: [String: JSON] = [
            "home": .string(homeName), "trigger": .string(trigger.name), "fireDate": .string(ISODate.text(fire.occurrence)),
            "late": .bool(fire.isLate), "missed": .int(fire.missed), "next": .string(fire.next.map(ISODate.text)),
            "ok": .bool(executions.allSatisfy { $0?.ok == true }), "results": .array(entries),
        ]
        if fire.isLate { fields["lateSeconds"] = .double(fire.lateness.toTheMillisecond) }
        announce(Announcement("trigger-fired", fields))
    }
}

extension TimeInterval {
    /// Seconds to the millisecond (a trigger's lateness in `$events`).
    var toTheMillisecond: Double {
        (self * 1000).rounded() / 1000
    }
}

import Foundation
import HomeModel
import Synchronization
import Timing
import Wire

/// Timer triggers: the gateway runs each enabled trigger's action sets at its occurrences, and
/// announces each fire (`trigger-fired`) and each skip (`trigger-missed`) on `$events`.
///
/// When a trigger fires or is skipped is ``TriggerSchedule``'s business (occurrences, the
/// missed-fire policy), and a look at every trigger the ``TriggerScheduler``'s; here the engine
/// carries out each look's decisions and sleeps until the earliest next occurrence: at most a minute at a time, checking the wall
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

    /// Runs the timer triggers until cancelled: looks (``TriggerScheduler``), carries out what
    /// the look decided, and sleeps until the earliest occurrence ahead.
    func runTriggers() async throws {
        var scheduler = TriggerScheduler(schedule: TriggerSchedule(calendar: configuration.calendar, grace: configuration.missedTriggerGrace.secondsValue))
        while true {
            try Task.checkCancellation()
            // The sleep is measured from before the look: a clock that moves while the scheduler
            // looks shortens the sleep and never lengthens it.
            let looked = clock.now
            let now = configuration.now()
            let look = scheduler.look(at: &tree.homes, now: now)
            if look.changed { layoutDidChange(saving: true) }
            for (home, trigger, skip) in look.skips {
                logger.notice("""
                    trigger "\(trigger.name)" in "\(home.name)": \(skip.missed) occurrence(s) missed, the latest \
                    \(ISODate.text(skip.occurrence)), \(skip.lateness.toTheMillisecond) s ago (more than the grace period); not run
                    """)
                announce(skip.announcement(of: trigger, in: home))
            }
            for (home, trigger, fire) in look.fires {
                work.start { [weak self] in await self?.fire(trigger, inHome: home, fire) }
            }
            // Nothing suspends between the look and here: a change after it rings a new generation.
            let generation = triggerAlarm.generation
            try await triggerAlarm.sleep(until: looked.advanced(by: .seconds(look.wait(from: now))), on: clock, unlessRungAfter: generation)
        }
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

import Foundation

/// When timer triggers fire, and what becomes of the occurrences that passed while the gateway
/// could not run them (it was stopped, the machine slept, the clock jumped).
///
/// **Occurrences.** Occurrence 0 is the trigger's ``TimerTrigger/fireDate``; with a recurrence,
/// occurrence *k* is the fire date plus *k* × `every` units, each counted from the fire date (not
/// from the previous occurrence, so nothing drifts):
/// - `minute` and `hour` are fixed lengths (60 and 3600 seconds): an hourly trigger keeps its
///   hour-long intervals across a daylight-saving change (in local time it moves by an hour).
/// - `day` and `week` are calendar days in ``calendar`` (the gateway's time zone), as in HomeKit:
///   a daily trigger at 07:00 stays at 07:00 local time across a daylight-saving change. A local
///   time that does not exist on a day (02:30 when the clocks go from 02:00 to 03:00) is moved
///   forward by the gap (03:30) on that day only; a time that happens twice is taken the first
///   time.
///
/// A one-time trigger (no recurrence, or `every` below 1) has occurrence 0 only.
///
/// **Which occurrence a trigger waits for.** Its first occurrence after its
/// ``TimerTrigger/lastFireDate`` (occurrences within ``sameOccurrence`` of it count as that one),
/// or its fire date if it never fired. A one-time trigger that fired or was skipped has none: it
/// is done (it stays in the home, as in HomeKit). A disabled trigger waits for nothing.
///
/// **The decision** (``decide(_:now:)``), when that occurrence has come (it is at or before now):
/// every occurrence from it up to now is *due*. Whatever their number, the trigger fires at
/// most once: for the latest due occurrence, and only if it is recent enough:
/// - at most ``onTimeTolerance`` past (10 seconds): it fires, on time;
/// - at most ``grace`` past (5 minutes by default): it fires now, late;
/// - older: it is skipped (missed), and so are the earlier due ones.
///
/// The earlier due occurrences never run. Either way a recurring trigger then waits for its
/// first occurrence after now; a one-time trigger is done. A grace of 0 never fires late.
public struct TriggerSchedule: Sendable {
    /// The calendar `day` and `week` recurrences count in: its time zone is the gateway's.
    public var calendar: Calendar
    /// How long after an occurrence it may still fire, late (seconds); 0: never late.
    public var grace: TimeInterval
    /// How long after an occurrence a fire still counts as on time (seconds).
    public var onTimeTolerance: TimeInterval

    /// The default ``grace``: 5 minutes.
    public static let defaultGrace: TimeInterval = 300
    /// The default ``onTimeTolerance``: 10 seconds.
    public static let defaultOnTimeTolerance: TimeInterval = 10
    /// Dates this close (seconds) are the same occurrence: a date stored and read back, or
    /// computed again, may differ from the first by a rounding.
    public static let sameOccurrence: TimeInterval = 0.001
    /// The most days a `day` or `week` recurrence is counted ahead (about 27,000 years).
    static let maximumDays = 10_000_000

    public init(calendar: Calendar = TriggerSchedule.calendar(in: .current), grace: TimeInterval = TriggerSchedule.defaultGrace,
                onTimeTolerance: TimeInterval = TriggerSchedule.defaultOnTimeTolerance) {
        self.calendar = calendar
        self.grace = max(0, grace)
        self.onTimeTolerance = max(0, onTimeTolerance)
    }

    /// The Gregorian calendar in `timeZone`.
    public static func calendar(in timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    // MARK: Occurrences

    /// Occurrence `index` of `trigger` (0: its fire date); nil if it has none of that number.
    public func occurrence(_ index: Int, of trigger: TimerTrigger) -> Date? {
        guard index >= 0 else { return nil }
        if index == 0 { return trigger.fireDate }
        guard let recurrence = Self.recurrence(of: trigger) else { return nil }
        let (steps, overflow) = index.multipliedReportingOverflow(by: recurrence.every)
        guard !overflow else { return nil }
        switch recurrence.unit {
        case .minute, .hour:
            return trigger.fireDate.addingTimeInterval(Double(steps) * recurrence.unit.seconds)
        case .day, .week:
            let days = recurrence.unit == .week ? steps.multipliedReportingOverflow(by: 7) : (partialValue: steps, overflow: false)
            guard !days.overflow, days.partialValue <= Self.maximumDays else { return nil }
            return calendar.date(byAdding: .day, value: days.partialValue, to: trigger.fireDate)
        }
    }

    /// The first occurrence of `trigger` strictly after `date` (the fire date itself when it is
    /// after `date`); nil if there is none: a one-time trigger whose date is not after `date`.
    /// Enabled or not.
    public func nextOccurrence(of trigger: TimerTrigger, after date: Date) -> Date? {
        firstIndex(of: trigger, after: date).flatMap { occurrence($0, of: trigger) }
    }

    /// The occurrence `trigger` waits for: the first after its last fire date (see
    /// ``TimerTrigger/lastFireDate``), or its fire date if it never fired. It may be past
    /// (missed). Nil: the trigger is disabled, or a one-time trigger that is done.
    public func pendingOccurrence(of trigger: TimerTrigger) -> Date? {
        guard trigger.isEnabled, let index = pendingIndex(of: trigger) else { return nil }
        return occurrence(index, of: trigger)
    }

    // MARK: Deciding

    /// What to do about `trigger` at `now`.
    public enum Decision: Sendable, Hashable {
        /// Nothing, now or later: the trigger is disabled, or a one-time trigger that is done.
        case idle
        /// Nothing yet: its next occurrence is this date.
        case wait(until: Date)
        /// Run its action sets now, once.
        case fire(Fire)
        /// Do not run it: the due occurrences are too old.
        case skip(Skip)
    }

    /// A fire: the occurrence it stands for and how late it is.
    public struct Fire: Sendable, Hashable {
        /// The latest due occurrence: the one this fire stands for (its new last fire date).
        public var occurrence: Date
        /// Seconds from the occurrence to now (0 or more).
        public var lateness: TimeInterval
        /// Later than the on-time tolerance (it fires because of the grace period).
        public var isLate: Bool
        /// Earlier due occurrences that do not run (0 unless the gateway missed several).
        public var missed: Int
        /// The occurrence after this one; nil for a one-time trigger.
        public var next: Date?
    }

    /// Occurrences skipped as missed.
    public struct Skip: Sendable, Hashable {
        /// The latest of them (the trigger's new last fire date).
        public var occurrence: Date
        /// Seconds from it to now, more than the grace period.
        public var lateness: TimeInterval
        /// How many occurrences are skipped (1 or more).
        public var missed: Int
        /// The trigger's next occurrence; nil for a one-time trigger (it is done).
        public var next: Date?
    }

    /// The decision for `trigger` at `now` (see the type's description). After a fire or a
    /// skip, the caller records the decision's `occurrence` as the trigger's last fire date.
    public func decide(_ trigger: TimerTrigger, now: Date) -> Decision {
        guard trigger.isEnabled, let pending = pendingIndex(of: trigger), let pendingDate = occurrence(pending, of: trigger) else {
            return .idle
        }
        guard pendingDate <= now else { return .wait(until: pendingDate) }
        // The latest occurrence at or before now: the one before the first after now (a one-time
        // trigger has no occurrence after now: its only one is due).
        let latest = firstIndex(of: trigger, after: now).map { $0 - 1 } ?? pending
        guard latest >= pending, let latestDate = occurrence(latest, of: trigger) else { return .idle }
        let due = latest - pending + 1
        let lateness = now.timeIntervalSince(latestDate)
        let next = occurrence(latest + 1, of: trigger)
        if lateness <= onTimeTolerance {
            return .fire(Fire(occurrence: latestDate, lateness: lateness, isLate: false, missed: due - 1, next: next))
        }
        if lateness <= grace {
            return .fire(Fire(occurrence: latestDate, lateness: lateness, isLate: true, missed: due - 1, next: next))
        }
        return .skip(Skip(occurrence: latestDate, lateness: lateness, missed: due, next: next))
    }

    /// `trigger` as it is when it starts (again) to be watched at `now`, while the gateway runs:
    /// added, or enabled after being disabled. Occurrences that passed before now were never
    /// missed; they are marked dealt with (the last fire date becomes `now`), so the trigger
    /// waits for its first occurrence after now. Nil when nothing needs changing (disabled, done,
    /// or its occurrence is still ahead).
    public func armed(_ trigger: TimerTrigger, at now: Date) -> TimerTrigger? {
        guard let pending = pendingOccurrence(of: trigger), pending <= now else { return nil }
        var armed = trigger
        armed.lastFireDate = now
        return armed
    }

    // MARK: Indexes

    /// A recurrence that recurs: nil for none, or `every` below 1.
    private static func recurrence(of trigger: TimerTrigger) -> TimerTrigger.Recurrence? {
        guard let recurrence = trigger.recurrence, recurrence.every >= 1 else { return nil }
        return recurrence
    }

    /// The number of the occurrence the trigger waits for, enabled or not; nil if done.
    private func pendingIndex(of trigger: TimerTrigger) -> Int? {
        guard let last = trigger.lastFireDate else { return 0 }
        return firstIndex(of: trigger, after: last.addingTimeInterval(Self.sameOccurrence))
    }

    /// The number of the first occurrence strictly after `date`; nil if none.
    private func firstIndex(of trigger: TimerTrigger, after date: Date) -> Int? {
        if trigger.fireDate > date { return 0 }
        guard let recurrence = Self.recurrence(of: trigger) else { return nil }
        // An estimate from the nominal length of a step, then corrected by a step or two (a
        // calendar day is 23 to 25 hours around a daylight-saving change).
        let step = Double(recurrence.every) * recurrence.unit.seconds
        let estimate = date.timeIntervalSince(trigger.fireDate) / step
        var index = estimate < Double(Int.max / 2) ? max(0, Int(estimate)) : Int.max / 2
        while index > 0, occurrence(index, of: trigger).map({ $0 > date }) ?? true {
            index -= 1
        }
        // occurrence(index) <= date now: the next one is the first after it.
        while true {
            index += 1
            guard let candidate = occurrence(index, of: trigger) else { return nil }
            if candidate > date { return index }
        }
    }
}

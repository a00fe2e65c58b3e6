import HomeModel

/// `debounce` and `throttle` as a value: it decides, for each new value of a paced
/// characteristic, whether it is published now or held, and when what is held is due. It keeps
/// times only, never values: what is published when a hold ends is the tree's value then, the
/// newest. No I/O, no clock of its own (times are the engine's, passed in), so tests drive it.
///
/// - `debounce` D: a value is held until D has passed without another; each new one starts D again.
/// - `throttle` T: at most one publish per T; a value within T of the last publish is held until T
///   has passed, so the last value is always published in the end.
/// - Both: the debounced value waits for the throttle too.
struct PublishPacer: Sendable {
    /// When each held characteristic is due.
    private var due: [CharacteristicReference: Duration] = [:]
    /// When each throttled characteristic was last published.
    private var lastPublished: [CharacteristicReference: Duration] = [:]

    /// A new value at `now`: true if it is published now, false if it is held (until
    /// ``nextDeadline`` at the latest).
    mutating func offer(_ reference: CharacteristicReference, debounce: Duration, throttle: Duration, now: Duration) -> Bool {
        var when = debounce > .zero ? now + debounce : now
        if throttle > .zero, let last = lastPublished[reference] { when = max(when, last + throttle) }
        guard when > now else {
            due[reference] = nil
            if throttle > .zero { lastPublished[reference] = now }
            return true
        }
        due[reference] = when
        return false
    }

    /// The earliest time a held value is due; nil when none is held.
    var nextDeadline: Duration? { due.values.min() }

    /// The held characteristics due at `now`, released: the caller publishes their values.
    mutating func release(now: Duration) -> [CharacteristicReference] {
        let ready = due.filter { $0.value <= now }.map(\.key)
        for reference in ready {
            due[reference] = nil
            lastPublished[reference] = now
        }
        return ready.sorted { ($0.accessoryID.rawValue, $0.iid) < ($1.accessoryID.rawValue, $1.iid) }
    }

    /// Everything held, released at once (the options changed: what was held follows the new ones).
    mutating func releaseAll() -> [CharacteristicReference] {
        defer {
            due.removeAll()
            lastPublished.removeAll()
        }
        return due.keys.sorted { ($0.accessoryID.rawValue, $0.iid) < ($1.accessoryID.rawValue, $1.iid) }
    }
}

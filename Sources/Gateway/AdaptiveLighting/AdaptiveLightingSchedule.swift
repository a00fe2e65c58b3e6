import HomeModel
import Wire

/// Which bulbs follow Adaptive Lighting and when each transition is renewed, as a value: the
/// engine tells it what the bulbs confirmed and asks it what is due; it reads no clock (times
/// are the engine's, passed in), so tests drive it.
///
/// - A bulb is **on** once it confirmed a transition, until it is turned off, a person changed
///   its colour (a write to its colour temperature, hue or saturation), or the bulb ended it.
/// - **Wanted** is what a person asked for, kept across restarts: a wanted bulb is given a new
///   transition when the gateway starts and when the bulb comes back.
/// - A transition is renewed ``renewBefore`` before its curve ends (a day's curve: after 23
///   hours); a renewal that fails is tried again after ``retryAfter``.
struct AdaptiveLightingSchedule: Sendable {
    static let renewBefore: Duration = .seconds(3600)
    static let retryAfter: Duration = .seconds(60)

    /// What a person asked for (stored).
    private(set) var wanted: Set<ServiceReference>
    /// The bulbs that confirmed a transition, and when each is renewed.
    private var renewals: [ServiceReference: Duration] = [:]

    init(wanted: Set<ServiceReference> = []) {
        self.wanted = wanted
    }

    /// Whether any bulb follows a transition (a set's path asks this first: one check when none does).
    var isAnyOn: Bool { !renewals.isEmpty }

    /// Whether the bulb follows a transition it confirmed.
    func isOn(_ service: ServiceReference) -> Bool { renewals[service] != nil }

    /// The state a bulb's `adaptive-lighting` topic carries: `on` or `off`.
    func payload(_ service: ServiceReference) -> [UInt8] {
        Array((isOn(service) ? "on" : "off").utf8)
    }

    /// The bulb confirmed a transition spanning `span` at `now`.
    mutating func confirmed(_ service: ServiceReference, span: Duration, now: Duration) {
        wanted.insert(service)
        renewals[service] = now + max(span - Self.renewBefore, Self.retryAfter)
    }

    /// A renewal failed at `now` (the bulb did not answer): tried again later; the transition it
    /// has goes on meanwhile.
    mutating func renewalFailed(_ service: ServiceReference, now: Duration) {
        guard renewals[service] != nil else { return }
        renewals[service] = now + Self.retryAfter
    }

    /// Turned off (by a person, by a manual colour, or by the bulb): no longer on, no longer wanted.
    /// Returns whether it was on.
    @discardableResult
    mutating func ended(_ service: ServiceReference) -> Bool {
        wanted.remove(service)
        return renewals.removeValue(forKey: service) != nil
    }

    /// The bulb is gone from the home: forgotten.
    mutating func forget(_ service: ServiceReference) {
        ended(service)
    }

    /// Acknowledged writes: a person's colour (temperature, hue, saturation) on a bulb whose
    /// Adaptive Lighting is on ends it, as in the Home app. Returns the bulbs it ended.
    mutating func endByHand(_ results: [CommandMachine.Result], in tree: HomeTree) -> [ServiceReference] {
        guard isAnyOn else { return [] }
        return results.compactMap { result in
            guard case .written = result.outcome, let bulb = tree.adaptiveLightingBulb(containing: result.item.reference),
                  bulb.manual.contains(result.item.reference.iid), ended(bulb.service) else { return nil }
            return bulb.service
        }
    }

    /// A value from a bulb: its Active Transition Count at 0 while Adaptive Lighting is on means
    /// the bulb ended it (a change made on the bulb, another controller's write). Returns the
    /// bulb it ended.
    mutating func endByBulb(_ value: Value, at reference: CharacteristicReference, in tree: HomeTree) -> ServiceReference? {
        guard isAnyOn, let bulb = tree.adaptiveLightingBulb(containing: reference), bulb.activeCount == reference.iid,
              value.json.int == 0, ended(bulb.service) else { return nil }
        return bulb.service
    }

    /// The earliest renewal; nil when none is on.
    var nextRenewal: Duration? { renewals.values.min() }

    /// The bulbs whose renewal is due at `now` (each stays on; the engine renews and says how it went).
    func due(now: Duration) -> [ServiceReference] {
        renewals.filter { $0.value <= now }.map(\.key).sorted { ($0.accessoryID.rawValue, $0.serviceIID) < ($1.accessoryID.rawValue, $1.serviceIID) }
    }

    /// Puts a due renewal off while it is written (so the loop does not start it twice).
    mutating func renewing(_ service: ServiceReference, now: Duration) {
        guard renewals[service] != nil else { return }
        renewals[service] = now + Self.retryAfter
    }
}

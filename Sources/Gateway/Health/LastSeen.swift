import Foundation
import HomeModel

/// When each accessory was last heard from (an event, a read's or a write's answer, a
/// description, reachability regained), and when `<accessory>/$last-seen` may be published
/// again: at once the first time, then at most once per interval, carrying the latest time.
/// A value machine: the engine gives it the times (wall clock for the topic, monotonic for the
/// interval) and publishes what it says.
struct LastSeen: Sendable {
    private struct Entry: Sendable {
        var heard: Date
        /// What `$last-seen` says now, when it was published, and whether `heard` changed since.
        var published: Date
        var publishedAt: ContinuousClock.Instant?
        var isPending: Bool
    }

    /// How long after a publication the next one may follow.
    let interval: Duration
    private var entries: [AccessoryID: Entry] = [:]

    init(interval: Duration) {
        self.interval = interval
    }

    /// `id` was heard from at `date`. Returns true when its `$last-seen` is to be published now
    /// (never published yet); otherwise it waits for ``due(now:)``.
    mutating func heard(_ id: AccessoryID, at date: Date, now: ContinuousClock.Instant) -> Bool {
        guard var entry = entries[id] else {
            entries[id] = Entry(heard: date, published: date, publishedAt: now, isPending: false)
            return true
        }
        entry.heard = max(entry.heard, date)
        entry.isPending = true
        entries[id] = entry
        return false
    }

    /// A time kept from before (the broker's retained `$last-seen` at a restart), for an
    /// accessory not heard from since: published with the rest, not as news.
    mutating func remember(_ id: AccessoryID, at date: Date) {
        guard entries[id] == nil else { return }
        entries[id] = Entry(heard: date, published: date, publishedAt: nil, isPending: false)
    }

    /// The accessories whose `$last-seen` is to be published now: heard from since their last
    /// publication, at least an interval ago. Marks them published.
    mutating func due(now: ContinuousClock.Instant) -> [AccessoryID] {
        var due: [AccessoryID] = []
        for (id, entry) in entries where entry.isPending && entry.publishedAt.map({ $0.duration(to: now) >= interval }) ?? true {
            entries[id]?.isPending = false
            entries[id]?.published = entry.heard
            entries[id]?.publishedAt = now
            due.append(id)
        }
        return due.sorted { $0.rawValue < $1.rawValue }
    }

    /// An accessory that left the home.
    mutating func forget(_ id: AccessoryID) {
        entries[id] = nil
    }

    /// When `id` was last heard from, if ever.
    func heard(_ id: AccessoryID) -> Date? {
        entries[id]?.heard
    }

    /// What `id`'s `$last-seen` says (the time it was heard from as of its last publication).
    func published(_ id: AccessoryID) -> Date? {
        entries[id]?.published
    }

    /// `$last-seen`'s payload: ISO 8601, UTC, to the second (`2026-11-28T13:30:05Z`).
    static func payload(_ date: Date) -> [UInt8] {
        Array(ISODate.text(date).utf8)
    }

    /// A payload read back (from the broker at a restart); nil when it is no such time.
    static func date(fromPayload payload: [UInt8]) -> Date? {
        ISODate.date(String(decoding: payload, as: UTF8.self))
    }
}

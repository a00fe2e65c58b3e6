import Foundation
import HomeModel
import HomeStore
import Timing
import Wire

/// Each characteristic's values over time: recorded as the engine publishes them (device events,
/// reads, acknowledged writes, the simulator's changes, a device's description when it
/// connects), kept in the store through the ``StoreWriter`` (batched, off the message loop),
/// pruned by age, and served on `<base>/$request/history/get` (``HistoryRequest``).
extension Gateway {
    /// The history's settings (the configuration's `history:` section).
    public struct History: Sendable, Equatable {
        /// How long points are kept (`days`, default 7 days).
        public var retention: Duration
        /// The most points kept per characteristic (`max_points`, default 10,000): its oldest go first.
        public var maxPoints: Int
        /// How often points older than ``retention`` are removed.
        public var pruneInterval: Duration

        public init(retention: Duration = .seconds(7 * 86_400), maxPoints: Int = 10_000, pruneInterval: Duration = .seconds(3_600)) {
            self.retention = retention
            self.maxPoints = maxPoints
            self.pruneInterval = pruneInterval
        }
    }

    // MARK: Recording

    /// Records a value the engine published for a characteristic, at the current time.
    func recordHistory(_ value: Value, of reference: CharacteristicReference) {
        guard configuration.history != nil else { return }
        storeWriter.recordHistory(HistoryPoint(characteristic: reference, time: configuration.now().unixMilliseconds, value: value.jsonText))
    }

    /// Records the values of accessories `ids` a device's description changed since `before`
    /// (``HomeTree/changedValues(of:comparedWith:)``).
    func recordChangedValues(of ids: [AccessoryID], comparedWith before: [Home]) {
        guard configuration.history != nil else { return }
        for (reference, value) in tree.changedValues(of: ids, comparedWith: before) { recordHistory(value, of: reference) }
    }

    /// Removes points older than the retention, now and then every prune interval, on the
    /// engine's clock; the cutoff is taken from the wall clock (``Configuration/now``).
    func pruneHistoryPeriodically(_ settings: History) async throws {
        while true {
            let cutoff = configuration.now().addingTimeInterval(-settings.retention.secondsValue).unixMilliseconds
            storeWriter.write("prune the history") { [logger] store throws(StoreError) in
                let removed = try store.pruneHistory(olderThan: cutoff, maxPoints: settings.maxPoints)
                if removed > 0 { logger.debug("history: \(removed) points pruned") }
            }
            try await clock.sleep(until: clock.now.advanced(by: settings.pruneInterval), tolerance: nil)
        }
    }

    // MARK: Serving

    /// `history/get`: the points of one characteristic in a time range.
    /// - Throws: ``RequestError``: `history-off`, `unknown-request`, `invalid-request`,
    ///   `not-found`, `store-failed`.
    func historyRequest(_ request: HistoryRequest) async throws -> [String: JSON] {
        guard configuration.history != nil, storeWriter.hasStore else {
            throw RequestError(code: "history-off", message: "this gateway keeps no history (its configuration has history: {enabled: false})")
        }
        let range = try request.range(now: configuration.now().unixMilliseconds)
        let requested = try tree.requestedCharacteristic(request.characteristic, home: request.home)
        guard let topic = requested.topic else {
            throw RequestError.notFound("\(tree.name(of: requested.reference)) has no topic: it is hidden")
        }
        let reference = requested.reference
        let found: HistoryRange?
        do {
            found = try await storeWriter.read { store throws(StoreError) in
                try store.history(of: reference, from: range.lowerBound, to: range.upperBound, limit: request.limit)
            }
        } catch {
            throw RequestError(code: "store-failed", message: "the history could not be read: \(error)")
        }
        let history = found ?? HistoryRange(points: [], truncated: false, previous: nil)
        return [
            "characteristic": .string(topic), "accessory": .string(reference.accessoryID.rawValue), "iid": .int(reference.iid),
            "from": .int(range.lowerBound), "to": .int(range.upperBound),
            "points": .array(history.points.map(\.json)), "truncated": .bool(history.truncated),
            "previous": history.previous.map(\.json) ?? .null,
        ]
    }
}

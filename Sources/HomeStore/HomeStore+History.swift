import GRDB
import HomeModel

// Each characteristic's values over time (schema `v5-history`). A characteristic is identified
// by its accessory's stable id and its instance id, never by its topic: a rename or a move
// changes the topic and keeps the history. Points are kept per characteristic up to a limit
// (the oldest go first) and pruned by age (``HomeStore/pruneHistory(olderThan:maxPoints:)``).

/// One value a characteristic had, and when.
public struct HistoryPoint: Sendable, Equatable {
    /// The characteristic: its accessory's id and its instance id.
    public var characteristic: CharacteristicReference
    /// When the value was published, in Unix milliseconds.
    public var time: Int64
    /// The value's JSON text, as it was published (`true`, `21.5`, `"text"`).
    public var value: String

    public init(characteristic: CharacteristicReference, time: Int64, value: String) {
        self.characteristic = characteristic
        self.time = time
        self.value = value
    }
}

/// The points of one characteristic in a time range, as ``HomeStore/history(of:from:to:limit:)``
/// reads them.
public struct HistoryRange: Sendable, Equatable {
    /// A value, and when it was published (Unix milliseconds).
    public struct Point: Sendable, Equatable {
        public var time: Int64
        /// The value's JSON text, as it was published.
        public var value: String

        public init(time: Int64, value: String) {
            self.time = time
            self.value = value
        }
    }

    /// The points from `from` to `to` (both included), oldest first: the newest `limit` of them.
    public var points: [Point]
    /// Whether older points in the range were left out to keep within the limit.
    public var truncated: Bool
    /// The last point before the range, if one is kept: the value the range starts with.
    public var previous: Point?

    public init(points: [Point], truncated: Bool, previous: Point?) {
        self.points = points
        self.truncated = truncated
        self.previous = previous
    }
}

extension HomeStore {
    /// Adds `points` to their characteristics' histories, in one transaction, and keeps at most
    /// `maxPoints` per characteristic: the oldest beyond that are removed (the batch's own first,
    /// when it alone holds more).
    public func recordHistory(_ points: [HistoryPoint], maxPoints: Int) throws(StoreError) {
        guard !points.isEmpty else { return }
        let bySeries = Dictionary(grouping: points, by: \.characteristic)
        try write("record history") { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO history_point (series_id, time, value) VALUES (?, ?, ?)")
            for (characteristic, series) in bySeries {
                let id = try Self.seriesID(characteristic, creating: true, in: db)!
                let kept = series.suffix(maxPoints)
                for point in kept { try insert.execute(arguments: [id, point.time, point.value]) }
                try db.execute(sql: "UPDATE history_series SET point_count = point_count + ? WHERE id = ?", arguments: [kept.count, id])
                try Self.trim(series: id, to: maxPoints, in: db)
            }
        }
    }

    /// The points of `characteristic` from `from` to `to` (Unix milliseconds, both included),
    /// oldest first; when more than `limit` lie in the range, the newest `limit` of them.
    public func history(of characteristic: CharacteristicReference, from: Int64, to: Int64, limit: Int) throws(StoreError) -> HistoryRange {
        try read("read the history of \(characteristic)") { db in
            guard let id = try Self.seriesID(characteristic, creating: false, in: db) else {
                return HistoryRange(points: [], truncated: false, previous: nil)
            }
            let rows = try Row.fetchAll(db, sql: """
                SELECT time, value FROM history_point WHERE series_id = ? AND time BETWEEN ? AND ?
                ORDER BY time DESC, rowid DESC LIMIT ?
                """, arguments: [id, from, to, limit + 1])
            let previous = try Row.fetchOne(db, sql: """
                SELECT time, value FROM history_point WHERE series_id = ? AND time < ?
                ORDER BY time DESC, rowid DESC LIMIT 1
                """, arguments: [id, from])
            let points = rows.prefix(limit).reversed().map(Self.point)
            return HistoryRange(points: points, truncated: rows.count > limit, previous: previous.map(Self.point))
        }
    }

    /// Removes every point older than `cutoff` (Unix milliseconds), and from each characteristic
    /// the oldest points beyond `maxPoints` (a lower limit than before applies at once);
    /// characteristics left without points are forgotten. Returns how many points went.
    @discardableResult
    public func pruneHistory(olderThan cutoff: Int64, maxPoints: Int) throws(StoreError) -> Int {
        try write("prune the history") { db in
            var removed = 0
            let series = try Row.fetchAll(db, sql: "SELECT id, point_count FROM history_series")
            for row in series {
                let id: Int64 = row["id"]
                try db.execute(sql: "DELETE FROM history_point WHERE series_id = ? AND time < ?", arguments: [id, cutoff])
                let aged = db.changesCount
                removed += aged
                try db.execute(sql: "UPDATE history_series SET point_count = point_count - ? WHERE id = ?", arguments: [aged, id])
                removed += try Self.trim(series: id, to: maxPoints, in: db)
            }
            try db.execute(sql: "DELETE FROM history_series WHERE point_count <= 0")
            return removed
        }
    }

    /// Removes the whole history (history was turned off).
    public func deleteHistory() throws(StoreError) {
        try write("delete the history") { db in
            try db.execute(sql: "DELETE FROM history_point")
            try db.execute(sql: "DELETE FROM history_series")
        }
    }

    /// How many points the store holds, in all characteristics.
    public func historyPointCount() throws(StoreError) -> Int {
        try read("count the history's points") { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM history_point") ?? 0
        }
    }

    private static func point(_ row: Row) -> HistoryRange.Point {
        HistoryRange.Point(time: row["time"], value: row["value"])
    }

    /// The series of `characteristic`; made when missing if `creating`.
    private static func seriesID(_ characteristic: CharacteristicReference, creating: Bool, in db: Database) throws -> Int64? {
        let arguments: StatementArguments = [characteristic.accessoryID.rawValue, characteristic.iid]
        if let id = try Int64.fetchOne(db, sql: "SELECT id FROM history_series WHERE accessory_id = ? AND iid = ?", arguments: arguments) {
            return id
        }
        guard creating else { return nil }
        try db.execute(sql: "INSERT INTO history_series (accessory_id, iid) VALUES (?, ?)", arguments: arguments)
        return db.lastInsertedRowID
    }

    /// Removes the oldest points of a series beyond `maxPoints`; returns how many went.
    @discardableResult
    private static func trim(series id: Int64, to maxPoints: Int, in db: Database) throws -> Int {
        let count = try Int.fetchOne(db, sql: "SELECT point_count FROM history_series WHERE id = ?", arguments: [id]) ?? 0
        guard count > maxPoints else { return 0 }
        try db.execute(sql: """
            DELETE FROM history_point WHERE rowid IN (
                SELECT rowid FROM history_point WHERE series_id = ? ORDER BY time, rowid LIMIT ?)
            """, arguments: [id, count - maxPoints])
        let removed = db.changesCount
        try db.execute(sql: "UPDATE history_series SET point_count = point_count - ? WHERE id = ?", arguments: [removed, id])
        return removed
    }
}

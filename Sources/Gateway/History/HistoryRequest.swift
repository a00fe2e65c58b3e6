import Foundation
import HomeModel
import Wire

/// `<base>/$request/history/get`, parsed: the characteristic (by topic, or by `accessory` and
/// instance id), the time range asked for and the most points wanted. Nothing here looks at the
/// home or the store; ``range(now:)`` decides the range against the time of the request.
struct HistoryRequest: Equatable {
    /// The characteristic, as the request names it.
    var characteristic: ManagementRequest.TargetName
    /// The home to look an accessory id up in (`home`; nil: any).
    var home: String?
    /// The range's start and end in Unix milliseconds, as given (nil: the default).
    var from: Int64?
    var to: Int64?
    /// The most points in the answer (`limit`).
    var limit: Int

    /// The range when the request gives no start: this long before its end.
    static let defaultSpan: Int64 = 24 * 3_600_000
    /// The most points an answer holds when the request says nothing, and the largest `limit`.
    static let defaultLimit = 10_000
    static let largestLimit = 100_000
    /// The latest time a request may name: the end of the year 9999 (ISO 8601's four digits).
    static let latestTime: Int64 = 253_402_300_799_999

    init(characteristic: ManagementRequest.TargetName, home: String? = nil, from: Int64? = nil, to: Int64? = nil, limit: Int = Self.defaultLimit) {
        self.characteristic = characteristic
        self.home = home
        self.from = from
        self.to = to
        self.limit = limit
    }

    /// Parses `history/<verb>` and its body.
    /// - Throws: ``RequestError``: `unknown-request` for a verb other than `get`,
    ///   `invalid-request` for a missing or mistyped field.
    init(verb: String, body: [String: JSON]) throws {
        guard verb == "get" else {
            throw RequestError(code: "unknown-request", message: "unknown request \"history/\(verb)\"; known: get")
        }
        let fields = ManagementBody(body)
        guard body["characteristic"] != nil else {
            throw RequestError.invalid("\"characteristic\" is required: the characteristic's topic (or its iid, with \"accessory\")")
        }
        self.init(characteristic: try fields.target(.characteristic), home: try fields.optionalString("home"),
                  from: try Self.time(body, "from"), to: try Self.time(body, "to"), limit: try Self.limit(body))
    }

    /// The range to answer for, in Unix milliseconds, at `now`: `to` defaults to now, `from` to
    /// 24 hours before `to`.
    /// - Throws: ``RequestError`` `invalid-request` when `from` is after `to`.
    func range(now: Int64) throws -> ClosedRange<Int64> {
        let end = to ?? now
        let start = from ?? max(0, end - Self.defaultSpan)
        guard start <= end else {
            throw RequestError.invalid("\"from\" (\(start)) is after \"to\" (\(end))")
        }
        return start...end
    }

    /// A time: Unix milliseconds (a whole number), or an ISO 8601 date with an offset.
    private static func time(_ body: [String: JSON], _ key: String) throws -> Int64? {
        guard let value = body[key], value != .null else { return nil }
        let problem = "\"\(key)\" must be Unix milliseconds (a whole number from 0) or an ISO 8601 date with an offset, as 2026-11-21T07:00:00Z"
        if value.isNumber {
            guard let whole = value.int, (0...latestTime).contains(whole) else { throw RequestError.invalid(problem) }
            return whole
        }
        guard let text = value.string, let date = ISODate.date(text) else { throw RequestError.invalid(problem) }
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds >= 0, milliseconds <= Double(latestTime) else { throw RequestError.invalid(problem) }
        return Int64(milliseconds)
    }

    private static func limit(_ body: [String: JSON]) throws -> Int {
        guard let value = body["limit"], value != .null else { return defaultLimit }
        guard value.isNumber, let whole = value.int, let limit = Int(exactly: whole), (1...largestLimit).contains(limit) else {
            throw RequestError.invalid("\"limit\" must be a whole number from 1 to \(largestLimit)")
        }
        return limit
    }
}

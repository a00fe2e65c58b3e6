import Foundation
import HomeStore
import Wire

extension Date {
    /// Milliseconds since 1970, rounded down: a history point's time.
    var unixMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }
}

extension HistoryRange.Point {
    /// The point as `history/get` answers it: `[<unix ms>, <value as published>]`.
    var json: JSON {
        .array([.int(time), (try? JSON.parse(value)) ?? .string(value)])
    }
}

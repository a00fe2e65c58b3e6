import Foundation

/// Dates as the gateway writes and reads them on MQTT: ISO 8601, one way each.
enum ISODate {
    /// A date as the gateway writes it (`$layout`'s trigger dates, `$events`, `$health`,
    /// `$last-seen`): ISO 8601 in UTC, to the second (`2026-11-28T13:30:05Z`).
    static func text(_ date: Date) -> String {
        date.ISO8601Format()
    }

    /// A date as a request or a retained message gives it: ISO 8601 with an offset
    /// (`2026-11-21T07:00:00+01:00`, `Z`), fractions of a second allowed; nil for anything else.
    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return plain.date(from: text) ?? fractional.date(from: text)
    }
}

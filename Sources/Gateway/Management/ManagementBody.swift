import Foundation
import HomeModel
import Wire

/// A request body's fields, checked: a missing or mistyped field is `invalid-request`.
struct ManagementBody {
    let raw: [String: JSON]

    init(_ raw: [String: JSON]) {
        self.raw = raw
    }

    func string(_ key: String) throws -> String {
        guard let value = raw[key]?.string, !value.isEmpty else { throw RequestError.invalid("\"\(key)\" is required (a string)") }
        return value
    }

    func optionalString(_ key: String) throws -> String? {
        guard let value = raw[key], value != .null else { return nil }
        guard let text = value.string, !text.isEmpty else { throw RequestError.invalid("\"\(key)\" must be a string") }
        return text
    }

    func int(_ key: String) throws -> Int {
        guard let number = raw[key], number.isNumber, let whole = number.int, let value = Int(exactly: whole) else {
            throw RequestError.invalid("\"\(key)\" is required (a whole number)")
        }
        return value
    }

    func bool(_ key: String, default fallback: Bool) throws -> Bool {
        guard let value = raw[key], value != .null else { return fallback }
        guard case .bool(let flag) = value else { throw RequestError.invalid("\"\(key)\" must be true or false") }
        return flag
    }

    func strings(_ key: String) throws -> [String] {
        guard let value = raw[key], value != .null else { return [] }
        guard let list = value.array?.compactMap(\.string), list.count == value.array?.count else { throw RequestError.invalid("\"\(key)\" must be a list of names") }
        return list
    }

    /// The service or characteristic named by a topic (a string under `kind`'s key) or by
    /// `accessory` and an instance id (a number under `kind`'s key).
    func target(_ kind: ManagementRequest.TargetKind) throws -> ManagementRequest.TargetName {
        if case .string(let topic)? = raw[kind.rawValue] { return .topic(topic) }
        return .instance(accessory: try string("accessory"), iid: try int(kind.rawValue))
    }

    /// An ISO 8601 date with an offset (`2026-11-21T07:00:00+01:00`, fractions allowed).
    func date(_ key: String) throws -> Date {
        let text = try string(key)
        guard let date = ISODate.date(text) else {
            throw RequestError.invalid("\"\(key)\" must be an ISO 8601 date with an offset, as 2026-11-21T07:00:00+01:00")
        }
        return date
    }

    /// `null` or `{"unit": "minute" | "hour" | "day" | "week", "every": N}`.
    func recurrence() throws -> TimerTrigger.Recurrence? {
        guard let value = raw["recurrence"], value != .null else { return nil }
        guard let object = value.object, let unitName = object["unit"]?.string,
              let unit = TimerTrigger.Recurrence.Unit(rawValue: unitName) else {
            throw RequestError.invalid("\"recurrence\" must be null or {\"unit\": \"minute\" | \"hour\" | \"day\" | \"week\", \"every\": N}")
        }
        guard let every = object["every"]?.int.flatMap({ Int(exactly: $0) }), object["every"]?.isNumber == true, every >= 1 else { throw RequestError.invalid("\"recurrence.every\" must be a whole number of at least 1") }
        return TimerTrigger.Recurrence(unit: unit, every: every)
    }
}

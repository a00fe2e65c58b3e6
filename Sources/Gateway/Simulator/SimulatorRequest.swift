import HomeModel
import Wire

/// `<base>/$request/simulator/<verb>`, parsed: the simulator's controls, for demos and tests
/// (docs/simulator.md). Nothing here looks at the home; `Gateway+Simulator.swift` carries it out.
enum SimulatorRequest: Equatable {
    /// A characteristic changes on the device, as a person at it would change it.
    case update(ManagementRequest.TargetName, value: JSON)
    /// The accessory (with what is behind it, for a bridge) becomes reachable or not.
    case reachability(accessory: String, reachable: Bool)
    /// `count` events of values across the characteristic's range, at once.
    case flood(ManagementRequest.TargetName, count: Int)
    /// How the accessory answers from now on: its latency, and a failure for every write.
    case behaviour(accessory: String, latency: Duration?, failure: Failure)

    /// A change of `behaviour`'s failure.
    enum Failure: Equatable {
        case unchanged
        case fail(HAPStatus)
        case clear
    }

    static let verbs = ["update", "reachability", "behaviour", "flood"]

    /// - Throws: ``RequestError``: `unknown-request`, `invalid-request`.
    init(verb: String, body: [String: JSON]) throws {
        let fields = ManagementBody(body)
        switch verb {
        case "update":
            guard let value = body["value"] else { throw RequestError.invalid("\"value\" is required") }
            self = .update(try Self.characteristic(fields, body), value: value)
        case "reachability":
            guard case .bool(let reachable)? = body["reachable"] else { throw RequestError.invalid("\"reachable\" must be true or false") }
            self = .reachability(accessory: try fields.string("accessory"), reachable: reachable)
        case "flood":
            guard let count = body["count"]?.int.flatMap({ Int(exactly: $0) }), (1...10_000_000).contains(count) else {
                throw RequestError.invalid("\"count\" must be a whole number from 1 to 10000000")
            }
            self = .flood(try Self.characteristic(fields, body), count: count)
        case "behaviour":
            self = .behaviour(accessory: try fields.string("accessory"), latency: try Self.latency(body), failure: try Self.failure(body))
        default:
            throw RequestError(code: "unknown-request", message: "unknown simulator request \"\(verb)\"; known: \(Self.verbs.joined(separator: ", "))")
        }
    }

    /// The characteristic: `accessory` with its `iid`; or `characteristic`, a topic (with a
    /// `/`) or a type name (`brightness`) on `accessory`, in its `service` (an iid, a type or a
    /// name) when given.
    private static func characteristic(_ fields: ManagementBody, _ body: [String: JSON]) throws -> ManagementRequest.TargetName {
        if body["iid"] != nil { return .instance(accessory: try fields.string("accessory"), iid: try fields.int("iid")) }
        let named = try fields.string("characteristic")
        if named.contains("/") { return .topic(named) }
        let service: ManagementRequest.ServiceName? = switch body["service"] {
        case .int(let iid)?: .iid(Int(iid))
        case .string(let name)?: .name(name)
        default: nil
        }
        return .type(accessory: try fields.string("accessory"), service: service, type: named)
    }

    private static func latency(_ body: [String: JSON]) throws -> Duration? {
        guard let milliseconds = body["latency_ms"] else { return nil }
        guard let number = milliseconds.double, number >= 0 else { throw RequestError.invalid("\"latency_ms\" must be a number of milliseconds") }
        return .milliseconds(Int64(number))
    }

    private static func failure(_ body: [String: JSON]) throws -> Failure {
        guard let status = body["fail_status"] else { return .unchanged }
        if status == .null { return .clear }
        guard let code = status.int, let hap = HAPStatus(rawValue: Int(code)), hap != .success else {
            throw RequestError.invalid("\"fail_status\" must be a HAP status from -70401 to -70412, or null")
        }
        return .fail(hap)
    }
}

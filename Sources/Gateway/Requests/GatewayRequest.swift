import Wire

/// `<base>/$request/<object>/<verb>` parsed into what it asks, before anything is looked up:
/// every request the gateway answers is one of these (docs/mqtt-api.md, section 7). Parsing is
/// here; deciding is ``Management``'s (the home), the history's and the simulator's; carrying
/// out is `Gateway+Requests.swift`'s router.
enum GatewayRequest: Equatable {
    /// `gateway/statistics`: the sets' timings, reset after the answer when `reset` is true.
    case statistics(reset: Bool)
    /// A request about the home itself: its layout, devices, scenes, the accessory browser.
    case management(ManagementRequest)
    /// `history/get`.
    case history(HistoryRequest)
    /// The simulator's controls (`simulator/update`, `reachability`, `flood`, `behaviour`).
    case simulator(SimulatorRequest)

    /// Parses a request's object, verb and body.
    /// - Throws: ``RequestError``: `unknown-request` for an object or verb the gateway
    ///   does not know, `invalid-request` for a missing or mistyped field.
    init(object: String, verb: String, body: [String: JSON]) throws {
        guard !verb.isEmpty else { throw Self.unknown("\(object)") }
        switch object {
        case "gateway" where verb == "statistics":
            self = .statistics(reset: body["reset"] == true)
        case "history":
            self = .history(try HistoryRequest(verb: verb, body: body))
        case "simulator":
            self = .simulator(try SimulatorRequest(verb: verb, body: body))
        case _ where ManagementRequest.objects.contains(object):
            self = .management(try ManagementRequest(object: object, verb: verb, body: body))
        default:
            throw Self.unknown("\(object)/\(verb)")
        }
    }

    static func unknown(_ path: String) -> RequestError {
        RequestError(code: "unknown-request", message: "unknown request \"\(path)\"")
    }
}

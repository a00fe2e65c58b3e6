import Wire

/// A request's failure: its code (`not-found`, `invalid-request`, ...) and message.
struct RequestError: Error {
    let code: String
    let message: String
    /// The device's HAP status, for `device-error` and `timeout`.
    var status: HAPStatus?

    init(code: String, message: String, status: HAPStatus? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    static func invalid(_ message: String) -> RequestError { RequestError(code: "invalid-request", message: message) }
    static func notFound(_ message: String) -> RequestError { RequestError(code: "not-found", message: message) }

    /// A request's failure as its answer: its wire code, message and the device's status (any
    /// other error: `invalid-request` with its description).
    static func answer(for error: any Error) -> [String: JSON] {
        guard let error = error as? RequestError else { return ["ok": false, "error": "invalid-request", "message": .string("\(error)")] }
        var answer: [String: JSON] = ["ok": false, "error": .string(error.code), "message": .string(error.message)]
        if let status = error.status { answer["status"] = .int(status.rawValue) }
        return answer
    }
}

/// Why a ``Client`` operation failed.
public struct ClientError: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        case notConnected
        case stopped
        case alreadyStarted
        case refused(code: Int32, reason: String)
        case subscriptionRefused([Refusal])
        case invalidProperty(String)
        case publishRefused(topic: String, code: Int32)
        case library(function: String, code: Int32, message: String)
    }

    /// A filter the broker refused, with its reason code.
    struct Refusal: Equatable {
        let filter: String
        let code: Int32
    }

    let kind: Kind

    init(_ kind: Kind) {
        self.kind = kind
    }

    /// The client is not connected and the operation cannot be queued (QoS 0 publish).
    public static let notConnected = ClientError(.notConnected)
    /// The client has stopped; the operation will never complete.
    public static let stopped = ClientError(.stopped)

    /// Whether the broker refused this client's credentials or authorisation: retrying with the
    /// same settings cannot succeed.
    public var isAuthenticationFailure: Bool {
        if case .refused(let code, _) = kind { return ConnackCode.isAuthenticationFailure(code) }
        return false
    }

    /// The MQTT reason code (or MQTT 3.1.1 return code) the broker answered with, when it refused
    /// something; for several refused subscriptions, the first one's.
    public var reasonCode: Int32? {
        switch kind {
        case .refused(let code, _), .publishRefused(_, let code): return code
        case .subscriptionRefused(let refusals): return refusals.first?.code
        default: return nil
        }
    }

    /// Whether the broker refused the connection for a reason retrying cannot fix.
    public var isConnectionRefusal: Bool {
        if case .refused = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .notConnected:
            return "not connected to the broker"
        case .stopped:
            return "the MQTT client has stopped"
        case .alreadyStarted:
            return "run() was already called on this client; make a new client to connect again"
        case .refused(let code, let reason):
            return "the broker refused the connection: \(reason) (reason code \(code))"
        case .subscriptionRefused(let refusals):
            let list = refusals.map { "\"\($0.filter)\" (reason code \($0.code))" }.joined(separator: ", ")
            return "the broker refused the subscription to \(list)"
        case .publishRefused(let topic, let code):
            return "the broker refused the message to \"\(topic)\" (reason code \(code))"
        case .invalidProperty(let problem):
            return "invalid MQTT 5 property: \(problem)"
        case .library(let function, let code, let message):
            return "\(function) failed: \(message) (libmosquitto error \(code))"
        }
    }
}

/// CONNACK return codes (MQTT 3.1.1) and reason codes (MQTT 5) that matter to the client.
enum ConnackCode {
    /// Codes after which retrying with the same settings is pointless.
    static func isFatal(_ code: Int32) -> Bool {
        switch code {
        case 1, 2, 4, 5: return true // 3.1.1: protocol, identifier, credentials, not authorised
        case 0x84, 0x85, 0x86, 0x87, 0x8A, 0x8C: return true // 5: version, client id, credentials, not authorised, banned, auth method
        default: return false
        }
    }

    static func isAuthenticationFailure(_ code: Int32) -> Bool {
        [4, 5, 0x86, 0x87, 0x8C].contains(code)
    }
}

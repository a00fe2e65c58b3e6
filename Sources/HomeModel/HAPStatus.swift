/// HomeKit Accessory Protocol status codes, as they appear on the wire and in acknowledgements.
public enum HAPStatus: Int, Sendable, CaseIterable, Codable {
    case success = 0
    case insufficientPrivileges = -70401
    /// Also: the accessory is unreachable.
    case communicationFailure = -70402
    case busy = -70403
    case readOnly = -70404
    case writeOnly = -70405
    case notificationNotSupported = -70406
    case outOfResources = -70407
    case timedOut = -70408
    case noSuchResource = -70409
    case invalidValue = -70410
    case insufficientAuthorization = -70411
    case notAllowedInCurrentState = -70412

    /// The kebab-case name used in acknowledgements (`"error": "invalid-value"`).
    public var name: String {
        switch self {
        case .success: return "success"
        case .insufficientPrivileges: return "insufficient-privileges"
        case .communicationFailure: return "communication-failure"
        case .busy: return "busy"
        case .readOnly: return "read-only"
        case .writeOnly: return "write-only"
        case .notificationNotSupported: return "notification-not-supported"
        case .outOfResources: return "out-of-resources"
        case .timedOut: return "timed-out"
        case .noSuchResource: return "no-such-resource"
        case .invalidValue: return "invalid-value"
        case .insufficientAuthorization: return "insufficient-authorization"
        case .notAllowedInCurrentState: return "not-allowed-in-current-state"
        }
    }
}

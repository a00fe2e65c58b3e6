/// The status codes of the HomeKit Accessory Protocol, as accessories send them in
/// `/characteristics` responses and as HomeGate's acknowledgements carry them.
///
/// One table for the whole gateway: the HAP client reads them off the wire, the home model
/// refuses values with them, the drivers fail with them and the engine acknowledges with them.
public enum HAPStatus: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// The request succeeded.
    case success = 0
    /// The request was denied for insufficient privileges (an admin pairing is needed).
    case insufficientPrivileges = -70401
    /// The accessory could not be reached, or could not reach the device behind it.
    case communicationFailure = -70402
    /// The resource is busy; try again.
    case busy = -70403
    /// A write to a read-only characteristic.
    case readOnly = -70404
    /// A read of a write-only characteristic.
    case writeOnly = -70405
    /// The characteristic does not support notifications.
    case notificationNotSupported = -70406
    /// The accessory is out of resources to process the request.
    case outOfResources = -70407
    /// The operation timed out.
    case timedOut = -70408
    /// The accessory, service or characteristic does not exist.
    case noSuchResource = -70409
    /// The value is not valid for the characteristic.
    case invalidValue = -70410
    /// The write needs additional authorization data.
    case insufficientAuthorization = -70411
    /// The operation is not allowed in the accessory's current state.
    case notAllowedInCurrentState = -70412

    /// The kebab-case name acknowledgements carry (`"error": "invalid-value"`).
    public var name: String {
        switch self {
        case .success: "success"
        case .insufficientPrivileges: "insufficient-privileges"
        case .communicationFailure: "communication-failure"
        case .busy: "busy"
        case .readOnly: "read-only"
        case .writeOnly: "write-only"
        case .notificationNotSupported: "notification-not-supported"
        case .outOfResources: "out-of-resources"
        case .timedOut: "timed-out"
        case .noSuchResource: "no-such-resource"
        case .invalidValue: "invalid-value"
        case .insufficientAuthorization: "insufficient-authorization"
        case .notAllowedInCurrentState: "not-allowed-in-current-state"
        }
    }

    /// A short sentence for logs and messages.
    public var description: String {
        switch self {
        case .success: "success"
        case .insufficientPrivileges: "insufficient privileges (an admin pairing is required)"
        case .communicationFailure: "the accessory could not communicate with the device"
        case .busy: "the resource is busy, try again"
        case .readOnly: "the characteristic is read-only"
        case .writeOnly: "the characteristic is write-only"
        case .notificationNotSupported: "the characteristic does not support notifications"
        case .outOfResources: "the accessory is out of resources"
        case .timedOut: "the operation timed out"
        case .noSuchResource: "the accessory or characteristic does not exist"
        case .invalidValue: "the value is not valid for the characteristic"
        case .insufficientAuthorization: "insufficient authorization"
        case .notAllowedInCurrentState: "the operation is not allowed in the current state"
        }
    }
}

/// The status codes of HAP's `/characteristics` responses (the `status` of each entry).
public enum HAPStatusCode: Int, Sendable, CustomStringConvertible {
    /// The request succeeded.
    case success = 0
    /// The request was denied for insufficient privileges (an admin pairing is needed).
    case insufficientPrivileges = -70401
    /// The accessory could not reach the device behind it (a bridged accessory is offline).
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
    /// The accessory or characteristic does not exist.
    case resourceDoesNotExist = -70409
    /// The value is not valid for the characteristic.
    case invalidValue = -70410
    /// The write needs additional authorization data.
    case insufficientAuthorization = -70411
    /// The operation is not allowed in the accessory's current state.
    case notAllowedInCurrentState = -70412

    /// A short sentence for logs and error messages.
    public var description: String {
        switch self {
        case .success: return "success"
        case .insufficientPrivileges: return "insufficient privileges (an admin pairing is required)"
        case .communicationFailure: return "the accessory could not communicate with the device"
        case .busy: return "the resource is busy, try again"
        case .readOnly: return "the characteristic is read-only"
        case .writeOnly: return "the characteristic is write-only"
        case .notificationNotSupported: return "the characteristic does not support notifications"
        case .outOfResources: return "the accessory is out of resources"
        case .timedOut: return "the operation timed out"
        case .resourceDoesNotExist: return "the accessory or characteristic does not exist"
        case .invalidValue: return "the value is not valid for the characteristic"
        case .insufficientAuthorization: return "insufficient authorization"
        case .notAllowedInCurrentState: return "the operation is not allowed in the current state"
        }
    }
}

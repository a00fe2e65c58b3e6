/// What went wrong talking to the Matter Server: the one error of this module.
public enum ServerError: Error, Hashable, CustomStringConvertible {
    /// No connection: the server could not be reached, or the connection ended.
    case unreachable(String)
    /// The server speaks an API version this client does not (``ServerInfo/isCompatible``).
    case incompatible(ServerInfo)
    /// The server sent something this client cannot read.
    case malformed(String)
    /// The server answered a command with an error.
    case refused(ErrorCode, String)
    /// No answer in time.
    case timedOut(String)

    /// The server's error codes (`matter_server/common/errors.py`).
    public enum ErrorCode: Int, Sendable, Hashable, CustomStringConvertible {
        case unknown = 0
        case nodeCommissionFailed = 1
        case nodeInterviewFailed = 2
        case nodeNotReady = 3
        case nodeNotResolving = 4
        case nodeNotExists = 5
        case versionMismatch = 6
        case sdkStackError = 7
        case invalidArguments = 8
        case invalidCommand = 9
        case updateCheckError = 10
        case updateError = 11

        public var description: String {
            switch self {
            case .unknown: "error"
            case .nodeCommissionFailed: "commissioning failed"
            case .nodeInterviewFailed: "the interview of the node failed"
            case .nodeNotReady: "the node is not available"
            case .nodeNotResolving: "the node cannot be reached (no CASE session)"
            case .nodeNotExists: "no such node"
            case .versionMismatch: "version mismatch"
            case .sdkStackError: "the Matter stack reported an error"
            case .invalidArguments: "invalid arguments"
            case .invalidCommand: "unknown command"
            case .updateCheckError: "update check failed"
            case .updateError: "update failed"
            }
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): "the Matter Server cannot be reached: \(reason)"
        case .incompatible(let info):
            "the Matter Server speaks API schema \(info.schemaVersion) (clients of \(info.minimumSupportedSchemaVersion) and later); "
                + "HomeGate speaks schema \(ServerInfo.clientSchemaVersion): update \(info.schemaVersion < ServerInfo.clientSchemaVersion ? "the Matter Server" : "HomeGate")"
        case .malformed(let reason): "the Matter Server sent something unreadable: \(reason)"
        case .refused(let code, let details): details.isEmpty ? "the Matter Server: \(code)" : "the Matter Server: \(code): \(details)"
        case .timedOut(let what): "the Matter Server did not answer \(what) in time"
        }
    }
}

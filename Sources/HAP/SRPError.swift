/// An SRP exchange that must be abandoned because the server's values are unsafe.
public struct SRPError: Error, CustomStringConvertible, Equatable {
    enum Reason: Equatable {
        case serverKeyIsZeroModuloPrime
        case serverKeyTooLong(length: Int, limit: Int)
        case scramblerIsZero
    }

    let reason: Reason

    /// Names what is wrong.
    public var description: String {
        switch reason {
        case .serverKeyIsZeroModuloPrime:
            return "the server's SRP public key B is 0 modulo N"
        case .serverKeyTooLong(let length, let limit):
            return "the server's SRP public key B has \(length) bytes, the group allows \(limit)"
        case .scramblerIsZero:
            return "the SRP scrambling parameter u = H(PAD(A) | PAD(B)) is 0"
        }
    }
}

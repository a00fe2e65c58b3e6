/// The client's side of a finished SRP exchange.
public struct SRPProof: Sendable {
    /// The client's proof `M1`, sent to the server (pair-setup M3).
    public let proof: [UInt8]
    /// The shared session key `K = H(S)` (see ``SRPClient`` for the exact bytes hashed).
    public let sessionKey: [UInt8]
    /// The server's proof `M2 = H(PAD(A) | M1 | K)` that the server must answer with (M4).
    public let expectedServerProof: [UInt8]

    /// Whether `serverProof` is ``expectedServerProof``, compared in constant time.
    public func isValid(serverProof: [UInt8]) -> Bool {
        guard serverProof.count == expectedServerProof.count else { return false }
        var difference: UInt8 = 0
        for (ours, theirs) in zip(expectedServerProof, serverProof) {
            difference |= ours ^ theirs
        }
        return difference == 0
    }
}

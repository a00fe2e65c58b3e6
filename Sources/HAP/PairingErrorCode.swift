/// The error codes an accessory returns in a ``TLVType/error`` item during pairing.
public enum PairingErrorCode: UInt8, Sendable, CustomStringConvertible {
    /// A generic error.
    case unknown = 1
    /// The setup code or a signature did not verify.
    case authentication = 2
    /// The client must wait the ``TLVType/retryDelay`` seconds before trying again.
    case backoff = 3
    /// The accessory cannot accept any more pairings.
    case maxPeers = 4
    /// The accessory reached its maximum number of authentication attempts.
    case maxTries = 5
    /// The accessory is already paired, or is not accepting pairings.
    case unavailable = 6
    /// The accessory is busy with another pairing.
    case busy = 7

    /// A sentence a person can act on, ending with the code's name in parentheses.
    public var description: String {
        switch self {
        case .unknown:
            return "the accessory reported an unspecified pairing error (unknown)"
        case .authentication:
            return "the accessory refused the setup code or the signature (authentication)"
        case .backoff:
            return "the accessory asks to wait before the next pairing attempt (backoff)"
        case .maxPeers:
            return "the accessory cannot store any more pairings (maxPeers)"
        case .maxTries:
            return "the accessory refuses pairing after too many failed attempts; reset it (maxTries)"
        case .unavailable:
            return "the accessory is already paired with another controller or not accepting pairings "
                + "(unavailable)"
        case .busy:
            return "the accessory is busy pairing with another controller (busy)"
        }
    }
}

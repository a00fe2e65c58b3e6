import Wire
/// Why a HAP operation failed, with a message a person understands.
///
/// ``kind`` tells the category (a caller maps it to a HAP status for its own users);
/// ``pairingError`` and ``status`` carry the accessory's own codes when it sent one.
public struct HAPError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: Sendable, Hashable {
        /// The TCP connection could not be made, or it closed.
        case connection
        /// The accessory did not answer in time.
        case timeout
        /// The accessory answered something that does not follow the protocol.
        case malformed
        /// A pairing step failed: the accessory sent a TLV error, or a signature or proof did not check.
        case pairing
        /// The accessory answered a request with an HTTP or HAP status that is not success.
        case status
        /// The operation needs a state the connection is not in (not verified, already verified).
        case state
    }

    public let kind: Kind
    public let message: String
    /// The accessory's TLV error, for ``Kind/pairing`` failures it reported.
    public let pairingError: PairingErrorCode?
    /// The accessory's HAP status, for ``Kind/status`` failures it reported.
    public let status: HAPStatus?

    public init(_ kind: Kind, _ message: String, pairingError: PairingErrorCode? = nil, status: HAPStatus? = nil) {
        self.kind = kind
        self.message = message
        self.pairingError = pairingError
        self.status = status
    }

    public var description: String { message }
}

/// A TLV8 byte string that cannot be decoded.
public struct TLVError: Error, CustomStringConvertible, Equatable {
    enum Reason: Equatable {
        case truncatedHeader(offset: Int)
        case truncatedValue(type: UInt8, offset: Int, declared: Int, available: Int)
        /// Well-formed TLV8 without a field the message must have.
        case missing(String)
    }

    let reason: Reason

    init(reason: Reason) {
        self.reason = reason
    }

    /// Well-formed TLV8 without a field the message must have (named in words).
    public static func missing(_ field: String) -> TLVError {
        TLVError(reason: .missing(field))
    }

    /// The byte offset at which decoding stopped.
    public var offset: Int {
        switch reason {
        case .truncatedHeader(let offset), .truncatedValue(_, let offset, _, _):
            return offset
        case .missing:
            return 0
        }
    }

    /// Names what is wrong and where.
    public var description: String {
        switch reason {
        case .truncatedHeader(let offset):
            return "TLV8 truncated at byte \(offset): an item header needs 2 bytes, 1 is left"
        case .truncatedValue(let type, let offset, let declared, let available):
            return "TLV8 truncated at byte \(offset): item of type \(type) declares \(declared) "
                + "value bytes, \(available) are left"
        case .missing(let field):
            return "TLV8 without \(field)"
        }
    }
}

/// A TLV8 byte string that cannot be decoded.
public struct TLVError: Error, CustomStringConvertible, Equatable {
    enum Reason: Equatable {
        case truncatedHeader(offset: Int)
        case truncatedValue(type: UInt8, offset: Int, declared: Int, available: Int)
    }

    let reason: Reason

    /// The byte offset at which decoding stopped.
    public var offset: Int {
        switch reason {
        case .truncatedHeader(let offset), .truncatedValue(_, let offset, _, _):
            return offset
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
        }
    }
}

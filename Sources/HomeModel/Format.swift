/// A characteristic's value format, as HAP names it.
public enum Format: String, Sendable, CaseIterable {
    case bool, uint8, uint16, uint32, uint64, int, float, string, tlv8, data

    /// The range the format itself allows, for integer formats.
    public var integerRange: ClosedRange<Double>? {
        switch self {
        case .uint8: return 0...Double(UInt8.max)
        case .uint16: return 0...Double(UInt16.max)
        case .uint32: return 0...Double(UInt32.max)
        case .uint64: return 0...Double(UInt64.max)
        case .int: return Double(Int32.min)...Double(Int32.max)
        default: return nil
        }
    }

    /// Whether values are numbers.
    public var isNumeric: Bool {
        integerRange != nil || self == .float
    }
}

/// A characteristic permission, as HAP names it.
public enum Permission: String, Sendable, CaseIterable, Comparable {
    /// Paired read.
    case read = "pr"
    /// Paired write.
    case write = "pw"
    /// Events (notifications).
    case events = "ev"
    /// Additional authorization.
    case additionalAuthorization = "aa"
    /// Timed write.
    case timedWrite = "tw"
    /// Hidden from users.
    case hidden = "hd"
    /// Write response.
    case writeResponse = "wr"

    public static func < (lhs: Permission, rhs: Permission) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

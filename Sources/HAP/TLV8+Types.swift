import Wire

/// TLV8 with the pairing messages' types (``TLVType``).
extension TLV8 {
    /// A list of the given items, in order.
    public init(_ items: [(TLVType, [UInt8])]) {
        self.init()
        self.items = items.map { Item(type: $0.0.rawValue, value: $0.1) }
    }

    /// Appends an item.
    public mutating func append(_ type: TLVType, _ value: [UInt8]) {
        items.append(Item(type: type.rawValue, value: value))
    }

    /// Appends a one-byte item, such as ``TLVType/state`` or ``TLVType/method``.
    public mutating func append(_ type: TLVType, byte: UInt8) {
        items.append(Item(type: type.rawValue, value: [byte]))
    }

    /// The value of the first item of `type`, or `nil` when there is none.
    public subscript(type: TLVType) -> [UInt8]? {
        self[raw: type.rawValue]
    }

    /// The value of the first item of `type` when it is exactly one byte long.
    public func byte(_ type: TLVType) -> UInt8? {
        guard let value = self[type], value.count == 1 else { return nil }
        return value[0]
    }

    /// The records of a list, cut at each item of `type` (the separators themselves are dropped).
    public func split(separatedBy type: TLVType = .separator) -> [TLV8] {
        split(separatedBy: type.rawValue)
    }
}

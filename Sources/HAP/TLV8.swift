/// HAP's type-length-value encoding: an ordered list of items, each a type byte, a length byte
/// and up to 255 value bytes.
///
/// Values longer than 255 bytes travel as consecutive items of the same type, which decoding joins
/// back into one. Two different values of the same type must therefore never follow each other
/// directly; HAP puts a ``TLVType/separator`` item between them (as in the `/pairings` list).
public struct TLV8: Sendable, Equatable {
    /// One decoded item. Its value may be longer than 255 bytes; ``TLV8/encoded()`` fragments it.
    public struct Item: Sendable, Equatable {
        /// The raw type byte (see ``TLVType``).
        public var type: UInt8
        /// The whole value, already joined from its fragments.
        public var value: [UInt8]

        /// An item of a raw type byte.
        public init(type: UInt8, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    /// The items in wire order.
    public var items: [Item]

    /// An empty list.
    public init() {
        items = []
    }

    /// A list of the given items, in order.
    public init(_ items: [(TLVType, [UInt8])]) {
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
        items.first { $0.type == type.rawValue }?.value
    }

    /// The value of the first item of `type` when it is exactly one byte long.
    public func byte(_ type: TLVType) -> UInt8? {
        guard let value = self[type], value.count == 1 else { return nil }
        return value[0]
    }

    /// The records of a list, cut at each item of `type` (the separators themselves are dropped).
    ///
    /// Empty records (two separators in a row, or a trailing separator) are left out.
    public func split(separatedBy type: TLVType = .separator) -> [TLV8] {
        var records: [TLV8] = []
        var current = TLV8()
        for item in items {
            if item.type == type.rawValue {
                if !current.items.isEmpty { records.append(current) }
                current = TLV8()
            } else {
                current.items.append(item)
            }
        }
        if !current.items.isEmpty { records.append(current) }
        return records
    }
}

extension TLV8 {
    /// The wire bytes: each value in fragments of at most 255 bytes, an empty value as one item
    /// of length 0.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(items.reduce(0) { $0 + $1.value.count + 2 * ($1.value.count / 255 + 1) })
        for item in items {
            Self.encode(item, into: &bytes)
        }
        return bytes
    }

    private static func encode(_ item: Item, into bytes: inout [UInt8]) {
        var start = item.value.startIndex
        repeat {
            let end = min(start + 255, item.value.endIndex)
            bytes.append(item.type)
            bytes.append(UInt8(end - start))
            bytes.append(contentsOf: item.value[start..<end])
            start = end
        } while start < item.value.endIndex
    }

    /// Decodes wire bytes, joining consecutive items of the same type into one value.
    ///
    /// - Throws: ``TLVError`` when the bytes end inside an item's header or value.
    public init(decoding bytes: some Collection<UInt8>) throws(TLVError) {
        let bytes = Array(bytes)
        var items: [Item] = []
        var offset = 0
        while offset < bytes.count {
            guard offset + 2 <= bytes.count else {
                throw TLVError(reason: .truncatedHeader(offset: offset))
            }
            let type = bytes[offset]
            let length = Int(bytes[offset + 1])
            let available = bytes.count - offset - 2
            guard length <= available else {
                throw TLVError(reason: .truncatedValue(
                    type: type, offset: offset, declared: length, available: available))
            }
            let value = bytes[(offset + 2)..<(offset + 2 + length)]
            if let last = items.indices.last, items[last].type == type {
                items[last].value.append(contentsOf: value)
            } else {
                items.append(Item(type: type, value: Array(value)))
            }
            offset += 2 + length
        }
        self.items = items
    }
}

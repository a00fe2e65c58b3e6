/// HomeKit's type-length-value encoding: an ordered list of items, each a type byte, a length byte
/// and up to 255 value bytes.
///
/// Values longer than 255 bytes travel as consecutive items of the same type, which decoding joins
/// back into one. Two different values of the same type must therefore never follow each other
/// directly; HAP puts a ``TLVType/separator`` item between them (as in the `/pairings` list).
public struct TLV8: Sendable, Equatable {
    /// One decoded item. Its value may be longer than 255 bytes; ``TLV8/encoded()`` fragments it.
    public struct Item: Sendable, Equatable {
        /// The raw type byte (the pairing messages' types are HAP's `TLVType`).
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

    /// Appends an item of a raw type byte.
    public mutating func append(raw type: UInt8, _ value: [UInt8]) {
        items.append(Item(type: type, value: value))
    }

    /// The value of the first item of a raw type byte, or `nil` when there is none.
    public subscript(raw type: UInt8) -> [UInt8]? {
        items.first { $0.type == type }?.value
    }

    /// The values of every item of a raw type byte, in order: the entries of a list whose
    /// entries are parted by empty items of type 0 (Adaptive Lighting's curve).
    public func records(of type: UInt8) -> [[UInt8]] {
        items.filter { $0.type == type }.map(\.value)
    }

    /// The records of a list, cut at each item of `type` (the separators themselves are dropped).
    ///
    /// Empty records (two separators in a row, or a trailing separator) are left out.
    public func split(separatedBy type: UInt8) -> [TLV8] {
        var records: [TLV8] = []
        var current = TLV8()
        for item in items {
            if item.type == type {
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

import Wire

/// The accessory database as HAP over CoAP sends it (opcode 0x09): nested TLV8 instead of JSON.
///
/// Accessories (item 0x18, a list of 0x19 records), each with its instance id (0x1A) and
/// services (0x16, a list of 0x15 records); a service has its type (0x06: Apple's short form as
/// a little-endian number, or a whole UUID as a 128-bit little-endian number), instance id (0x07), properties (0x0F: primary, hidden), linked services
/// (0x10) and characteristics (0x14, a list of 0x13 records); a characteristic has its type
/// (0x04), instance id (0x05), properties (0x0A, the permission bits), presentation format (0x0C:
/// format, exponent, unit, namespace, description), valid range (0x0D), step (0x0E), valid values
/// (0x11) and valid value ranges (0x12). Lists separate their records with an empty 0x00 item.
struct GATTDatabase: Sendable {
    let accessories: [AccessoryDescription]
    /// Each characteristic's binary format, by address.
    let formats: [CharacteristicAddress: GATTFormat]
    /// What was odd in it and what was done about it.
    let warnings: [String]

    private enum Item: UInt8 {
        case characteristicType = 0x04
        case characteristicIID = 0x05
        case serviceType = 0x06
        case serviceIID = 0x07
        case characteristicProperties = 0x0A
        case userDescription = 0x0B
        case presentationFormat = 0x0C
        case validRange = 0x0D
        case step = 0x0E
        case serviceProperties = 0x0F
        case linkedServices = 0x10
        case validValues = 0x11
        case validValuesRange = 0x12
        case characteristic = 0x13
        case characteristics = 0x14
        case service = 0x15
        case services = 0x16
        case accessories = 0x18
        case accessory = 0x19
        case accessoryIID = 0x1A
    }

    /// The permission bits of a characteristic's properties, with HAP over IP's names.
    private static let permissionBits: [(UInt16, String)] = [
        (0x0010, "pr"), (0x0020, "pw"), (0x0080, "ev"), (0x0004, "aa"), (0x0008, "tw"), (0x0040, "hd"),
    ]

    /// Reads the database; an accessory, service or characteristic that cannot be used is skipped
    /// with a warning, as for HAP over IP.
    /// - Throws: ``HAPError`` (malformed) when it is not TLV8 or has no accessories.
    init(decoding bytes: [UInt8]) throws(HAPError) {
        var warnings: [String] = []
        var formats: [CharacteristicAddress: GATTFormat] = [:]
        let top = try Self.tlv(bytes, "the database")
        guard let list = Self.first(.accessories, in: top) else { throw HAPError(.malformed, "the CoAP accessory database has no accessories (item 0x18)") }
        var accessories: [AccessoryDescription] = []
        for record in try Self.records(.accessory, in: list, "the accessories") {
            if let accessory = try Self.accessory(record, formats: &formats, warnings: &warnings) { accessories.append(accessory) }
        }
        guard !accessories.isEmpty else { throw HAPError(.malformed, "the CoAP accessory database lists no usable accessory") }
        self.accessories = accessories
        self.formats = formats
        self.warnings = warnings
    }

    private static func accessory(_ bytes: [UInt8], formats: inout [CharacteristicAddress: GATTFormat], warnings: inout [String]) throws(HAPError) -> AccessoryDescription? {
        let tlv = try tlv(bytes, "an accessory")
        guard let aid = first(.accessoryIID, in: tlv).flatMap(integer) else {
            warnings.append("an accessory without an instance id (0x1A) is skipped")
            return nil
        }
        var services: [ServiceDescription] = []
        for record in try records(.service, in: first(.services, in: tlv) ?? [], "accessory \(aid)'s services") {
            if let service = try service(record, aid: aid, formats: &formats, warnings: &warnings) { services.append(service) }
        }
        return AccessoryDescription(aid: aid, services: services)
    }

    private static func service(_ bytes: [UInt8], aid: Int, formats: inout [CharacteristicAddress: GATTFormat], warnings: inout [String]) throws(HAPError) -> ServiceDescription? {
        let tlv = try tlv(bytes, "a service of accessory \(aid)")
        guard let iid = first(.serviceIID, in: tlv).flatMap(integer), let type = first(.serviceType, in: tlv).flatMap(uuid) else {
            warnings.append("accessory \(aid): a service without a usable type or instance id is skipped")
            return nil
        }
        let properties = first(.serviceProperties, in: tlv).flatMap(integer) ?? 0
        var characteristics: [CharacteristicDescription] = []
        for record in try records(.characteristic, in: first(.characteristics, in: tlv) ?? [], "service \(iid)'s characteristics") {
            if let (characteristic, format) = try characteristic(record, aid: aid, service: iid, warnings: &warnings) {
                characteristics.append(characteristic)
                if let format { formats[CharacteristicAddress(aid: aid, iid: characteristic.iid)] = format }
            }
        }
        return ServiceDescription(iid: iid, type: type, isPrimary: properties & 0x01 != 0, isHidden: properties & 0x02 != 0,
                                  linked: linked(first(.linkedServices, in: tlv) ?? []), characteristics: characteristics)
    }

    private static func characteristic(_ bytes: [UInt8], aid: Int, service: Int, warnings: inout [String]) throws(HAPError) -> (CharacteristicDescription, GATTFormat?)? {
        let tlv = try tlv(bytes, "a characteristic of service \(service)")
        guard let iid = first(.characteristicIID, in: tlv).flatMap(integer), let type = first(.characteristicType, in: tlv).flatMap(uuid) else {
            warnings.append("accessory \(aid): a characteristic of service \(service) without a usable type or instance id is skipped")
            return nil
        }
        let presentation = first(.presentationFormat, in: tlv) ?? []
        let format = presentation.first.flatMap(GATTFormat.init(rawValue:))
        // Without a presentation format (HAP over IP's format-less vendor characteristics, served
        // over CoAP), or with one HAP does not know, the value is its bytes: `data`, as aiohomekit
        // passes such a value on as the bytes it read.
        if !presentation.isEmpty, format == nil {
            warnings.append("accessory \(aid): characteristic \(iid) has the unknown format 0x\(String(presentation[0], radix: 16)); its values pass as data")
        }
        let unit = presentation.count >= 4 ? GATTFormat.unitName(UInt16(presentation[2]) | UInt16(presentation[3]) << 8) : nil
        let properties = first(.characteristicProperties, in: tlv).flatMap(integer) ?? 0
        let perms = permissionBits.filter { properties & Int($0.0) != 0 }.map(\.1)
        let range = first(.validRange, in: tlv).flatMap { bounds($0, format: format) }
        return (CharacteristicDescription(
            iid: iid, type: type, format: format?.hapName ?? "data", perms: perms, value: nil, unit: unit,
            minValue: range?.0, maxValue: range?.1, minStep: first(.step, in: tlv).flatMap { format?.number(from: $0) }, maxLen: nil,
            validValues: first(.validValues, in: tlv).map { $0.map(Double.init) },
            validValuesRange: first(.validValuesRange, in: tlv).map { $0.map(Double.init) },
            description: first(.userDescription, in: tlv).map { String(decoding: $0, as: UTF8.self) }
        ), format ?? .data)
    }

    // MARK: - TLV helpers

    private static func tlv(_ bytes: [UInt8], _ what: String) throws(HAPError) -> TLV8 {
        do {
            return try TLV8(decoding: bytes)
        } catch {
            throw HAPError(.malformed, "the CoAP accessory database: \(what) is not TLV8 (\(error))")
        }
    }

    private static func first(_ item: Item, in tlv: TLV8) -> [UInt8]? {
        tlv.items.first { $0.type == item.rawValue }?.value
    }

    /// The values of the `item` records of a list (records separated by empty 0x00 items).
    private static func records(_ item: Item, in list: [UInt8], _ what: String) throws(HAPError) -> [[UInt8]] {
        try tlv(list, what).items.filter { $0.type == item.rawValue }.map(\.value)
    }

    /// A little-endian unsigned number of 1 to 8 bytes.
    private static func integer(_ bytes: [UInt8]) -> Int? {
        guard (1...8).contains(bytes.count) else { return nil }
        let value = bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(exactly: value)
    }

    /// A type as HAP's upper-case UUID text: Apple's types come as their short number
    /// little-endian in as few bytes as it takes (`3E` is the one byte `3e`), others as the 16
    /// bytes of the whole UUID as a little-endian number.
    private static func uuid(_ bytes: [UInt8]) -> String? {
        if (1...4).contains(bytes.count) {
            let short = bytes.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return AccessoryDescription.fullUUID(String(short, radix: 16, uppercase: true))
        }
        guard bytes.count == 16 else { return nil }
        let hex = bytes.reversed().map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
        let groups = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return groups.joined(separator: "-")
    }

    /// Linked services: little-endian 16-bit instance ids, one after another.
    private static func linked(_ bytes: [UInt8]) -> [Int] {
        stride(from: 0, to: bytes.count - 1, by: 2).map { Int(bytes[$0]) | Int(bytes[$0 + 1]) << 8 }
    }

    /// A valid range: the minimum and maximum, each in the characteristic's own format.
    private static func bounds(_ bytes: [UInt8], format: GATTFormat?) -> (Double, Double)? {
        guard let format, let width = format.width, bytes.count == 2 * width,
              let low = format.number(from: Array(bytes[..<width])), let high = format.number(from: Array(bytes[width...])) else { return nil }
        return (low, high)
    }
}

private extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

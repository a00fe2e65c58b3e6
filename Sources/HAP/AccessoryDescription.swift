import Wire
/// An accessory as `GET /accessories` describes it: instance id and services.
public struct AccessoryDescription: Sendable, Hashable {
    public let aid: Int
    public let services: [ServiceDescription]

    public init(aid: Int, services: [ServiceDescription]) {
        self.aid = aid
        self.services = services
    }

    /// The characteristic of `type` (full UUID) in the service of `serviceType`, if any.
    public func characteristic(_ type: String, in serviceType: String) -> CharacteristicDescription? {
        services.first { $0.type == serviceType }?.characteristics.first { $0.type == type }
    }
}

/// A service of an accessory.
public struct ServiceDescription: Sendable, Hashable {
    public let iid: Int
    /// The type's full UUID, upper case (short forms are expanded).
    public let type: String
    public let isPrimary: Bool
    public let isHidden: Bool
    public let linked: [Int]
    public let characteristics: [CharacteristicDescription]
}

/// A characteristic with its metadata and (if readable) value, as the device described it: a
/// field the device left out is nil (the driver fills it from the catalog for known types).
public struct CharacteristicDescription: Sendable, Hashable {
    public let iid: Int
    /// The type's full UUID, upper case.
    public let type: String
    /// `bool`, `uint8`, ..., `float`, `string`, `tlv8`, `data`; nil when the device sent none.
    public let format: String?
    /// `pr`, `pw`, `ev`, `aa`, `tw`, `hd`, `wr`; nil when the device sent none.
    public let perms: [String]?
    public let value: JSON?
    public let unit: String?
    public let minValue: Double?
    public let maxValue: Double?
    public let minStep: Double?
    public let maxLen: Int?
    public let validValues: [Double]?
    public let validValuesRange: [Double]?
    public let description: String?
}

extension AccessoryDescription {
    /// The short form's suffix: `25` is `00000025-0000-1000-8000-0026BB765291`.
    static let baseUUIDSuffix = "-0000-1000-8000-0026BB765291"

    /// A full upper-case UUID from HAP's short or full form.
    public static func fullUUID(_ type: String) -> String {
        let upper = type.uppercased()
        if upper.count <= 8, upper.allSatisfy(\.isHexDigit) {
            return String(repeating: "0", count: 8 - upper.count) + upper + baseUUIDSuffix
        }
        return upper
    }

    /// Parses a `GET /accessories` body.
    /// - Throws: ``HAPError`` (malformed) when it is not JSON or has no `accessories` list.
    public static func parse(_ body: [UInt8]) throws(HAPError) -> [AccessoryDescription] {
        try parseReporting(body).accessories
    }

    /// A database as real devices send it: parsed leniently (see ``parseReporting(_:)``).
    public struct Parsed: Sendable {
        public let accessories: [AccessoryDescription]
        /// What was odd and what was done about it, one sentence each.
        public let warnings: [String]
    }

    /// Parses a `GET /accessories` body the way real devices send it: an accessory, service or
    /// characteristic that cannot be used (no aid, iid or type; an id beyond 64 bits; a second
    /// use of an iid) is skipped with a warning and the rest of the device is kept; fields a
    /// device leaves out (format, perms) stay nil for the driver to fill from the catalog.
    /// - Throws: ``HAPError`` (malformed) only when the body is not JSON or has no `accessories` list.
    public static func parseReporting(_ body: [UInt8]) throws(HAPError) -> Parsed {
        guard let accessories = try JSON.hapBody(body, "GET /accessories")["accessories"]?.array else {
            throw HAPError(.malformed, "GET /accessories: no \"accessories\" array")
        }
        var warnings: [String] = []
        var result: [AccessoryDescription] = []
        var seenAIDs: Set<Int> = []
        for (position, accessory) in accessories.enumerated() {
            guard let aid = identifier(accessory["aid"]) else {
                warnings.append("accessory #\(position + 1) has no usable aid (\(describe(accessory["aid"]))): skipped")
                continue
            }
            guard seenAIDs.insert(aid).inserted else {
                warnings.append("accessory \(aid) appears twice: the second is skipped")
                continue
            }
            guard let services = accessory["services"]?.array else {
                warnings.append("accessory \(aid) has no services list: skipped")
                continue
            }
            // Services and characteristics are addressed apart (HAP addresses characteristics by
            // aid.iid), so each keeps its own set: some devices (Eve) give a service and its Name
            // characteristic the same iid.
            var serviceIIDs: Set<Int> = []
            var characteristicIIDs: Set<Int> = []
            let parsed = services.enumerated().compactMap { index, service in
                parseService(service, position: index, aid: aid, serviceIIDs: &serviceIIDs, characteristicIIDs: &characteristicIIDs, warnings: &warnings)
            }
            result.append(AccessoryDescription(aid: aid, services: parsed))
        }
        return Parsed(accessories: result, warnings: warnings)
    }

    /// An aid or iid: a whole number from 1 to Int64.max (HAP allows 64-bit identifiers).
    private static func identifier(_ json: JSON?) -> Int? {
        guard let number = json?.int, number >= 1 else { return nil }
        return Int(exactly: number)
    }

    private static func describe(_ json: JSON?) -> String {
        json.map { String($0.text.prefix(40)) } ?? "none"
    }

    private static func parseService(_ json: JSON, position: Int, aid: Int, serviceIIDs: inout Set<Int>, characteristicIIDs: inout Set<Int>,
                                     warnings: inout [String]) -> ServiceDescription? {
        guard let iid = identifier(json["iid"]), let type = json["type"]?.string, !type.isEmpty else {
            warnings.append("accessory \(aid): service #\(position + 1) has no usable iid or type: skipped with its characteristics")
            return nil
        }
        guard serviceIIDs.insert(iid).inserted else {
            warnings.append("accessory \(aid): service iid \(iid) is used twice; the service \(type) with it is skipped")
            return nil
        }
        let characteristics = (json["characteristics"]?.array ?? []).enumerated().compactMap { index, characteristic in
            parseCharacteristic(characteristic, position: index, aid: aid, service: iid, iids: &characteristicIIDs, warnings: &warnings)
        }
        if json["characteristics"]?.array == nil { warnings.append("accessory \(aid): service \(iid) has no characteristics list") }
        return ServiceDescription(
            iid: iid, type: fullUUID(type), isPrimary: json["primary"]?.bool ?? false, isHidden: json["hidden"]?.bool ?? false,
            linked: json["linked"]?.array?.compactMap { identifier($0) } ?? [], characteristics: characteristics
        )
    }

    private static func parseCharacteristic(_ json: JSON, position: Int, aid: Int, service: Int, iids: inout Set<Int>,
                                            warnings: inout [String]) -> CharacteristicDescription? {
        guard let iid = identifier(json["iid"]), let type = json["type"]?.string, !type.isEmpty else {
            warnings.append("accessory \(aid): characteristic #\(position + 1) of service \(service) has no usable iid or type: skipped")
            return nil
        }
        guard iids.insert(iid).inserted else {
            warnings.append("accessory \(aid): characteristic iid \(iid) is used twice; the characteristic \(type) with it is skipped")
            return nil
        }
        return CharacteristicDescription(
            iid: iid, type: fullUUID(type), format: json["format"]?.string,
            perms: json["perms"]?.array.map { $0.compactMap(\.string) },
            value: json["value"].flatMap { $0 == .null ? nil : $0 },
            unit: json["unit"]?.string, minValue: json["minValue"]?.double, maxValue: json["maxValue"]?.double,
            minStep: json["minStep"]?.double, maxLen: json["maxLen"]?.int.flatMap { Int(exactly: $0) },
            validValues: json["valid-values"]?.array?.compactMap(\.double),
            validValuesRange: json["valid-values-range"]?.array?.compactMap(\.double),
            description: json["description"]?.string
        )
    }
}

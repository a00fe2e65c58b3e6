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

/// A characteristic with its metadata and (if readable) value.
public struct CharacteristicDescription: Sendable, Hashable {
    public let iid: Int
    /// The type's full UUID, upper case.
    public let type: String
    /// `bool`, `uint8`, ..., `float`, `string`, `tlv8`, `data`.
    public let format: String
    /// `pr`, `pw`, `ev`, `aa`, `tw`, `hd`, `wr`.
    public let perms: [String]
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
    /// - Throws: ``HAPError`` (malformed) naming what is missing.
    public static func parse(_ body: [UInt8]) throws(HAPError) -> [AccessoryDescription] {
        guard let accessories = try JSON.hapBody(body, "GET /accessories")["accessories"]?.array else {
            throw HAPError(.malformed, "GET /accessories: no \"accessories\" array")
        }
        var result: [AccessoryDescription] = []
        for accessory in accessories {
            guard let aid = accessory["aid"]?.int, let services = accessory["services"]?.array else {
                throw HAPError(.malformed, "GET /accessories: an accessory without aid or services")
            }
            result.append(AccessoryDescription(aid: Int(aid), services: try services.map { service throws(HAPError) in try parseService(service, aid: Int(aid)) }))
        }
        return result
    }

    private static func parseService(_ json: JSON, aid: Int) throws(HAPError) -> ServiceDescription {
        guard let iid = json["iid"]?.int, let type = json["type"]?.string, let characteristics = json["characteristics"]?.array else {
            throw HAPError(.malformed, "GET /accessories: accessory \(aid) has a service without iid, type or characteristics")
        }
        return ServiceDescription(
            iid: Int(iid), type: fullUUID(type), isPrimary: json["primary"]?.bool ?? false, isHidden: json["hidden"]?.bool ?? false,
            linked: json["linked"]?.array?.compactMap { $0.int.map(Int.init) } ?? [],
            characteristics: try characteristics.map { characteristic throws(HAPError) in try parseCharacteristic(characteristic, aid: aid) }
        )
    }

    private static func parseCharacteristic(_ json: JSON, aid: Int) throws(HAPError) -> CharacteristicDescription {
        guard let iid = json["iid"]?.int, let type = json["type"]?.string, let format = json["format"]?.string else {
            throw HAPError(.malformed, "GET /accessories: accessory \(aid) has a characteristic without iid, type or format")
        }
        return CharacteristicDescription(
            iid: Int(iid), type: fullUUID(type), format: format,
            perms: json["perms"]?.array?.compactMap(\.string) ?? [],
            value: json["value"].flatMap { $0 == .null ? nil : $0 },
            unit: json["unit"]?.string, minValue: json["minValue"]?.double, maxValue: json["maxValue"]?.double,
            minStep: json["minStep"]?.double, maxLen: json["maxLen"]?.int.map(Int.init),
            validValues: json["valid-values"]?.array?.compactMap(\.double),
            validValuesRange: json["valid-values-range"]?.array?.compactMap(\.double),
            description: json["description"]?.string
        )
    }
}

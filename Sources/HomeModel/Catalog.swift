import Foundation

/// A standard characteristic type from the HAP catalog.
public struct CharacteristicType: Sendable, Hashable, Codable {
    /// The canonical name: kebab-case, as in topics (`current-temperature`).
    public let name: String
    public let displayName: String
    /// The full 36-character upper-case UUID.
    public let uuid: String
    public let format: Format
    public let perms: [Permission]
    public let unit: String?
    public let minValue: Double?
    public let maxValue: Double?
    public let minStep: Double?
    public let maxLen: Int?
    /// Allowed values and their names (`0: unsecured`).
    public let validValues: [ValidValue]?
    public let validValuesRange: [Double]?
    /// An event, not a state: published, never retained (a programmable switch's press).
    public let momentary: Bool
    /// The definition every characteristic of this type built from the catalog shares.
    public let definition: Characteristic.Definition

    /// One allowed value and its name.
    public struct ValidValue: Sendable, Hashable, Codable {
        public let value: Double
        public let name: String
    }

    enum CodingKeys: String, CodingKey {
        case name, displayName, uuid, format, perms, unit, minValue, maxValue, minStep, maxLen, validValues, validValuesRange, momentary
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        displayName = try container.decode(String.self, forKey: .displayName)
        uuid = try container.decode(String.self, forKey: .uuid)
        format = try container.decode(Format.self, forKey: .format)
        perms = try container.decode([Permission].self, forKey: .perms)
        unit = try container.decodeIfPresent(String.self, forKey: .unit)
        minValue = try container.decodeIfPresent(Double.self, forKey: .minValue)
        maxValue = try container.decodeIfPresent(Double.self, forKey: .maxValue)
        minStep = try container.decodeIfPresent(Double.self, forKey: .minStep)
        maxLen = try container.decodeIfPresent(Int.self, forKey: .maxLen)
        let named = try container.decodeIfPresent([String: String].self, forKey: .validValues)
        validValues = try named.map { dictionary in
            try dictionary.map { key, name in
                guard let value = Double(key) else {
                    throw DecodingError.dataCorruptedError(forKey: .validValues, in: container, debugDescription: "valid value \(key) is not a number")
                }
                return ValidValue(value: value, name: name)
            }.sorted { $0.value < $1.value }
        }
        validValuesRange = try container.decodeIfPresent([Double].self, forKey: .validValuesRange)
        momentary = try container.decodeIfPresent(Bool.self, forKey: .momentary) ?? false
        definition = Characteristic.Definition(type: name, uuid: uuid, format: format, perms: perms, unit: unit, minValue: minValue,
                                               maxValue: maxValue, minStep: minStep, maxLen: maxLen, validValues: validValues?.map(\.value),
                                               validValuesRange: validValuesRange)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(uuid, forKey: .uuid)
        try container.encode(format, forKey: .format)
        try container.encode(perms, forKey: .perms)
        try container.encodeIfPresent(unit, forKey: .unit)
        try container.encodeIfPresent(minValue, forKey: .minValue)
        try container.encodeIfPresent(maxValue, forKey: .maxValue)
        try container.encodeIfPresent(minStep, forKey: .minStep)
        try container.encodeIfPresent(maxLen, forKey: .maxLen)
        if let validValues {
            let named = Dictionary(uniqueKeysWithValues: validValues.map { (Value.format($0.value), $0.name) })
            try container.encode(named, forKey: .validValues)
        }
        try container.encodeIfPresent(validValuesRange, forKey: .validValuesRange)
        if momentary { try container.encode(true, forKey: .momentary) }
    }
}

/// A standard service type from the HAP catalog.
public struct ServiceType: Sendable, Hashable, Codable {
    /// The canonical name: kebab-case, as in topics (`lightbulb`, `garage-door-opener`).
    public let name: String
    public let displayName: String
    public let uuid: String
    /// Characteristic type names every service of this type has.
    public let required: [String]
    /// Characteristic type names a service of this type may have.
    public let optional: [String]
    /// Never shown to users (protocol information).
    public let hidden: Bool

    enum CodingKeys: String, CodingKey {
        case name, displayName, uuid, required, optional, hidden
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        displayName = try container.decode(String.self, forKey: .displayName)
        uuid = try container.decode(String.self, forKey: .uuid)
        required = try container.decode([String].self, forKey: .required)
        optional = try container.decode([String].self, forKey: .optional)
        hidden = try container.decodeIfPresent(Bool.self, forKey: .hidden) ?? false
    }
}

/// A vendor's own characteristic type (Eve's power, ecobee's home target heat): what the catalog
/// knows of it, above all a readable name for its topic segment. Devices describe these types
/// themselves; the catalog fills in what they leave out.
public struct VendorCharacteristicType: Sendable, Hashable, Decodable {
    /// `eve`, `ecobee`, ...
    public let vendor: String
    /// The topic segment (`power`); not unique across vendors, never a configuration name.
    public let name: String
    public let displayName: String
    public let uuid: String
    public let format: Format?
    public let perms: [Permission]?
    public let unit: String?
    public let minValue: Double?
    public let maxValue: Double?
    public let minStep: Double?
    /// Allowed values and their names.
    public let validValues: [CharacteristicType.ValidValue]?

    enum CodingKeys: String, CodingKey {
        case vendor, name, displayName, uuid, format, perms, unit, minValue, maxValue, minStep, validValues
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        vendor = try container.decode(String.self, forKey: .vendor)
        name = try container.decode(String.self, forKey: .name)
        displayName = try container.decode(String.self, forKey: .displayName)
        uuid = try container.decode(String.self, forKey: .uuid)
        format = try container.decodeIfPresent(Format.self, forKey: .format)
        perms = try container.decodeIfPresent([Permission].self, forKey: .perms)
        unit = try container.decodeIfPresent(String.self, forKey: .unit)
        minValue = try container.decodeIfPresent(Double.self, forKey: .minValue)
        maxValue = try container.decodeIfPresent(Double.self, forKey: .maxValue)
        minStep = try container.decodeIfPresent(Double.self, forKey: .minStep)
        validValues = try container.decodeIfPresent([String: String].self, forKey: .validValues).map { named in
            named.compactMap { key, name in Double(key).map { CharacteristicType.ValidValue(value: $0, name: name) } }.sorted { $0.value < $1.value }
        }
    }
}

/// A vendor's own service type (Eve's history service).
public struct VendorServiceType: Sendable, Hashable, Decodable {
    public let vendor: String
    /// The topic segment.
    public let name: String
    public let displayName: String
    public let uuid: String
    /// Internal to the vendor's app: no topics.
    public let hidden: Bool

    enum CodingKeys: String, CodingKey {
        case vendor, name, displayName, uuid, hidden
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        vendor = try container.decode(String.self, forKey: .vendor)
        name = try container.decode(String.self, forKey: .name)
        displayName = try container.decode(String.self, forKey: .displayName)
        uuid = try container.decode(String.self, forKey: .uuid)
        hidden = try container.decodeIfPresent(Bool.self, forKey: .hidden) ?? false
    }
}

/// The catalog of Apple's standard HomeKit service and characteristic types, and of the vendor
/// types real devices use.
///
/// Its single source is `Sources/HomeModel/Catalog/hap-catalog.json`; the build embeds that file
/// (the `EmbedCatalog` plugin) and it is decoded once, on first use.
public struct Catalog: Sendable {
    public let characteristics: [CharacteristicType]
    public let services: [ServiceType]
    private let characteristicsByName: [String: CharacteristicType]
    private let characteristicsByUUID: [String: CharacteristicType]
    private let servicesByName: [String: ServiceType]
    private let servicesByUUID: [String: ServiceType]
    private let vendorCharacteristicsByUUID: [String: VendorCharacteristicType]
    /// The vendor characteristic types the catalog knows.
    public var vendorCharacteristicTypes: Dictionary<String, VendorCharacteristicType>.Values { vendorCharacteristicsByUUID.values }
    private let vendorServicesByUUID: [String: VendorServiceType]
    /// UUID suffix -> vendor, for custom types the catalog does not name.
    private let vendorBases: [(suffix: String, vendor: String)]

    /// The standard catalog.
    public static let standard: Catalog = {
        do {
            return try Catalog(json: Data(EmbeddedCatalog.json.utf8))
        } catch {
            // The file is checked by the tests; a build with a broken catalog must not run.
            fatalError("the embedded HAP catalog does not decode: \(error)")
        }
    }()

    /// Decodes a catalog file.
    public init(json: Data) throws {
        struct File: Decodable {
            struct Base: Decodable {
                let vendor: String
                let uuidSuffix: String
            }

            let characteristics: [CharacteristicType]
            let services: [ServiceType]
            let vendorCharacteristics: [VendorCharacteristicType]?
            let vendorServices: [VendorServiceType]?
            let vendorBases: [Base]?
        }
        let file = try JSONDecoder().decode(File.self, from: json)
        vendorCharacteristicsByUUID = Dictionary((file.vendorCharacteristics ?? []).map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        vendorServicesByUUID = Dictionary((file.vendorServices ?? []).map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        vendorBases = (file.vendorBases ?? []).map { ($0.uuidSuffix, $0.vendor) }
        characteristics = file.characteristics
        services = file.services
        characteristicsByName = Dictionary(file.characteristics.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        characteristicsByUUID = Dictionary(file.characteristics.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        servicesByName = Dictionary(file.services.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        servicesByUUID = Dictionary(file.services.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The characteristic type named `name` (`brightness`), or with that UUID (short or long;
    /// Apple's types under another base too, as HAA firmware sends them).
    public func characteristic(_ nameOrUUID: String) -> CharacteristicType? {
        characteristicsByName[nameOrUUID] ?? characteristicsByUUID[UUIDs.apple(UUIDs.expand(nameOrUUID))]
    }

    /// The service type named `name` (`lightbulb`), or with that UUID (short or long; Apple's
    /// types under another base too).
    public func service(_ nameOrUUID: String) -> ServiceType? {
        servicesByName[nameOrUUID] ?? servicesByUUID[UUIDs.apple(UUIDs.expand(nameOrUUID))]
    }

    /// The vendor characteristic type with this UUID.
    public func vendorCharacteristic(_ uuid: String) -> VendorCharacteristicType? {
        vendorCharacteristicsByUUID[uuid.uppercased()]
    }

    /// The vendor service type with this UUID.
    public func vendorService(_ uuid: String) -> VendorServiceType? {
        vendorServicesByUUID[uuid.uppercased()]
    }

    /// The vendor whose UUID base `uuid` has (`eve`), if the catalog knows it.
    public func vendor(ofUUID uuid: String) -> String? {
        let upper = uuid.uppercased()
        return vendorBases.first { upper.hasSuffix($0.suffix) }?.vendor
    }
}

/// HAP's UUID forms.
public enum UUIDs {
    /// The Apple base every standard type's UUID ends with.
    public static let appleSuffix = "-0000-1000-8000-0026BB765291"
    /// Other bases firmware uses for Apple's types (HAA: `...-0000-1000-8000-0026BB765292`).
    public static let appleSuffixAliases = ["-0000-1000-8000-0026BB765292"]

    /// A full upper-case UUID with an alias of Apple's base given Apple's own base.
    public static func apple(_ uuid: String) -> String {
        guard let alias = appleSuffixAliases.first(where: { uuid.hasSuffix($0) }) else { return uuid }
        return String(uuid.dropLast(alias.count)) + appleSuffix
    }

    /// `43` -> `00000043-0000-1000-8000-0026BB765291`; full UUIDs are upper-cased.
    public static func expand(_ text: String) -> String {
        let upper = text.uppercased()
        if upper.count <= 8, upper.allSatisfy(\.isHexDigit) {
            return String(repeating: "0", count: 8 - upper.count) + upper + appleSuffix
        }
        return upper
    }
}

import Foundation
import Wire

/// A standard characteristic type from the HAP catalog.
public struct CharacteristicType: Sendable, Hashable {
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
    public struct ValidValue: Sendable, Hashable {
        public let value: Double
        public let name: String
    }

    /// Reads one entry of the catalog file's `characteristics`.
    init(json: JSON) throws(CatalogError) {
        let entry = try CatalogError.object(json, "a characteristic type")
        name = try CatalogError.string(entry["name"], "a characteristic type's name")
        displayName = try CatalogError.string(entry["displayName"], "\(name): displayName")
        uuid = try CatalogError.string(entry["uuid"], "\(name): uuid")
        format = try CatalogError.format(entry["format"], "\(name): format")
        perms = try CatalogError.perms(entry["perms"], "\(name): perms")
        unit = try CatalogError.optionalString(entry["unit"], "\(name): unit")
        minValue = try CatalogError.optionalNumber(entry["minValue"], "\(name): minValue")
        maxValue = try CatalogError.optionalNumber(entry["maxValue"], "\(name): maxValue")
        minStep = try CatalogError.optionalNumber(entry["minStep"], "\(name): minStep")
        maxLen = try CatalogError.optionalNumber(entry["maxLen"], "\(name): maxLen").map { Int($0) }
        validValues = try CatalogError.validValues(entry["validValues"], "\(name): validValues")
        validValuesRange = try CatalogError.optionalNumbers(entry["validValuesRange"], "\(name): validValuesRange")
        momentary = try CatalogError.optionalBool(entry["momentary"], "\(name): momentary") ?? false
        definition = Characteristic.Definition(type: name, uuid: uuid, format: format, perms: perms, unit: unit, minValue: minValue,
                                               maxValue: maxValue, minStep: minStep, maxLen: maxLen, validValues: validValues?.map(\.value),
                                               validValuesRange: validValuesRange)
    }
}

/// A standard service type from the HAP catalog.
public struct ServiceType: Sendable, Hashable {
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

    /// Reads one entry of the catalog file's `services`.
    init(json: JSON) throws(CatalogError) {
        let entry = try CatalogError.object(json, "a service type")
        name = try CatalogError.string(entry["name"], "a service type's name")
        displayName = try CatalogError.string(entry["displayName"], "\(name): displayName")
        uuid = try CatalogError.string(entry["uuid"], "\(name): uuid")
        required = try CatalogError.strings(entry["required"], "\(name): required")
        optional = try CatalogError.strings(entry["optional"], "\(name): optional")
        hidden = try CatalogError.optionalBool(entry["hidden"], "\(name): hidden") ?? false
    }
}

/// A vendor's own characteristic type (Eve's power, ecobee's home target heat): what the catalog
/// knows of it, above all a readable name for its topic segment. Devices describe these types
/// themselves; the catalog fills in what they leave out.
public struct VendorCharacteristicType: Sendable, Hashable {
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

    /// Reads one entry of the catalog file's `vendorCharacteristics`.
    init(json: JSON) throws(CatalogError) {
        let entry = try CatalogError.object(json, "a vendor characteristic type")
        let vendor = try CatalogError.string(entry["vendor"], "a vendor characteristic type's vendor")
        let name = try CatalogError.string(entry["name"], "a vendor characteristic type's name")
        let what = "\(vendor) \(name)"
        self.vendor = vendor
        self.name = name
        displayName = try CatalogError.string(entry["displayName"], "\(what): displayName")
        uuid = try CatalogError.string(entry["uuid"], "\(what): uuid")
        format = try entry["format"].map { json throws(CatalogError) in try CatalogError.format(json, "\(what): format") }
        perms = try entry["perms"].map { json throws(CatalogError) in try CatalogError.perms(json, "\(what): perms") }
        unit = try CatalogError.optionalString(entry["unit"], "\(vendor) \(name): unit")
        minValue = try CatalogError.optionalNumber(entry["minValue"], "\(vendor) \(name): minValue")
        maxValue = try CatalogError.optionalNumber(entry["maxValue"], "\(vendor) \(name): maxValue")
        minStep = try CatalogError.optionalNumber(entry["minStep"], "\(vendor) \(name): minStep")
        validValues = try CatalogError.validValues(entry["validValues"], "\(vendor) \(name): validValues")
    }
}

/// A vendor's own service type (Eve's history service).
public struct VendorServiceType: Sendable, Hashable {
    public let vendor: String
    /// The topic segment.
    public let name: String
    public let displayName: String
    public let uuid: String
    /// Internal to the vendor's app: no topics.
    public let hidden: Bool

    /// Reads one entry of the catalog file's `vendorServices`.
    init(json: JSON) throws(CatalogError) {
        let entry = try CatalogError.object(json, "a vendor service type")
        vendor = try CatalogError.string(entry["vendor"], "a vendor service type's vendor")
        name = try CatalogError.string(entry["name"], "a vendor service type's name")
        displayName = try CatalogError.string(entry["displayName"], "\(vendor) \(name): displayName")
        uuid = try CatalogError.string(entry["uuid"], "\(vendor) \(name): uuid")
        hidden = try CatalogError.optionalBool(entry["hidden"], "\(vendor) \(name): hidden") ?? false
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
    /// Whether each standard type (by name) is momentary, for ``isMomentary(_:)``.
    private let momentaryByName: [String: Bool]
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
            return try Catalog(json: Array(EmbeddedCatalog.json.utf8))
        } catch {
            // The file is checked by the tests; a build with a broken catalog must not run.
            fatalError("the embedded HAP catalog does not decode: \(error)")
        }
    }()

    /// Reads a catalog file (through ``Wire/JSON``, as everything the gateway reads).
    /// - Throws: ``CatalogError`` naming the entry and field that does not fit.
    public init(json: [UInt8]) throws(CatalogError) {
        let root: JSON
        do {
            root = try JSON.parse(json)
        } catch {
            throw CatalogError(description: "the catalog is not JSON: \(error)")
        }
        let file = try CatalogError.object(root, "the catalog")
        let standardCharacteristics = try CatalogError.list(file["characteristics"], "characteristics", CharacteristicType.init(json:))
        let standardServices = try CatalogError.list(file["services"], "services", ServiceType.init(json:))
        let vendorCharacteristics = try CatalogError.list(file["vendorCharacteristics"] ?? [], "vendorCharacteristics", VendorCharacteristicType.init(json:))
        let vendorServices = try CatalogError.list(file["vendorServices"] ?? [], "vendorServices", VendorServiceType.init(json:))
        let bases = try CatalogError.list(file["vendorBases"] ?? [], "vendorBases") { json throws(CatalogError) in
            let base = try CatalogError.object(json, "a vendor base")
            return (suffix: try CatalogError.string(base["uuidSuffix"], "a vendor base's uuidSuffix"), vendor: try CatalogError.string(base["vendor"], "a vendor base's vendor"))
        }
        vendorCharacteristicsByUUID = Dictionary(vendorCharacteristics.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        vendorServicesByUUID = Dictionary(vendorServices.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        vendorBases = bases
        characteristics = standardCharacteristics
        services = standardServices
        characteristicsByName = Dictionary(standardCharacteristics.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        momentaryByName = characteristicsByName.mapValues(\.momentary)
        characteristicsByUUID = Dictionary(standardCharacteristics.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        servicesByName = Dictionary(standardServices.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        servicesByUUID = Dictionary(standardServices.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The characteristic type named `name` (`brightness`), or with that UUID (short or long;
    /// Apple's types under another base too, as HAA firmware sends them).
    public func characteristic(_ nameOrUUID: String) -> CharacteristicType? {
        characteristicsByName[nameOrUUID] ?? characteristicsByUUID[UUIDs.apple(UUIDs.expand(nameOrUUID))]
    }

    /// Whether the characteristic type is an event rather than a state (a programmable switch's
    /// press): one look-up of a flag by name, without copying the type's entry (every value
    /// applied asks).
    public func isMomentary(_ nameOrUUID: String) -> Bool {
        momentaryByName[nameOrUUID] ?? (characteristic(nameOrUUID)?.momentary == true)
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

/// What in the catalog file does not fit: the entry and field, in words.
public struct CatalogError: Error, CustomStringConvertible, Sendable {
    public let description: String

    static func object(_ json: JSON, _ what: String) throws(CatalogError) -> [String: JSON] {
        guard case .object(let members) = json else { throw CatalogError(description: "\(what) must be an object") }
        return members
    }

    static func list<T>(_ json: JSON?, _ what: String, _ read: (JSON) throws(CatalogError) -> T) throws(CatalogError) -> [T] {
        guard case .array(let elements)? = json else { throw CatalogError(description: "\(what) must be a list") }
        var result: [T] = []
        for element in elements { result.append(try read(element)) }
        return result
    }

    static func string(_ json: JSON?, _ what: String) throws(CatalogError) -> String {
        guard case .string(let text)? = json else { throw CatalogError(description: "\(what) must be a string") }
        return text
    }

    static func optionalString(_ json: JSON?, _ what: String) throws(CatalogError) -> String? {
        guard let json, json != .null else { return nil }
        return try string(json, what)
    }

    static func strings(_ json: JSON?, _ what: String) throws(CatalogError) -> [String] {
        try list(json, what) { element throws(CatalogError) in try string(element, what) }
    }

    static func optionalNumber(_ json: JSON?, _ what: String) throws(CatalogError) -> Double? {
        guard let json, json != .null else { return nil }
        guard let number = json.double else { throw CatalogError(description: "\(what) must be a number") }
        return number
    }

    static func optionalNumbers(_ json: JSON?, _ what: String) throws(CatalogError) -> [Double]? {
        guard let json, json != .null else { return nil }
        return try list(json, what) { element throws(CatalogError) in
            guard let number = element.double else { throw CatalogError(description: "\(what) must be numbers") }
            return number
        }
    }

    static func optionalBool(_ json: JSON?, _ what: String) throws(CatalogError) -> Bool? {
        guard let json, json != .null else { return nil }
        guard case .bool(let flag) = json else { throw CatalogError(description: "\(what) must be true or false") }
        return flag
    }

    static func format(_ json: JSON?, _ what: String) throws(CatalogError) -> Format {
        let text = try string(json, what)
        guard let format = Format(rawValue: text) else { throw CatalogError(description: "\(what): \"\(text)\" is no HAP format") }
        return format
    }

    static func perms(_ json: JSON?, _ what: String) throws(CatalogError) -> [Permission] {
        try list(json, what) { element throws(CatalogError) in
            let text = try string(element, what)
            guard let permission = Permission(rawValue: text) else { throw CatalogError(description: "\(what): \"\(text)\" is no HAP permission") }
            return permission
        }
    }

    /// `{"0": "unsecured", ...}` as values and names, in order of value.
    static func validValues(_ json: JSON?, _ what: String) throws(CatalogError) -> [CharacteristicType.ValidValue]? {
        guard let json, json != .null else { return nil }
        var values: [CharacteristicType.ValidValue] = []
        for (key, name) in try object(json, what) {
            guard let value = Double(key) else { throw CatalogError(description: "\(what): valid value \(key) is not a number") }
            values.append(CharacteristicType.ValidValue(value: value, name: try string(name, "\(what) \(key)")))
        }
        return values.sorted { $0.value < $1.value }
    }
}

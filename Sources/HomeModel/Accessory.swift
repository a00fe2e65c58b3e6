/// An accessory: a device (or a device behind a bridge) with its services.
public struct Accessory: Sendable, Hashable {
    /// Stable: survives renames, moves and restarts.
    public var id: AccessoryID
    public var name: String
    public var manufacturer: String
    public var model: String
    public var serialNumber: String
    public var firmwareRevision: String
    public var category: Category
    /// nil: the home's default room.
    public var roomID: RoomID?
    public var isReachable: Bool
    /// On an accessory behind a bridge: the bridge's id.
    public var bridgeID: AccessoryID?
    public var services: [Service]

    public init(id: AccessoryID, name: String, manufacturer: String = "", model: String = "", serialNumber: String = "", firmwareRevision: String = "",
                category: Category = .other, roomID: RoomID? = nil, isReachable: Bool = true, bridgeID: AccessoryID? = nil, services: [Service] = []) {
        self.id = id
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareRevision = firmwareRevision
        self.category = category
        self.roomID = roomID
        self.isReachable = isReachable
        self.bridgeID = bridgeID
        self.services = services
    }

    /// The service with instance id `iid`.
    public func service(_ iid: Int) -> Service? {
        services.first { $0.iid == iid }
    }

    /// The characteristic with instance id `iid`, and its service.
    public func characteristic(_ iid: Int) -> (service: Service, characteristic: Characteristic)? {
        for service in services {
            if let characteristic = service.characteristics.first(where: { $0.iid == iid }) { return (service, characteristic) }
        }
        return nil
    }

    /// The services that get topics: not hidden, not Accessory Information or Protocol Information.
    public var visibleServices: [Service] {
        services.filter(\.isVisible)
    }

    /// Sets a characteristic's value; false if there is no such characteristic.
    @discardableResult
    public mutating func setValue(_ value: Value?, iid: Int) -> Bool {
        for serviceIndex in services.indices {
            if let index = services[serviceIndex].characteristics.firstIndex(where: { $0.iid == iid }) {
                services[serviceIndex].characteristics[index].value = value
                return true
            }
        }
        return false
    }
}

/// A service of an accessory: a function it offers (a lightbulb, a temperature sensor).
public struct Service: Sendable, Hashable {
    /// Instance id, unique within the accessory.
    public var iid: Int
    /// The standard type's name (`lightbulb`), or the UUID of a custom type.
    public var type: String
    /// The type's full UUID.
    public var uuid: String
    public var name: String?
    public var isPrimary: Bool
    public var isHidden: Bool
    /// Instance ids of linked services.
    public var linked: [Int]
    public var characteristics: [Characteristic]

    public init(iid: Int, type: String, uuid: String, name: String? = nil, isPrimary: Bool = false, isHidden: Bool = false, linked: [Int] = [], characteristics: [Characteristic] = []) {
        self.iid = iid
        self.type = type
        self.uuid = uuid
        self.name = name
        self.isPrimary = isPrimary
        self.isHidden = isHidden
        self.linked = linked
        self.characteristics = characteristics
    }

    /// The service types that describe the device rather than offer a function.
    public static let informationTypes: Set<String> = ["accessory-information", "protocol-information"]

    /// Whether the service gets topics: not hidden (by the device, or by the catalog: Apple's
    /// information services, a vendor's internal ones such as Eve's history).
    public var isVisible: Bool {
        !isHidden && !Self.informationTypes.contains(type) && Catalog.standard.service(type)?.hidden != true
            && Catalog.standard.vendorService(uuid)?.hidden != true
    }

    /// The characteristic of type `type` (`brightness`).
    public func characteristic(ofType type: String) -> Characteristic? {
        characteristics.first { $0.type == type }
    }
}

/// A characteristic: one value of a service, with its format, permissions and bounds.
///
/// What a characteristic is (type, format, permissions, unit, bounds, valid values) lives in a
/// shared ``Definition``: every brightness of a home built from the catalog shares one, so a
/// home of 10,000 accessories holds each kind of characteristic once; only the instance id and
/// the value are the characteristic's own. The properties read and write through it (a change
/// makes the characteristic a definition of its own).
public struct Characteristic: Sendable, Hashable {
    /// Instance id, unique within the accessory.
    public var iid: Int
    /// The last value the device reported; nil before the first report (and for momentary ones).
    public var value: Value?
    /// What the characteristic is, shared with every characteristic of the same kind.
    public private(set) var definition: Definition

    /// The type, format, permissions and bounds of a kind of characteristic; immutable, shared.
    public final class Definition: Sendable, Hashable {
        /// The standard type's name (`brightness`), or the UUID of a custom type.
        public let type: String
        public let uuid: String
        public let format: Format
        public let perms: [Permission]
        public let unit: String?
        public let minValue: Double?
        public let maxValue: Double?
        public let minStep: Double?
        public let maxLen: Int?
        public let validValues: [Double]?
        public let validValuesRange: [Double]?
        /// The device's own description (custom types have nothing else to go by).
        public let description: String?

        public init(type: String, uuid: String, format: Format, perms: [Permission], unit: String? = nil, minValue: Double? = nil,
                    maxValue: Double? = nil, minStep: Double? = nil, maxLen: Int? = nil, validValues: [Double]? = nil,
                    validValuesRange: [Double]? = nil, description: String? = nil) {
            self.type = type
            self.uuid = uuid
            self.format = format
            self.perms = perms
            self.unit = unit
            self.minValue = minValue
            self.maxValue = maxValue
            self.minStep = minStep
            self.maxLen = maxLen
            self.validValues = validValues
            self.validValuesRange = validValuesRange
            self.description = description
        }

        /// The catalog's own definition of this type when this one is equal to it (so equal
        /// definitions read from a store or a device are held once), else this one.
        public var shared: Definition {
            guard let standard = Catalog.standard.characteristic(type)?.definition, standard == self else { return self }
            return standard
        }

        /// This definition with one field changed.
        func with(_ change: (inout Fields) -> Void) -> Definition {
            var fields = Fields(self)
            change(&fields)
            return Definition(type: fields.type, uuid: fields.uuid, format: fields.format, perms: fields.perms, unit: fields.unit,
                              minValue: fields.minValue, maxValue: fields.maxValue, minStep: fields.minStep, maxLen: fields.maxLen,
                              validValues: fields.validValues, validValuesRange: fields.validValuesRange, description: fields.description)
        }

        struct Fields {
            var type: String, uuid: String, format: Format, perms: [Permission], unit: String?, minValue: Double?, maxValue: Double?
            var minStep: Double?, maxLen: Int?, validValues: [Double]?, validValuesRange: [Double]?, description: String?

            init(_ definition: Definition) {
                type = definition.type
                uuid = definition.uuid
                format = definition.format
                perms = definition.perms
                unit = definition.unit
                minValue = definition.minValue
                maxValue = definition.maxValue
                minStep = definition.minStep
                maxLen = definition.maxLen
                validValues = definition.validValues
                validValuesRange = definition.validValuesRange
                description = definition.description
            }
        }

        public static func == (lhs: Definition, rhs: Definition) -> Bool {
            lhs === rhs || (lhs.type == rhs.type && lhs.uuid == rhs.uuid && lhs.format == rhs.format && lhs.perms == rhs.perms
                && lhs.unit == rhs.unit && lhs.minValue == rhs.minValue && lhs.maxValue == rhs.maxValue && lhs.minStep == rhs.minStep
                && lhs.maxLen == rhs.maxLen && lhs.validValues == rhs.validValues && lhs.validValuesRange == rhs.validValuesRange
                && lhs.description == rhs.description)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(type)
            hasher.combine(uuid)
            hasher.combine(format)
            hasher.combine(perms)
            hasher.combine(unit)
            hasher.combine(minValue)
            hasher.combine(maxValue)
            hasher.combine(minStep)
            hasher.combine(maxLen)
            hasher.combine(validValues)
            hasher.combine(validValuesRange)
            hasher.combine(description)
        }
    }

    public var type: String {
        get { definition.type }
        set { definition = definition.with { $0.type = newValue } }
    }

    public var uuid: String {
        get { definition.uuid }
        set { definition = definition.with { $0.uuid = newValue } }
    }

    public var format: Format {
        get { definition.format }
        set { definition = definition.with { $0.format = newValue } }
    }

    public var perms: [Permission] {
        get { definition.perms }
        set { definition = definition.with { $0.perms = newValue } }
    }

    public var unit: String? {
        get { definition.unit }
        set { definition = definition.with { $0.unit = newValue } }
    }

    public var minValue: Double? {
        get { definition.minValue }
        set { definition = definition.with { $0.minValue = newValue } }
    }

    public var maxValue: Double? {
        get { definition.maxValue }
        set { definition = definition.with { $0.maxValue = newValue } }
    }

    public var minStep: Double? {
        get { definition.minStep }
        set { definition = definition.with { $0.minStep = newValue } }
    }

    public var maxLen: Int? {
        get { definition.maxLen }
        set { definition = definition.with { $0.maxLen = newValue } }
    }

    public var validValues: [Double]? {
        get { definition.validValues }
        set { definition = definition.with { $0.validValues = newValue } }
    }

    public var validValuesRange: [Double]? {
        get { definition.validValuesRange }
        set { definition = definition.with { $0.validValuesRange = newValue } }
    }

    public var description: String? {
        get { definition.description }
        set { definition = definition.with { $0.description = newValue } }
    }

    public init(iid: Int, type: String, uuid: String, format: Format, perms: [Permission], unit: String? = nil, minValue: Double? = nil,
                maxValue: Double? = nil, minStep: Double? = nil, maxLen: Int? = nil, validValues: [Double]? = nil,
                validValuesRange: [Double]? = nil, value: Value? = nil, description: String? = nil) {
        self.init(iid: iid, definition: Definition(type: type, uuid: uuid, format: format, perms: perms, unit: unit, minValue: minValue,
                                                   maxValue: maxValue, minStep: minStep, maxLen: maxLen, validValues: validValues,
                                                   validValuesRange: validValuesRange, description: description), value: value)
    }

    /// A characteristic of a shared definition.
    public init(iid: Int, definition: Definition, value: Value? = nil) {
        self.iid = iid
        self.definition = definition
        self.value = value
    }

    /// A characteristic of a standard type, with the catalog's format, permissions and bounds
    /// (the catalog's one definition of the type, shared).
    public init(iid: Int, standard type: CharacteristicType, value: Value? = nil) {
        self.init(iid: iid, definition: type.definition, value: value)
    }

    public var isReadable: Bool { perms.contains(.read) }
    public var isWritable: Bool { perms.contains(.write) }
    public var supportsEvents: Bool { perms.contains(.events) }

    /// An event rather than a state: published, never retained.
    public var isMomentary: Bool {
        Catalog.standard.isMomentary(type)
    }

    /// The catalog's entry for this type, if it is a standard one.
    public var standardType: CharacteristicType? {
        Catalog.standard.characteristic(type)
    }
}

/// HAP accessory categories (the number a HomeKit accessory advertises).
public enum Category: Int, Sendable, Hashable, CaseIterable {
    case other = 1, bridge = 2, fan = 3, garageDoorOpener = 4, lightbulb = 5, doorLock = 6, outlet = 7, `switch` = 8,
         thermostat = 9, sensor = 10, securitySystem = 11, door = 12, window = 13, windowCovering = 14,
         programmableSwitch = 15, rangeExtender = 16, ipCamera = 17, videoDoorbell = 18, airPurifier = 19, heater = 20,
         airConditioner = 21, humidifier = 22, dehumidifier = 23, appleTV = 24, homePod = 25, speaker = 26, airport = 27,
         sprinkler = 28, faucet = 29, showerHead = 30, television = 31, targetController = 32, router = 33,
         audioReceiver = 34, tvSetTopBox = 35, tvStreamingStick = 36

    /// The kebab-case name (`garage-door-opener`), as in `$layout` and the configuration.
    public var name: String {
        switch self {
        case .appleTV: return "apple-tv"
        case .homePod: return "homepod"
        case .ipCamera: return "ip-camera"
        case .tvSetTopBox: return "tv-set-top-box"
        case .tvStreamingStick: return "tv-streaming-stick"
        default: return Slug.kebab(String(describing: self))
        }
    }

    /// The category named `name` (kebab-case, as ``name``).
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

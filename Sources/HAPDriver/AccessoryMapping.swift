import Foundation
import HAP
import HomeModel
import Wire

/// How one paired device's accessory database becomes accessories of the home tree, and how
/// values cross between HAP's JSON and the model's ``Value``.
struct AccessoryMapping: Sendable {
    /// The device's pairing id (`AA:BB:CC:DD:EE:FF`).
    let deviceID: String
    /// The accessories, with structure and values, reachable.
    let accessories: [Accessory]
    /// Accessory id -> the aid on the device.
    let aids: [AccessoryID: Int]
    /// What a write needs to know of each characteristic.
    let characteristics: [CharacteristicAddress: CharacteristicInfo]
    /// Characteristics that send events.
    let notifying: [CharacteristicAddress]
    /// A cheap characteristic to read as a keep-alive (the first readable one of aid 1).
    let keepAliveProbe: CharacteristicAddress?

    struct CharacteristicInfo: Sendable {
        let format: Format
        let timedWrite: Bool
    }

    /// The stable id of accessory `aid` of device `deviceID`: `hap-aabbccddeeff-2`.
    static func accessoryID(deviceID: String, aid: Int) -> AccessoryID {
        AccessoryID("\(idPrefix(deviceID: deviceID))\(aid)")
    }

    /// What every accessory id of device `deviceID` starts with.
    static func idPrefix(deviceID: String) -> String {
        "hap-\(deviceID.lowercased().filter { $0.isLetter || $0.isNumber })-"
    }

    init(deviceID: String, database: [AccessoryDescription]) {
        self.deviceID = deviceID
        let isBridge = database.count > 1
        let bridgeAID = database.first(where: { $0.aid == 1 })?.aid
        var aids: [AccessoryID: Int] = [:]
        var characteristics: [CharacteristicAddress: CharacteristicInfo] = [:]
        var notifying: [CharacteristicAddress] = []
        var accessories: [Accessory] = []
        for description in database {
            let id = Self.accessoryID(deviceID: deviceID, aid: description.aid)
            aids[id] = description.aid
            let bridgeID = isBridge && description.aid != bridgeAID ? bridgeAID.map { Self.accessoryID(deviceID: deviceID, aid: $0) } : nil
            accessories.append(Self.accessory(description, id: id, bridgeID: bridgeID, isBridge: isBridge && description.aid == bridgeAID))
            for service in description.services {
                for characteristic in service.characteristics {
                    let address = CharacteristicAddress(aid: description.aid, iid: characteristic.iid)
                    characteristics[address] = CharacteristicInfo(format: Format(rawValue: characteristic.format) ?? .data,
                                                                  timedWrite: characteristic.perms.contains("tw"))
                    if characteristic.perms.contains("ev") { notifying.append(address) }
                }
            }
        }
        self.accessories = accessories
        self.aids = aids
        self.characteristics = characteristics
        self.notifying = notifying
        self.keepAliveProbe = database.first { $0.aid == 1 }.flatMap { accessory in
            accessory.services.lazy.flatMap(\.characteristics).first { $0.perms.contains("pr") }
                .map { CharacteristicAddress(aid: 1, iid: $0.iid) }
        }
    }

    /// The accessory id of `aid`, if the device has it.
    func accessoryID(aid: Int) -> AccessoryID? {
        let id = Self.accessoryID(deviceID: deviceID, aid: aid)
        return aids[id] == nil ? nil : id
    }

    private static let informationService = AccessoryDescription.fullUUID("3E")
    private static let nameType = AccessoryDescription.fullUUID("23")
    private static let configuredNameType = AccessoryDescription.fullUUID("E3")

    private static func accessory(_ description: AccessoryDescription, id: AccessoryID, bridgeID: AccessoryID?, isBridge: Bool) -> Accessory {
        func information(_ short: String) -> String {
            description.characteristic(AccessoryDescription.fullUUID(short), in: informationService)?.value?.string ?? ""
        }
        let name = information("23")
        let services = description.services.map(service)
        return Accessory(
            id: id, name: name.isEmpty ? "Accessory \(description.aid)" : name, manufacturer: information("20"), model: information("21"),
            serialNumber: information("30"), firmwareRevision: information("52"),
            category: isBridge ? .bridge : category(of: services), isReachable: true, bridgeID: bridgeID, services: services
        )
    }

    private static func service(_ description: ServiceDescription) -> Service {
        let type = Catalog.standard.service(description.type)
        let name = description.characteristics.first { $0.type == configuredNameType }?.value?.string
            ?? description.characteristics.first { $0.type == nameType }?.value?.string
        return Service(iid: description.iid, type: type?.name ?? description.type, uuid: description.type, name: name,
                       isPrimary: description.isPrimary, isHidden: description.isHidden, linked: description.linked,
                       characteristics: description.characteristics.map(characteristic))
    }

    private static func characteristic(_ description: CharacteristicDescription) -> Characteristic {
        let type = Catalog.standard.characteristic(description.type)
        let format = Format(rawValue: description.format) ?? .data
        return Characteristic(
            iid: description.iid, type: type?.name ?? description.type, uuid: description.type, format: format,
            perms: description.perms.compactMap(Permission.init(rawValue:)).sorted(), unit: description.unit,
            minValue: description.minValue, maxValue: description.maxValue, minStep: description.minStep, maxLen: description.maxLen,
            validValues: description.validValues, validValuesRange: description.validValuesRange,
            value: description.value.flatMap { value(from: $0, format: format) }, description: description.description
        )
    }

    /// The category HomeKit would show for an accessory offering these services: the primary
    /// service's (or the first visible one's).
    static func category(of services: [Service]) -> Category {
        let main = services.first { $0.isPrimary && $0.isVisible } ?? services.first(where: \.isVisible)
        switch main?.type {
        case "lightbulb": return .lightbulb
        case "fan", "fanv2": return .fan
        case "garage-door-opener": return .garageDoorOpener
        case "lock-mechanism": return .doorLock
        case "outlet": return .outlet
        case "switch": return .switch
        case "thermostat": return .thermostat
        case "security-system": return .securitySystem
        case "door": return .door
        case "window": return .window
        case "window-covering": return .windowCovering
        case "stateless-programmable-switch": return .programmableSwitch
        case "air-purifier": return .airPurifier
        case "heater-cooler": return .heater
        case "humidifier-dehumidifier": return .humidifier
        case "television": return .television
        case "valve", "irrigation-system": return .sprinkler
        case "faucet": return .faucet
        case "temperature-sensor", "humidity-sensor", "light-sensor", "motion-sensor", "occupancy-sensor", "contact-sensor",
             "leak-sensor", "smoke-sensor", "carbon-monoxide-sensor", "carbon-dioxide-sensor", "air-quality-sensor":
            return .sensor
        default: return .other
        }
    }

    /// A HAP JSON value as a value of `format`; nil if it is not one.
    static func value(from json: JSON, format: Format) -> Value? {
        switch format {
        case .bool: return json.bool.map(Value.bool)
        case .int: return json.int.map(Value.int)
        case .uint8, .uint16, .uint32, .uint64:
            if case .uint(let large) = json { return .uint(large) }
            return json.int.flatMap { $0 >= 0 ? Value.uint(UInt64($0)) : nil }
        case .float: return json.double.map(Value.float)
        case .string: return json.string.map(Value.string)
        case .tlv8, .data: return json.string.flatMap { Data(base64Encoded: $0) }.map { Value.data([UInt8]($0)) }
        }
    }
}

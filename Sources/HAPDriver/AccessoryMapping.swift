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
    /// What was odd in the database and what was done about it, one sentence each (logged and
    /// announced as `accessory-warning`).
    let warnings: [String]

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

    init(deviceID: String, database: [AccessoryDescription], warnings parseWarnings: [String] = []) {
        self.deviceID = deviceID
        let isBridge = database.count > 1
        let bridgeAID = database.first(where: { $0.aid == 1 })?.aid
        var aids: [AccessoryID: Int] = [:]
        var characteristics: [CharacteristicAddress: CharacteristicInfo] = [:]
        var notifying: [CharacteristicAddress] = []
        var accessories: [Accessory] = []
        var warnings = parseWarnings
        for description in database {
            let id = Self.accessoryID(deviceID: deviceID, aid: description.aid)
            aids[id] = description.aid
            let bridgeID = isBridge && description.aid != bridgeAID ? bridgeAID.map { Self.accessoryID(deviceID: deviceID, aid: $0) } : nil
            let accessory = Self.accessory(description, id: id, bridgeID: bridgeID, isBridge: isBridge && description.aid == bridgeAID, warnings: &warnings)
            accessories.append(accessory)
            for service in accessory.services {
                for characteristic in service.characteristics {
                    let address = CharacteristicAddress(aid: description.aid, iid: characteristic.iid)
                    characteristics[address] = CharacteristicInfo(format: characteristic.format, timedWrite: characteristic.perms.contains(.timedWrite))
                    if characteristic.supportsEvents { notifying.append(address) }
                }
            }
        }
        self.accessories = accessories
        self.aids = aids
        self.characteristics = characteristics
        self.notifying = notifying
        self.warnings = warnings
        self.keepAliveProbe = accessories.first { aids[$0.id] == 1 }.flatMap { accessory in
            accessory.services.lazy.flatMap(\.characteristics).first(where: \.isReadable).map { CharacteristicAddress(aid: 1, iid: $0.iid) }
        }
    }

    /// This mapping with `refused` sending no events: their `ev` permission is dropped (so the
    /// engine polls them) and they leave ``notifying``.
    func withoutEvents(_ refused: [CharacteristicAddress]) -> AccessoryMapping {
        let refusedSet = Set(refused)
        var accessories = accessories
        for index in accessories.indices {
            guard let aid = aids[accessories[index].id] else { continue }
            for serviceIndex in accessories[index].services.indices {
                for characteristicIndex in accessories[index].services[serviceIndex].characteristics.indices {
                    let iid = accessories[index].services[serviceIndex].characteristics[characteristicIndex].iid
                    guard refusedSet.contains(CharacteristicAddress(aid: aid, iid: iid)) else { continue }
                    accessories[index].services[serviceIndex].characteristics[characteristicIndex].perms.removeAll { $0 == .events }
                }
            }
        }
        return AccessoryMapping(deviceID: deviceID, accessories: accessories, aids: aids, characteristics: characteristics,
                                notifying: notifying.filter { !refusedSet.contains($0) }, keepAliveProbe: keepAliveProbe, warnings: warnings)
    }

    private init(deviceID: String, accessories: [Accessory], aids: [AccessoryID: Int], characteristics: [CharacteristicAddress: CharacteristicInfo],
                 notifying: [CharacteristicAddress], keepAliveProbe: CharacteristicAddress?, warnings: [String]) {
        self.deviceID = deviceID
        self.accessories = accessories
        self.aids = aids
        self.characteristics = characteristics
        self.notifying = notifying
        self.keepAliveProbe = keepAliveProbe
        self.warnings = warnings
    }

    /// The accessory id of `aid`, if the device has it.
    func accessoryID(aid: Int) -> AccessoryID? {
        let id = Self.accessoryID(deviceID: deviceID, aid: aid)
        return aids[id] == nil ? nil : id
    }

    private static let informationService = AccessoryDescription.fullUUID("3E")
    private static let nameType = AccessoryDescription.fullUUID("23")
    private static let configuredNameType = AccessoryDescription.fullUUID("E3")

    private static func accessory(_ description: AccessoryDescription, id: AccessoryID, bridgeID: AccessoryID?, isBridge: Bool,
                                  warnings: inout [String]) -> Accessory {
        func information(_ short: String) -> String {
            let service = description.services.first { UUIDs.apple($0.type) == informationService }
            return service?.characteristics.first { UUIDs.apple($0.type) == AccessoryDescription.fullUUID(short) }?.value?.string ?? ""
        }
        let name = information("23")
        let services = description.services.map { service(description.aid, $0, warnings: &warnings) }
        return Accessory(
            id: id, name: name.isEmpty ? "Accessory \(description.aid)" : name, manufacturer: information("20"), model: information("21"),
            serialNumber: information("30"), firmwareRevision: information("52"),
            category: isBridge ? .bridge : Category(primaryOf: services), isReachable: true, bridgeID: bridgeID, services: services
        )
    }

    private static func service(_ aid: Int, _ description: ServiceDescription, warnings: inout [String]) -> Service {
        let type = Catalog.standard.service(description.type)
        let vendor = Catalog.standard.vendorService(description.type)
        let name = description.characteristics.first { UUIDs.apple($0.type) == configuredNameType }?.value?.string
            ?? description.characteristics.first { UUIDs.apple($0.type) == nameType }?.value?.string
        return Service(iid: description.iid, type: type?.name ?? description.type, uuid: description.type, name: name,
                       isPrimary: description.isPrimary, isHidden: description.isHidden || vendor?.hidden == true, linked: description.linked,
                       characteristics: description.characteristics.map { characteristic(aid, $0, warnings: &warnings) })
    }

    /// A characteristic as the device described it, completed from the catalog where the device
    /// left something out (format, perms, unit), its value read leniently; what was odd is told.
    static func characteristic(_ aid: Int, _ description: CharacteristicDescription, warnings: inout [String]) -> Characteristic {
        let standard = Catalog.standard.characteristic(description.type)
        let vendor = Catalog.standard.vendorCharacteristic(description.type)
        let label = "accessory \(aid), characteristic \(description.iid) (\(standard?.name ?? vendor?.name ?? description.type))"
        let format = format(of: description, standard: standard, vendor: vendor, label: label, warnings: &warnings)
        var perms: [Permission]
        if let given = description.perms {
            perms = given.compactMap(Permission.init(rawValue:))
            let unknown = given.filter { Permission(rawValue: $0) == nil }
            if !unknown.isEmpty { warnings.append("\(label): unknown permissions \(unknown.joined(separator: ", ")) ignored") }
        } else {
            perms = standard?.perms ?? vendor?.perms ?? [.read]
            warnings.append("\(label): no perms; taken as \(perms.map(\.rawValue).joined(separator: " ")) (\(standard != nil || vendor?.perms != nil ? "the catalog's" : "read only"))")
        }
        perms.sort()
        let minStep = description.minStep ?? (description.format == nil ? standard?.minStep ?? vendor?.minStep : nil)
        var characteristic = Characteristic(
            iid: description.iid, type: standard?.name ?? description.type, uuid: description.type, format: format, perms: perms,
            unit: description.unit ?? standard?.unit ?? vendor?.unit,
            minValue: description.minValue ?? (description.format == nil ? standard?.minValue ?? vendor?.minValue : nil),
            maxValue: description.maxValue ?? (description.format == nil ? standard?.maxValue ?? vendor?.maxValue : nil),
            minStep: minStep, maxLen: description.maxLen, validValues: description.validValues, validValuesRange: description.validValuesRange,
            description: description.description
        )
        if let json = description.value {
            if let value = value(from: json, format: format) {
                characteristic.value = value
                if let problem = outOfBounds(value, of: characteristic) { warnings.append("\(label): \(problem); kept as the device reports it") }
                if case .data = value, format == .data || format == .tlv8, json.string.map({ Data(base64Encoded: $0) == nil }) == true {
                    warnings.append("\(label): data written as hex, not base64; read as hex")
                }
            } else {
                warnings.append("\(label): the value \(json.text.prefix(40)) is not a \(format.rawValue); no value until the device sends one")
            }
        }
        return Characteristic(iid: characteristic.iid, definition: characteristic.definition.shared, value: characteristic.value)
    }

    private static func format(of description: CharacteristicDescription, standard: CharacteristicType?, vendor: VendorCharacteristicType?,
                               label: String, warnings: inout [String]) -> Format {
        if let name = description.format, let format = Format(rawValue: name) { return format }
        let fallback = standard?.format ?? vendor?.format ?? inferredFormat(description.value)
        if let name = description.format {
            warnings.append("\(label): unknown format \"\(name)\"; taken as \(fallback.rawValue)")
        } else {
            warnings.append("\(label): no format; taken as \(fallback.rawValue) (\(standard != nil || vendor?.format != nil ? "the catalog's" : "from its value"))")
        }
        return fallback
    }

    /// A format for a custom characteristic that gives none, from its value.
    private static func inferredFormat(_ value: JSON?) -> Format {
        switch value {
        case .bool?: .bool
        case .int?, .uint?: .int
        case .double?: .float
        case .string?: .string
        default: .data
        }
    }

    private static func outOfBounds(_ value: Value, of characteristic: Characteristic) -> String? {
        guard let number = value.number else { return nil }
        if let minValue = characteristic.minValue, number < minValue { return "the value \(Value.format(number)) is below its own minimum \(Value.format(minValue))" }
        if let maxValue = characteristic.maxValue, number > maxValue { return "the value \(Value.format(number)) is above its own maximum \(Value.format(maxValue))" }
        return nil
    }

    /// A HAP JSON value as a value of `format`, exactly as the device sent it; nil if it is not
    /// one. A float loses only the noise of the single-precision float devices compute in
    /// (``exact(_:)``), never digits: `minStep` is what a device accepts in a write, not the
    /// precision of what it reports. `data` and `tlv8` are base64; text that is not base64 (some
    /// firmware sends hex) is kept as the device sent it.
    static func value(from json: JSON, format: Format) -> Value? {
        switch format {
        case .bool: return json.bool.map(Value.bool)
        case .int: return json.int.map(Value.int)
        case .uint8, .uint16, .uint32, .uint64:
            if case .uint(let large) = json { return .uint(large) }
            return json.int.flatMap { $0 >= 0 ? Value.uint(UInt64($0)) : nil }
        case .float: return json.double.map { Value.float(exact($0)) }
        case .string: return json.string.map(Value.string)
        case .tlv8, .data:
            guard let text = json.string else { return nil }
            if let data = Data(base64Encoded: text) { return .data(Array(data)) }
            return .string(text)
        }
    }

    /// `value` without float32 noise: the shortest decimal that reads back as the same
    /// single-precision float (`60.099998` -> `60.1`, `120.5999984741211` -> `120.6`,
    /// `0.28999999` -> `0.29`) when it has fewer significant digits than `value`; otherwise `value`
    /// itself (`0.03`, `59.48`, `16777217`).
    static func exact(_ value: Double) -> Double {
        let single = Float(value)
        guard value.isFinite, single.isNormal, let shortest = Double(single.description) else { return value }
        return significantDigits(shortest) < significantDigits(value) ? shortest : value
    }

    /// The significant digits of `value`'s shortest decimal form (`0.0300` -> 1, `1.5e+07` -> 2).
    private static func significantDigits(_ value: Double) -> Int {
        let mantissa = value.magnitude.description.prefix { $0 != "e" && $0 != "E" }
        let digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
        return digits.reversed().drop { $0 == "0" }.count
    }
}

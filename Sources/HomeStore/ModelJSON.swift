import Foundation
import HomeModel
import Wire

/// The model as JSON, written and read by hand through ``Wire/JSON``: the store's list columns and
/// the last applied configuration, the one way the model is JSON. The shape is the one the
/// model's synthesized `Codable` wrote before this replaced it (property names as keys, missing
/// optionals left out, `Value` as `{"<kind>": ...}`, dates as seconds since 2001), so every store
/// written before reads the same; it is many times faster than Foundation's encoder for a home
/// of thousands of accessories.
enum ModelJSON {
    /// A value that does not fit the model: what was expected where.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    // MARK: Reading helpers

    static func object(_ json: JSON, _ what: String) throws(Failure) -> [String: JSON] {
        guard case .object(let members) = json else { throw Failure(description: "\(what) must be an object") }
        return members
    }

    static func array(_ json: JSON?, _ what: String) throws(Failure) -> [JSON] {
        guard case .array(let elements)? = json else { throw Failure(description: "\(what) must be a list") }
        return elements
    }

    static func string(_ json: JSON?, _ what: String) throws(Failure) -> String {
        guard case .string(let text)? = json else { throw Failure(description: "\(what) must be a string") }
        return text
    }

    static func optionalString(_ json: JSON?, _ what: String) throws(Failure) -> String? {
        guard let json, json != .null else { return nil }
        return try string(json, what)
    }

    static func int(_ json: JSON?, _ what: String) throws(Failure) -> Int {
        guard let number = json?.int, let value = Int(exactly: number) else { throw Failure(description: "\(what) must be a whole number") }
        return value
    }

    static func optionalInt(_ json: JSON?, _ what: String) throws(Failure) -> Int? {
        guard let json, json != .null else { return nil }
        return try int(json, what)
    }

    static func double(_ json: JSON?, _ what: String) throws(Failure) -> Double {
        guard let value = json?.double else { throw Failure(description: "\(what) must be a number") }
        return value
    }

    static func optionalDouble(_ json: JSON?, _ what: String) throws(Failure) -> Double? {
        guard let json, json != .null else { return nil }
        return try double(json, what)
    }

    static func bool(_ json: JSON?, _ what: String) throws(Failure) -> Bool {
        guard case .bool(let flag)? = json else { throw Failure(description: "\(what) must be true or false") }
        return flag
    }

    static func doubles(_ json: JSON?, _ what: String) throws(Failure) -> [Double]? {
        guard let json, json != .null else { return nil }
        var values: [Double] = []
        for element in try array(json, what) { values.append(try double(element, what)) }
        return values
    }

    static func list<T>(_ json: JSON?, _ what: String, _ read: (JSON) throws(Failure) -> T) throws(Failure) -> [T] {
        var result: [T] = []
        for element in try array(json, what) { result.append(try read(element)) }
        return result
    }

    /// Reads `text` (a column or a setting) as JSON.
    static func parse(_ text: [UInt8], _ what: String) throws(Failure) -> JSON {
        do {
            return try JSON.parse(text)
        } catch {
            throw Failure(description: "\(what) is not JSON: \(error)")
        }
    }
}

extension JSON {
    /// Sets `key` only when there is a value (nil optionals are left out, as the stores of before have them).
    fileprivate mutating func setIfPresent(_ key: String, _ value: JSON?) {
        guard let value, case .object(var members) = self else { return }
        members[key] = value
        self = .object(members)
    }
}

// MARK: - Accessories

extension Value {
    var modelJSON: JSON {
        switch self {
        case .bool(let value): ["bool": .bool(value)]
        case .int(let value): ["int": .int(value)]
        case .uint(let value): ["uint": value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)]
        case .float(let value): ["float": .double(value)]
        case .string(let value): ["string": .string(value)]
        case .data(let bytes): ["data": .string(Data(bytes).base64EncodedString())]
        }
    }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a value")
        guard members.count == 1, let (kind, value) = members.first else { throw ModelJSON.Failure(description: "a value needs one kind") }
        switch (kind, value) {
        case ("bool", .bool(let flag)): self = .bool(flag)
        case ("int", _): self = .int(Int64(try ModelJSON.int(value, "an int value")))
        case ("uint", .uint(let large)): self = .uint(large)
        case ("uint", _):
            guard let number = value.int, number >= 0 else { throw ModelJSON.Failure(description: "a uint value must be a whole number of at least 0") }
            self = .uint(UInt64(number))
        case ("float", _): self = .float(try ModelJSON.double(value, "a float value"))
        case ("string", .string(let text)): self = .string(text)
        case ("data", .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw ModelJSON.Failure(description: "a data value must be base64") }
            self = .data(Array(data))
        default: throw ModelJSON.Failure(description: "a value of kind \(kind) does not fit")
        }
    }
}

extension Characteristic {
    var modelJSON: JSON {
        var json: JSON = [
            "iid": .int(iid), "type": .string(type), "uuid": .string(uuid), "format": .string(format.rawValue),
            "perms": .array(perms.map { .string($0.rawValue) }),
        ]
        json.setIfPresent("unit", unit.map(JSON.string))
        json.setIfPresent("minValue", minValue.map(JSON.double))
        json.setIfPresent("maxValue", maxValue.map(JSON.double))
        json.setIfPresent("minStep", minStep.map(JSON.double))
        json.setIfPresent("maxLen", maxLen.map(JSON.int))
        json.setIfPresent("validValues", validValues.map { .array($0.map(JSON.double)) })
        json.setIfPresent("validValuesRange", validValuesRange.map { .array($0.map(JSON.double)) })
        json.setIfPresent("value", value?.modelJSON)
        json.setIfPresent("description", description.map(JSON.string))
        return json
    }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a characteristic")
        let formatName = try ModelJSON.string(members["format"], "a characteristic's format")
        guard let format = Format(rawValue: formatName) else { throw ModelJSON.Failure(description: "unknown format \(formatName)") }
        var perms: [Permission] = []
        for name in try ModelJSON.list(members["perms"], "a characteristic's perms", { json throws(ModelJSON.Failure) in try ModelJSON.string(json, "a permission") }) {
            guard let permission = Permission(rawValue: name) else { throw ModelJSON.Failure(description: "unknown permission \(name)") }
            perms.append(permission)
        }
        let iid = try ModelJSON.int(members["iid"], "a characteristic's iid")
        let type = try ModelJSON.string(members["type"], "a characteristic's type")
        let uuid = try ModelJSON.string(members["uuid"], "a characteristic's uuid")
        let unit = try ModelJSON.optionalString(members["unit"], "unit")
        let minValue = try ModelJSON.optionalDouble(members["minValue"], "minValue")
        let maxValue = try ModelJSON.optionalDouble(members["maxValue"], "maxValue")
        let minStep = try ModelJSON.optionalDouble(members["minStep"], "minStep")
        let maxLen = try ModelJSON.optionalInt(members["maxLen"], "maxLen")
        let validValues = try ModelJSON.doubles(members["validValues"], "validValues")
        let validValuesRange = try ModelJSON.doubles(members["validValuesRange"], "validValuesRange")
        var value: Value?
        if let json = members["value"], json != .null { value = try Value(modelJSON: json) }
        let description = try ModelJSON.optionalString(members["description"], "description")
        let definition = Definition(type: type, uuid: uuid, format: format, perms: perms, unit: unit, minValue: minValue, maxValue: maxValue,
                                    minStep: minStep, maxLen: maxLen, validValues: validValues, validValuesRange: validValuesRange, description: description)
        self.init(iid: iid, definition: definition.shared, value: value)
    }
}

extension Service {
    var modelJSON: JSON {
        var json: JSON = [
            "iid": .int(iid), "type": .string(type), "uuid": .string(uuid), "isPrimary": .bool(isPrimary), "isHidden": .bool(isHidden),
            "linked": .array(linked.map(JSON.int)), "characteristics": .array(characteristics.map(\.modelJSON)),
        ]
        json.setIfPresent("name", name.map(JSON.string))
        return json
    }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a service")
        let iid = try ModelJSON.int(members["iid"], "a service's iid")
        let type = try ModelJSON.string(members["type"], "a service's type")
        let uuid = try ModelJSON.string(members["uuid"], "a service's uuid")
        let name = try ModelJSON.optionalString(members["name"], "a service's name")
        let isPrimary = try ModelJSON.bool(members["isPrimary"], "isPrimary")
        let isHidden = try ModelJSON.bool(members["isHidden"], "isHidden")
        let linked: [Int] = try ModelJSON.list(members["linked"], "linked") { json throws(ModelJSON.Failure) in try ModelJSON.int(json, "a linked iid") }
        let characteristics: [Characteristic] = try ModelJSON.list(members["characteristics"], "characteristics") { json throws(ModelJSON.Failure) in
            try Characteristic(modelJSON: json)
        }
        self.init(iid: iid, type: type, uuid: uuid, name: name, isPrimary: isPrimary, isHidden: isHidden, linked: linked, characteristics: characteristics)
    }
}

extension Accessory {
    var modelJSON: JSON {
        var json: JSON = [
            "id": .string(id.rawValue), "name": .string(name), "manufacturer": .string(manufacturer), "model": .string(model),
            "serialNumber": .string(serialNumber), "firmwareRevision": .string(firmwareRevision), "category": .int(category.rawValue),
            "isReachable": .bool(isReachable), "services": .array(services.map(\.modelJSON)),
        ]
        json.setIfPresent("roomID", roomID.map { .string($0.rawValue) })
        json.setIfPresent("bridgeID", bridgeID.map { .string($0.rawValue) })
        return json
    }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "an accessory")
        let categoryNumber = try ModelJSON.int(members["category"], "an accessory's category")
        guard let category = Category(rawValue: categoryNumber) else { throw ModelJSON.Failure(description: "unknown category \(categoryNumber)") }
        let id = AccessoryID(try ModelJSON.string(members["id"], "an accessory's id"))
        let name = try ModelJSON.string(members["name"], "an accessory's name")
        let manufacturer = try ModelJSON.string(members["manufacturer"], "manufacturer")
        let model = try ModelJSON.string(members["model"], "model")
        let serialNumber = try ModelJSON.string(members["serialNumber"], "serialNumber")
        let firmwareRevision = try ModelJSON.string(members["firmwareRevision"], "firmwareRevision")
        let roomID: RoomID? = try ModelJSON.optionalString(members["roomID"], "roomID").map { RoomID($0) }
        let isReachable = try ModelJSON.bool(members["isReachable"], "isReachable")
        let bridgeID: AccessoryID? = try ModelJSON.optionalString(members["bridgeID"], "bridgeID").map { AccessoryID($0) }
        let services: [Service] = try ModelJSON.list(members["services"], "services") { json throws(ModelJSON.Failure) in try Service(modelJSON: json) }
        self.init(id: id, name: name, manufacturer: manufacturer, model: model, serialNumber: serialNumber, firmwareRevision: firmwareRevision,
                  category: category, roomID: roomID, isReachable: isReachable, bridgeID: bridgeID, services: services)
    }
}

// MARK: - Homes

extension ServiceReference {
    var modelJSON: JSON { ["accessoryID": .string(accessoryID.rawValue), "serviceIID": .int(serviceIID)] }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a service reference")
        self.init(accessoryID: AccessoryID(try ModelJSON.string(members["accessoryID"], "accessoryID")),
                  serviceIID: try ModelJSON.int(members["serviceIID"], "serviceIID"))
    }
}

extension CharacteristicReference {
    var modelJSON: JSON { ["accessoryID": .string(accessoryID.rawValue), "iid": .int(iid)] }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a characteristic reference")
        self.init(accessoryID: AccessoryID(try ModelJSON.string(members["accessoryID"], "accessoryID")), iid: try ModelJSON.int(members["iid"], "iid"))
    }
}

extension ActionSet.Action {
    var modelJSON: JSON { ["characteristic": characteristic.modelJSON, "value": value.modelJSON] }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "an action")
        self.init(characteristic: try CharacteristicReference(modelJSON: members["characteristic"] ?? .null),
                  value: try Value(modelJSON: members["value"] ?? .null))
    }
}

extension TimerTrigger.Recurrence {
    var modelJSON: JSON { ["unit": .string(unit.rawValue), "every": .int(every)] }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a recurrence")
        let unitName = try ModelJSON.string(members["unit"], "a recurrence's unit")
        guard let unit = Unit(rawValue: unitName) else { throw ModelJSON.Failure(description: "unknown recurrence unit \(unitName)") }
        self.init(unit: unit, every: try ModelJSON.int(members["every"], "a recurrence's every"))
    }
}

extension Home {
    /// The whole home (the last applied configuration keeps homes this way).
    var modelJSON: JSON {
        let rooms: [JSON] = rooms.map { room in ["id": .string(room.id.rawValue), "name": .string(room.name)] }
        let zones: [JSON] = zones.map { zone in
            ["id": .string(zone.id.rawValue), "name": .string(zone.name), "roomIDs": .array(zone.roomIDs.map { .string($0.rawValue) })]
        }
        let groups: [JSON] = serviceGroups.map { group in
            ["id": .string(group.id.rawValue), "name": .string(group.name), "services": .array(group.services.map(\.modelJSON))]
        }
        let sets: [JSON] = actionSets.map { set in
            ["id": .string(set.id.rawValue), "name": .string(set.name), "actions": .array(set.actions.map(\.modelJSON))]
        }
        var members: [String: JSON] = ["id": .string(id.rawValue), "name": .string(name), "isPrimary": .bool(isPrimary)]
        members["rooms"] = .array(rooms)
        members["zones"] = .array(zones)
        members["accessories"] = .array(accessories.map(\.modelJSON))
        members["serviceGroups"] = .array(groups)
        members["actionSets"] = .array(sets)
        members["triggers"] = .array(triggers.map(\.modelJSON))
        return .object(members)
    }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a home")
        let rooms = try ModelJSON.list(members["rooms"], "rooms") { json throws(ModelJSON.Failure) in
            let room = try ModelJSON.object(json, "a room")
            return Room(id: RoomID(try ModelJSON.string(room["id"], "a room's id")), name: try ModelJSON.string(room["name"], "a room's name"))
        }
        let zones = try ModelJSON.list(members["zones"], "zones") { json throws(ModelJSON.Failure) in
            let zone = try ModelJSON.object(json, "a zone")
            return Zone(id: ZoneID(try ModelJSON.string(zone["id"], "a zone's id")), name: try ModelJSON.string(zone["name"], "a zone's name"),
                        roomIDs: try ModelJSON.list(zone["roomIDs"], "roomIDs") { json throws(ModelJSON.Failure) in RoomID(try ModelJSON.string(json, "a room id")) })
        }
        let groups = try ModelJSON.list(members["serviceGroups"], "serviceGroups") { json throws(ModelJSON.Failure) in
            let group = try ModelJSON.object(json, "a service group")
            return ServiceGroup(id: ServiceGroupID(try ModelJSON.string(group["id"], "a group's id")), name: try ModelJSON.string(group["name"], "a group's name"),
                                services: try ModelJSON.list(group["services"], "a group's services", ServiceReference.init(modelJSON:)))
        }
        let actionSets = try ModelJSON.list(members["actionSets"], "actionSets") { json throws(ModelJSON.Failure) in
            let set = try ModelJSON.object(json, "an action set")
            return ActionSet(id: ActionSetID(try ModelJSON.string(set["id"], "an action set's id")), name: try ModelJSON.string(set["name"], "an action set's name"),
                             actions: try ModelJSON.list(set["actions"], "actions", ActionSet.Action.init(modelJSON:)))
        }
        self.init(id: HomeID(try ModelJSON.string(members["id"], "a home's id")), name: try ModelJSON.string(members["name"], "a home's name"),
                  isPrimary: try ModelJSON.bool(members["isPrimary"], "isPrimary"), rooms: rooms, zones: zones,
                  accessories: try ModelJSON.list(members["accessories"], "accessories", Accessory.init(modelJSON:)), serviceGroups: groups,
                  actionSets: actionSets, triggers: try ModelJSON.list(members["triggers"], "triggers", TimerTrigger.init(modelJSON:)))
    }
}

extension TimerTrigger {
    var modelJSON: JSON {
        var json: JSON = [
            "id": .string(id.rawValue), "name": .string(name), "fireDate": .double(fireDate.timeIntervalSinceReferenceDate),
            "actionSetIDs": .array(actionSetIDs.map { .string($0.rawValue) }), "isEnabled": .bool(isEnabled),
        ]
        json.setIfPresent("recurrence", recurrence?.modelJSON)
        json.setIfPresent("lastFireDate", lastFireDate.map { .double($0.timeIntervalSinceReferenceDate) })
        return json
    }

    init(modelJSON json: JSON) throws(ModelJSON.Failure) {
        let members = try ModelJSON.object(json, "a trigger")
        self.init(id: TriggerID(try ModelJSON.string(members["id"], "a trigger's id")), name: try ModelJSON.string(members["name"], "a trigger's name"),
                  fireDate: Date(timeIntervalSinceReferenceDate: try ModelJSON.double(members["fireDate"], "fireDate")),
                  recurrence: try members["recurrence"].flatMap { json throws(ModelJSON.Failure) in json == .null ? nil : try Recurrence(modelJSON: json) },
                  actionSetIDs: try ModelJSON.list(members["actionSetIDs"], "actionSetIDs") { json throws(ModelJSON.Failure) in ActionSetID(try ModelJSON.string(json, "an action set id")) },
                  isEnabled: try ModelJSON.bool(members["isEnabled"], "isEnabled"),
                  lastFireDate: try ModelJSON.optionalDouble(members["lastFireDate"], "lastFireDate").map(Date.init(timeIntervalSinceReferenceDate:)))
    }
}

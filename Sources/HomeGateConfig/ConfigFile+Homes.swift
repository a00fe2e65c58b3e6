import Accessories
import Foundation
import HomeModel
import Wire

/// The `homes:` and `simulator:` sections: the homes, their rooms and zones, and the simulated
/// accessories and bridges in them.
enum HomesSection {
    static let homeKeys = ["name", "id", "primary", "rooms", "zones", "accessories"]
    static let accessoryKeys = [
        "id", "name", "room", "category", "manufacturer", "model", "serial", "firmware", "reachable",
        "latency_ms", "failure_rate", "fail_status", "services", "bridged",
    ]
    static let serviceKeys = ["type", "name", "primary", "hidden", "characteristics"]

    /// What the sections declare.
    struct Declared {
        var homes: [Home] = []
        var devices: [Simulator.Device] = []
    }

    /// Reads the sections; no `homes:` gives one primary home called "Home".
    static func read(_ node: ConfigNode?, file: String) throws(ConfigError) -> Declared {
        guard let node else {
            return Declared(homes: [Home(id: "home", name: "Home", isPrimary: true)])
        }
        var declared = Declared()
        var accessoryIDs: [AccessoryID: ConfigNode] = [:]
        var homeNames: [String: String] = [:]
        for item in try node.sequence() {
            let (home, devices) = try readHome(item, accessoryIDs: &accessoryIDs)
            if let existing = homeNames[HomeKitName.key(home.name)] {
                throw item.error(NameError.inUse(home.name, existing: existing).description)
            }
            homeNames[HomeKitName.key(home.name)] = home.name
            if declared.homes.contains(where: { $0.id == home.id }) {
                throw item.error("the home id \"\(home.id)\" is used twice")
            }
            declared.homes.append(home)
            declared.devices += devices
        }
        if declared.homes.isEmpty { throw node.error("list at least one home") }
        let primaries = declared.homes.filter(\.isPrimary)
        if primaries.count > 1 {
            throw node.error("only one home can be primary; \(primaries.map { "\"\($0.name)\"" }.joined(separator: " and ")) both say primary: true")
        }
        if primaries.isEmpty { declared.homes[0].isPrimary = true }
        return declared
    }

    private static func readHome(_ node: ConfigNode, accessoryIDs: inout [AccessoryID: ConfigNode]) throws(ConfigError) -> (Home, [Simulator.Device]) {
        let keys = try node.mapping(allowed: homeKeys)
        let name = try homeKitName(try required(keys, "name", in: node))
        let id = HomeID(try optionalIdentifier(keys["id"]) ?? Slug.make(name, fallback: "home"))
        var home = Home(id: id, name: name, isPrimary: try keys["primary"]?.bool() ?? false)
        var namespace = Namespace(reserved: [Home.defaultRoom.name])
        for item in try keys["rooms"]?.sequence() ?? [] {
            let room = try readRoom(item)
            try namespace.claim(room.name, at: item)
            if home.rooms.contains(where: { $0.id == room.id }) || room.id == Home.defaultRoom.id {
                throw item.error("the room id \"\(room.id)\" is used twice")
            }
            home.rooms.append(room)
        }
        let rooms = Rooms(home)
        for item in try keys["zones"]?.sequence() ?? [] {
            let zone = try readZone(item, rooms: rooms)
            try namespace.claim(zone.name, at: item)
            if home.zones.contains(where: { $0.id == zone.id }) { throw item.error("the zone id \"\(zone.id)\" is used twice") }
            home.zones.append(zone)
        }
        var devices: [Simulator.Device] = []
        for item in try keys["accessories"]?.sequence() ?? [] {
            devices += try readAccessory(item, rooms: rooms, bridge: nil, accessoryIDs: &accessoryIDs)
        }
        home.accessories = devices.map(\.accessory)
        return (home, devices)
    }

    /// A room: its name, or `{name, id}`.
    private static func readRoom(_ node: ConfigNode) throws(ConfigError) -> Room {
        if case .scalar = node.node {
            let name = try homeKitName(node)
            return Room(id: RoomID(Slug.make(name, fallback: "room")), name: name)
        }
        let keys = try node.mapping(allowed: ["name", "id"])
        let name = try homeKitName(try required(keys, "name", in: node))
        let id = RoomID(try optionalIdentifier(keys["id"]) ?? Slug.make(name, fallback: "room"))
        return Room(id: id, name: name)
    }

    private static func readZone(_ node: ConfigNode, rooms: Rooms) throws(ConfigError) -> Zone {
        let keys = try node.mapping(allowed: ["name", "id", "rooms"])
        let name = try homeKitName(try required(keys, "name", in: node))
        let id = ZoneID(try optionalIdentifier(keys["id"]) ?? Slug.make(name, fallback: "zone"))
        var roomIDs: [RoomID] = []
        for item in try keys["rooms"]?.sequence() ?? [] {
            let room = try roomID(named: try item.nonEmptyString(), in: rooms, at: item)
            guard room != Home.defaultRoom.id else { throw item.error("the default room cannot be in a zone") }
            roomIDs.append(room)
        }
        return Zone(id: id, name: name, roomIDs: roomIDs)
    }

    /// An accessory (and, for a bridge, the accessories behind it) as simulator devices.
    private static func readAccessory(_ node: ConfigNode, rooms: Rooms, bridge: AccessoryID?, accessoryIDs: inout [AccessoryID: ConfigNode]) throws(ConfigError) -> [Simulator.Device] {
        let keys = try node.mapping(allowed: bridge == nil ? accessoryKeys : accessoryKeys.filter { $0 != "bridged" })
        let name = try required(keys, "name", in: node).nonEmptyString()
        let id = AccessoryID(try optionalIdentifier(keys["id"]) ?? "sim-" + Slug.make(name, fallback: "accessory"))
        if let first = accessoryIDs[id] {
            throw node.error("the accessory id \"\(id)\" is already used (line \(first.line ?? 0)); give each accessory its own id")
        }
        accessoryIDs[id] = node
        let services = try (keys["services"]?.sequence() ?? []).map { item throws(ConfigError) in try readService(item) }
        let bridgedNodes = try keys["bridged"]?.sequence() ?? []
        var blueprint = AccessoryBlueprint(id: id, name: name, bridgeID: bridge, services: services.map(\.blueprint))
        blueprint.category = try keys["category"].map(category) ?? defaultCategory(services: services.map(\.blueprint), isBridge: !bridgedNodes.isEmpty)
        if let manufacturer = keys["manufacturer"] { blueprint.manufacturer = try manufacturer.nonEmptyString() }
        if let model = keys["model"] { blueprint.model = try model.nonEmptyString() }
        if let serial = keys["serial"] { blueprint.serialNumber = try serial.nonEmptyString() }
        if let firmware = keys["firmware"] { blueprint.firmwareRevision = try firmware.nonEmptyString() }
        if let room = keys["room"] {
            let id = try roomID(named: try room.nonEmptyString(), in: rooms, at: room)
            blueprint.roomID = id == Home.defaultRoom.id ? nil : id
        }
        var accessory: Accessory
        do {
            accessory = try blueprint.build()
        } catch {
            throw locate(error, services: services, fallback: keys["services"] ?? node)
        }
        accessory.isReachable = try keys["reachable"]?.bool() ?? true
        let device = Simulator.Device(accessory: accessory, behaviour: try behaviour(keys), drifts: try drifts(services, in: accessory))
        var devices = [device]
        for item in bridgedNodes {
            devices += try readAccessory(item, rooms: rooms, bridge: id, accessoryIDs: &accessoryIDs)
        }
        return devices
    }

    /// A service as written, with the drift settings found among its characteristics.
    private struct ServiceDeclaration {
        var blueprint: AccessoryBlueprint.ServiceBlueprint
        var drifts: [(characteristic: String, node: ConfigNode)]
        /// Characteristic name -> its node, to point at in errors.
        var nodes: [String: ConfigNode]
    }

    /// The node a blueprint error is about: the characteristic's entry when known.
    private static func locate(_ error: BlueprintError, services: [ServiceDeclaration], fallback: ConfigNode) -> ConfigError {
        if let index = error.serviceIndex, services.indices.contains(index), let name = error.characteristic, let node = services[index].nodes[name] {
            return node.error(error.problem)
        }
        return fallback.error(error.message)
    }

    private static func readService(_ node: ConfigNode) throws(ConfigError) -> ServiceDeclaration {
        let keys = try node.mapping(allowed: serviceKeys)
        let typeNode = try required(keys, "type", in: node)
        let typeName = try typeNode.nonEmptyString()
        guard let type = Catalog.standard.service(typeName) else {
            let known = Catalog.standard.services.map(\.name)
            let suggestion = ConfigNode.closest(to: typeName, in: known).map { "; did you mean \"\($0)\"?" } ?? ""
            throw typeNode.error("unknown service type \"\(typeName)\"\(suggestion)")
        }
        var blueprint = AccessoryBlueprint.ServiceBlueprint(type: type.name)
        if let name = keys["name"] { blueprint.name = try name.nonEmptyString() }
        blueprint.isPrimary = try keys["primary"]?.bool() ?? false
        blueprint.isHidden = try keys["hidden"]?.bool() ?? false
        var drifts: [(String, ConfigNode)] = []
        let allowed = type.required + type.optional
        let nodes = try keys["characteristics"]?.mapping(allowed: allowed) ?? [:]
        for (name, valueNode) in nodes {
            guard let standard = Catalog.standard.characteristic(name) else { throw valueNode.error("unknown characteristic \"\(name)\"") }
            if case .mapping = valueNode.node {
                let entry = try valueNode.mapping(allowed: ["value", "min", "max", "step", "drift"])
                if entry["min"] != nil || entry["max"] != nil || entry["step"] != nil {
                    blueprint.bounds[name] = AccessoryBlueprint.Bounds(minValue: try optionalNumber(entry["min"]), maxValue: try optionalNumber(entry["max"]),
                                                                      minStep: try optionalNumber(entry["step"]))
                }
                let initial: Value? = try entry["value"].map { node throws(ConfigError) in try value(node, of: standard) } ?? nil
                blueprint.characteristics.updateValue(initial, forKey: name) // listed: included, even without a value
                if let drift = entry["drift"] { drifts.append((name, drift)) }
            } else {
                blueprint.characteristics[name] = try value(valueNode, of: standard)
            }
        }
        return ServiceDeclaration(blueprint: blueprint, drifts: drifts, nodes: nodes)
    }

    /// An initial value, parsed by the characteristic's format (bounds are checked on build).
    private static func value(_ node: ConfigNode, of type: CharacteristicType) throws(ConfigError) -> Value? {
        if case .scalar(let scalar) = node.node, scalar.string.isEmpty { return nil }
        let text = try node.string()
        do {
            // Bounds are checked when the accessory is built, with the device's own bounds.
            return try Value.parse(payload: text, format: type.format, name: type.name)
        } catch {
            throw node.error(error.message)
        }
    }

    private static func drifts(_ services: [ServiceDeclaration], in accessory: Accessory) throws(ConfigError) -> [Simulator.Drift] {
        var result: [Simulator.Drift] = []
        // Services in the built accessory: index 0 is Accessory Information.
        for (service, built) in zip(services, accessory.services.dropFirst()) {
            for (name, node) in service.drifts {
                guard let characteristic = built.characteristic(ofType: name) else { continue }
                guard characteristic.format.isNumeric else { throw node.error("only numeric characteristics can drift; \(name) is \(characteristic.format.rawValue)") }
                let keys = try node.mapping(allowed: ["min", "max", "step", "every"])
                let lower = try number(try required(keys, "min", in: node))
                let upper = try number(try required(keys, "max", in: node))
                guard lower < upper else { throw node.error("min (\(Value.format(lower))) must be below max (\(Value.format(upper)))") }
                if let minimum = characteristic.minValue, lower < minimum { throw node.error("min \(Value.format(lower)) is below \(name)'s minimum \(Value.format(minimum))") }
                if let maximum = characteristic.maxValue, upper > maximum { throw node.error("max \(Value.format(upper)) is above \(name)'s maximum \(Value.format(maximum))") }
                let step = try number(try required(keys, "step", in: node))
                guard step > 0 else { throw (keys["step"] ?? node).error("must be positive, got \(Value.format(step))") }
                if characteristic.format != .float, step != step.rounded() {
                    throw (keys["step"] ?? node).error("\(name) takes whole numbers; the step must be one, got \(Value.format(step))")
                }
                if let minStep = characteristic.minStep, minStep > 0, abs((step / minStep).rounded() - step / minStep) > 1e-9 {
                    throw (keys["step"] ?? node).error("must be a multiple of \(name)'s step \(Value.format(minStep)), got \(Value.format(step))")
                }
                let every = try required(keys, "every", in: node).seconds(in: 0.01...86_400)
                result.append(Simulator.Drift(iid: characteristic.iid, range: lower...upper, step: step, interval: every))
            }
        }
        return result
    }

    private static func behaviour(_ keys: [String: ConfigNode]) throws(ConfigError) -> Simulator.Behaviour {
        var behaviour = Simulator.Behaviour()
        if let latency = keys["latency_ms"] { behaviour.latency = .milliseconds(try latency.int(in: 0...600_000, unit: "milliseconds")) }
        if let rate = keys["failure_rate"] {
            let value = try number(rate)
            guard (0...1).contains(value) else { throw rate.error("must be within 0...1, got \(Value.format(value))") }
            behaviour.failureRate = value
        }
        if let status = keys["fail_status"] {
            let code = try status.int(in: -70412...0)
            guard let hap = HAPStatus(rawValue: code), hap != .success else {
                throw status.error("expected a HAP status from -70401 to -70412, got \(code)")
            }
            behaviour.failStatus = hap
            if keys["failure_rate"] == nil { behaviour.failureRate = 1 }
        }
        return behaviour
    }

    private static func category(_ node: ConfigNode) throws(ConfigError) -> HomeModel.Category {
        let name = try node.nonEmptyString()
        guard let category = HomeModel.Category(name: name) else {
            let known = HomeModel.Category.allCases.map(\.name)
            let suggestion = ConfigNode.closest(to: name, in: known).map { "; did you mean \"\($0)\"?" } ?? ""
            throw node.error("unknown category \"\(name)\"\(suggestion)")
        }
        return category
    }

    /// The category a person would expect from the first service (a bridge: `bridge`).
    static func defaultCategory(services: [AccessoryBlueprint.ServiceBlueprint], isBridge: Bool) -> HomeModel.Category {
        if isBridge { return .bridge }
        switch services.first(where: \.isPrimary)?.type ?? services.first?.type {
        case "lightbulb": return .lightbulb
        case "outlet": return .outlet
        case "switch": return .switch
        case "thermostat", "heater-cooler": return .thermostat
        case "lock-mechanism": return .doorLock
        case "garage-door-opener": return .garageDoorOpener
        case "fan", "fanv2": return .fan
        case "window-covering": return .windowCovering
        case "door": return .door
        case "window": return .window
        case "security-system": return .securitySystem
        case "stateless-programmable-switch": return .programmableSwitch
        case let type? where type.hasSuffix("-sensor"): return .sensor
        default: return .other
        }
    }

    // MARK: Small readers

    private static func required(_ keys: [String: ConfigNode], _ key: String, in node: ConfigNode) throws(ConfigError) -> ConfigNode {
        guard let value = keys[key] else { throw node.error("\"\(key)\" is required here") }
        return value
    }

    private static func homeKitName(_ node: ConfigNode) throws(ConfigError) -> String {
        let text = try node.string()
        do {
            return try HomeKitName(text).text
        } catch {
            throw node.error(error.description)
        }
    }

    /// An id: letters, digits, `-`, `_` and `.`, so it reads well in `$layout` and requests.
    private static func identifier(_ node: ConfigNode) throws(ConfigError) -> String {
        let text = try node.nonEmptyString()
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw node.error("an id may contain only ASCII letters, digits, '-', '_' and '.', got \"\(text)\"")
        }
        return text
    }

    private static func optionalIdentifier(_ node: ConfigNode?) throws(ConfigError) -> String? {
        guard let node else { return nil }
        return try identifier(node)
    }

    private static func optionalNumber(_ node: ConfigNode?) throws(ConfigError) -> Double? {
        guard let node else { return nil }
        return try number(node)
    }

    private static func number(_ node: ConfigNode) throws(ConfigError) -> Double {
        let text = try node.string()
        guard let value = Double(text), value.isFinite else { throw node.error("expected a number, got \"\(text)\"") }
        return value
    }

    /// A home's rooms by comparison key, built once per home.
    struct Rooms {
        let home: Home
        private let byKey: [String: Room]

        init(_ home: Home) {
            self.home = home
            byKey = Dictionary(home.rooms.map { (HomeKitName.key($0.name), $0) }, uniquingKeysWith: { first, _ in first })
        }

        func room(_ name: String) -> RoomID? {
            let key = HomeKitName.key(name)
            return key == HomeKitName.key(Home.defaultRoom.name) ? Home.defaultRoom.id : byKey[key]?.id
        }
    }

    private static func roomID(named name: String, in rooms: Rooms, at node: ConfigNode) throws(ConfigError) -> RoomID {
        let home = rooms.home
        guard let room = rooms.room(name) else {
            let known = home.rooms.map { "\"\($0.name)\"" }.joined(separator: ", ")
            throw node.error("no room \"\(name)\" in \(home.name) (its rooms: \(known.isEmpty ? "none" : known))")
        }
        return room
    }

    /// The names used in one home (rooms, zones, ...), compared the HomeKit way.
    private struct Namespace {
        var names: [String: String] = [:]

        init(reserved: [String]) {
            for name in reserved { names[HomeKitName.key(name)] = name }
        }

        mutating func claim(_ name: String, at node: ConfigNode) throws(ConfigError) {
            if let existing = names[HomeKitName.key(name)] {
                throw node.error(NameError.inUse(name, existing: existing).description)
            }
            names[HomeKitName.key(name)] = name
        }
    }
}


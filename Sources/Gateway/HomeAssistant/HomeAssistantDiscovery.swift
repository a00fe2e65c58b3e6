import HomeModel
import Wire

/// Home Assistant MQTT discovery: one retained config per accessory (device-based discovery).
///
/// Each accessory is one Home Assistant device, announced on
/// `<prefix>/device/homegate_<id>/config` with one component per visible service that Home
/// Assistant has a platform for (a lightbulb is a `light`, a lock mechanism a `lock`, ...).
///
/// Identity comes from stable ids only: the topic's object id, the device's identifier and every
/// component's `unique_id` are made from the accessory's id (and the service's iid), so a rename
/// or a move changes names and the topics inside the config, never what Home Assistant keys its
/// registries by. The topics are the gateway's own: a characteristic's value topic is the state
/// topic (JSON scalars: `true`, `1`, `21.5`), `<value topic>/set` the command topic. A component
/// is available while both the gateway (`<base>/$state`) and the accessory are: its reachability
/// for Home Assistant is `<prefix>/device/homegate_<id>/reachable`
/// (``reachabilityTopic(for:prefix:)``), the accessory's `$reachable` on a topic that a rename or
/// a move does not change. (Home Assistant takes an entity whose availability topic changed as
/// unavailable until that topic's first message: with `$reachable`, whose topic follows the
/// accessory's name, every rename made the entities unavailable for a moment.)
enum HomeAssistantDiscovery {
    /// `origin`: the software that publishes the configs.
    static let originName = "HomeGate"
    static let originVersion = Gateway.version

    /// The discovery topic and payload for `accessory`, or nil if it has nothing Home Assistant
    /// can show (a device config without components creates nothing there).
    ///
    /// A bridge gets a `connectivity` binary sensor from its `$reachable`, so that it is a named
    /// device for the accessories behind it to point at with `via_device`.
    /// - Parameters:
    ///   - base: the gateway's base topic (`homegate`), for `<base>/$state`.
    ///   - prefix: Home Assistant's discovery prefix (`homeassistant`).
    ///   - roomName: the accessory's room, suggested as its area (not for the default room).
    ///   - bridgeID: the accessory's bridge, for `via_device`.
    static func config(for accessory: Accessory, in home: Home, map: TopicMap, base: String, prefix: String, roomName: String,
                       bridgeID: AccessoryID?) -> (topic: String, payload: JSON)? {
        guard let accessoryTopic = map.topic(of: .accessory(home.id, accessory.id)) else { return nil }
        let objectID = Self.objectID(of: accessory.id)
        let reachable = reachabilityTopic(for: accessory.id, prefix: prefix)
        let builder = ComponentBuilder(accessory: accessory, home: home.id, map: map)
        var components: [String: JSON] = [:]
        for service in accessory.visibleServices {
            guard var component = builder.component(for: service) else { continue }
            component["unique_id"] = .string("\(objectID)_\(service.iid)")
            component["qos"] = 1
            if let name = componentName(service, of: accessory, component: component) { component["name"] = name }
            components["\(service.type)_\(service.iid)"] = .object(component)
        }
        for (key, component) in builder.characteristicComponents() {
            var component = component
            component["unique_id"] = .string("\(objectID)_\(key)")
            component["qos"] = 1
            components[key] = .object(component)
        }
        if var identify = builder.identifyButton(base: base) {
            identify["unique_id"] = .string("\(objectID)_identify")
            identify["qos"] = 1
            components["identify"] = .object(identify)
        }
        // Adaptive Lighting, a switch beside the light (as the Home app shows it).
        for bulb in AdaptiveLightingBulb.all(of: accessory) {
            guard let serviceTopic = map.topic(of: .service(home.id, bulb.service)) else { continue }
            let state = TopicGrammar.topic(serviceTopic, .adaptiveLighting)
            components["adaptive_lighting_\(bulb.service.serviceIID)"] = .object([
                "platform": "switch", "unique_id": .string("\(objectID)_adaptive_lighting_\(bulb.service.serviceIID)"), "qos": 1,
                "name": "Adaptive Lighting", "entity_category": "config", "icon": "mdi:theme-light-dark",
                "state_topic": .string(state), "command_topic": .string("\(state)/set"),
                "payload_on": "on", "payload_off": "off", "state_on": "on", "state_off": "off",
            ])
        }
        if accessory.isCamera {
            // HA's MQTT camera shows the last image received on `topic`: raw JPEG bytes.
            components["snapshot"] = .object([
                "platform": "camera", "unique_id": .string("\(objectID)_snapshot"), "qos": 1, "name": "Snapshot",
                "topic": .string(TopicGrammar.topic(accessoryTopic, .snapshot)),
            ])
        }
        // Device triggers have no entity and no unique id.
        for (key, trigger) in builder.deviceTriggers() {
            var trigger = trigger
            trigger["qos"] = 1
            components[key] = .object(trigger)
        }
        if accessory.category == .bridge || home.accessories.contains(where: { $0.bridgeID == accessory.id }) {
            components["reachable"] = .object([
                "platform": "binary_sensor", "unique_id": .string("\(objectID)_reachable"), "qos": 1,
                "device_class": "connectivity", "entity_category": "diagnostic",
                "state_topic": .string(reachable), "payload_on": "true", "payload_off": "false",
                // Its own availability: unreachable is its state, not a reason to be unavailable.
                "availability": [gatewayAvailability(base: base)],
            ])
        }
        guard !components.isEmpty else { return nil }
        // When it was last heard from: a diagnostic timestamp, off until a person turns it on
        // (as zigbee2mqtt's last_seen).
        components["last_seen"] = .object([
            "platform": "sensor", "unique_id": .string("\(objectID)_last_seen"), "qos": 1, "name": "Last seen",
            "device_class": "timestamp", "entity_category": "diagnostic", "enabled_by_default": false,
            "state_topic": .string(TopicGrammar.topic(accessoryTopic, .lastSeen)),
        ])

        // `connections` always, if empty: Home Assistant 2025.4 reads the device block's
        // `connections` unguarded when it sets an entity up, and on a busy machine it sometimes
        // reads the block as published rather than as its schema completed it (KeyError:
        // 'connections'; that entity was then never made: seen in 1 of 10 runs beside a build).
        var device: [String: JSON] = ["identifiers": [.string(objectID)], "connections": [], "name": .string(accessory.name)]
        for (key, value) in [("manufacturer", accessory.manufacturer), ("model", accessory.model),
                             ("serial_number", accessory.serialNumber), ("sw_version", accessory.firmwareRevision)] where !value.isEmpty {
            device[key] = .string(value)
        }
        if roomName != Home.defaultRoom.name { device["suggested_area"] = .string(roomName) }
        if let bridgeID { device["via_device"] = .string(Self.objectID(of: bridgeID)) }

        let payload: JSON = .object([
            "device": .object(device),
            "origin": .object(["name": .string(originName), "sw_version": .string(originVersion)]),
            "availability": [
                gatewayAvailability(base: base),
                .object(["topic": .string(reachable), "payload_available": "true", "payload_not_available": "false"]),
            ],
            "availability_mode": "all",
            "components": .object(components),
        ])
        return (topic(for: accessory.id, prefix: prefix), payload)
    }

    /// The discovery topic of an accessory (also where an empty retained message removes it).
    static func topic(for id: AccessoryID, prefix: String) -> String {
        "\(prefix)/device/\(objectID(of: id))/config"
    }

    /// Where the gateway keeps an accessory's reachability for Home Assistant, retained, as its
    /// `$reachable` (`true`, `false`), beside its config: a topic of its id, which no rename or
    /// move changes.
    static func reachabilityTopic(for id: AccessoryID, prefix: String) -> String {
        "\(prefix)/device/\(objectID(of: id))/reachable"
    }

    /// `homegate_` and the accessory's id in the characters Home Assistant allows
    /// (`[a-zA-Z0-9_-]`): letters, digits and `-` stay, `_` becomes `__`, any other byte `_xx`
    /// (hex), so two different ids never give the same object id.
    static func objectID(of id: AccessoryID) -> String {
        let hex = Array("0123456789abcdef".unicodeScalars)
        var result = "homegate_"
        for byte in id.rawValue.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "_"):
                result += "__"
            default:
                result.unicodeScalars.append(contentsOf: ["_", hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return result
    }

    private static func gatewayAvailability(base: String) -> JSON {
        .object(["topic": .string(TopicGrammar.topic(base, .state)), "payload_available": "online", "payload_not_available": "offline"])
    }

    /// The service's own name when it has one besides the accessory's; otherwise a sensor is
    /// named by its device class (key left out: "Temperature"), anything else by the device
    /// (null).
    private static func componentName(_ service: Service, of accessory: Accessory, component: [String: JSON]) -> JSON? {
        if let name = service.name, !name.isEmpty, Slug.canonical(name) != Slug.canonical(accessory.name) { return .string(name) }
        // A remote's buttons, by their label index: "Button 1".
        if case .string("event") = component["platform"], let index = service.characteristic(ofType: "service-label-index")?.value?.number {
            return .string("Button \(Int(index))")
        }
        if case .string(let platform) = component["platform"], platform == "sensor" || platform == "binary_sensor",
           component["device_class"] != nil {
            return nil
        }
        return .null
    }
}

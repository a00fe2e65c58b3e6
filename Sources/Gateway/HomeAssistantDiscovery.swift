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
/// is available while both the gateway (`<base>/$state`) and the accessory (`$reachable`) are.
enum HomeAssistantDiscovery {
    /// `origin`: the software that publishes the configs.
    static let originName = "HomeGate"
    static let originVersion = "0.1.0"

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
        let builder = ComponentBuilder(accessory: accessory, home: home.id, map: map)
        var components: [String: JSON] = [:]
        for service in accessory.visibleServices {
            guard var component = builder.component(for: service) else { continue }
            component["unique_id"] = .string("\(objectID)_\(service.iid)")
            component["qos"] = 1
            if let name = componentName(service, of: accessory, component: component) { component["name"] = name }
            components["\(service.type)_\(service.iid)"] = .object(component)
        }
        for (key, component) in builder.measurementSensors() {
            var component = component
            component["unique_id"] = .string("\(objectID)_\(key)")
            component["qos"] = 1
            components[key] = .object(component)
        }
        if accessory.category == .bridge || home.accessories.contains(where: { $0.bridgeID == accessory.id }) {
            components["reachable"] = .object([
                "platform": "binary_sensor", "unique_id": .string("\(objectID)_reachable"), "qos": 1,
                "device_class": "connectivity", "entity_category": "diagnostic",
                "state_topic": .string("\(accessoryTopic)/$reachable"), "payload_on": "true", "payload_off": "false",
                // Its own availability: unreachable is its state, not a reason to be unavailable.
                "availability": [gatewayAvailability(base: base)],
            ])
        }
        guard !components.isEmpty else { return nil }

        var device: [String: JSON] = ["identifiers": [.string(objectID)], "name": .string(accessory.name)]
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
                .object(["topic": .string("\(accessoryTopic)/$reachable"), "payload_available": "true", "payload_not_available": "false"]),
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
        .object(["topic": .string("\(base)/$state"), "payload_available": "online", "payload_not_available": "offline"])
    }

    /// The service's own name when it has one besides the accessory's; otherwise a sensor is
    /// named by its device class (key left out: "Temperature"), anything else by the device
    /// (null).
    private static func componentName(_ service: Service, of accessory: Accessory, component: [String: JSON]) -> JSON? {
        if let name = service.name, !name.isEmpty, Slug.canonical(name) != Slug.canonical(accessory.name) { return .string(name) }
        if case .string(let platform) = component["platform"], platform == "sensor" || platform == "binary_sensor",
           component["device_class"] != nil {
            return nil
        }
        return .null
    }
}

/// The component of one service: its platform and topics (the caller adds identity and name).
private struct ComponentBuilder {
    let accessory: Accessory
    let home: HomeID
    let map: TopicMap

    func component(for service: Service) -> [String: JSON]? {
        switch service.type {
        case "lightbulb": return light(service)
        case "switch": return toggle(service, deviceClass: "switch")
        case "outlet": return toggle(service, deviceClass: "outlet")
        case "temperature-sensor": return sensor(service, "current-temperature", deviceClass: "temperature", unit: "°C")
        case "humidity-sensor": return sensor(service, "current-relative-humidity", deviceClass: "humidity", unit: "%")
        case "light-sensor": return sensor(service, "current-ambient-light-level", deviceClass: "illuminance", unit: "lx")
        case "battery-service": return battery(service)
        // HAP contact-sensor-state: 0 contact detected (closed), 1 not detected (open).
        case "contact-sensor": return binarySensor(service, "contact-sensor-state", deviceClass: "opening")
        case "motion-sensor": return binarySensor(service, "motion-detected", deviceClass: "motion")
        case "occupancy-sensor": return binarySensor(service, "occupancy-detected", deviceClass: "occupancy")
        case "leak-sensor": return binarySensor(service, "leak-detected", deviceClass: "moisture")
        case "smoke-sensor": return binarySensor(service, "smoke-detected", deviceClass: "smoke")
        case "carbon-monoxide-sensor": return binarySensor(service, "carbon-monoxide-detected", deviceClass: "carbon_monoxide")
        case "lock-mechanism": return lock(service)
        case "garage-door-opener": return garageDoor(service)
        case "window-covering": return positionCover(service, deviceClass: nil)
        case "door": return positionCover(service, deviceClass: "door")
        case "window": return positionCover(service, deviceClass: "window")
        case "thermostat": return climate(service)
        case "fan", "fanv2": return fan(service)
        default: return nil
        }
    }

    /// What Home Assistant's own HomeKit integration shows as sensors beside a service: vendor
    /// measurements the catalog knows (Eve's, ConnectSense's, Koogeek's, VOCOlinc's power,
    /// energy, voltage, current; Eve's air pressure; Netatmo's noise), by vendor name, with
    /// Home Assistant's device class, unit and state class. Keyed `<vendor name>_<iid>`.
    func measurementSensors() -> [(String, [String: JSON])] {
        var sensors: [(String, [String: JSON])] = []
        for service in accessory.visibleServices {
            for characteristic in service.characteristics where characteristic.isReadable {
                guard let vendor = Catalog.standard.vendorCharacteristic(characteristic.uuid),
                      let kind = Self.measurements[vendor.name], let state = topic(characteristic) else { continue }
                sensors.append(("\(vendor.name)_\(characteristic.iid)", [
                    "platform": "sensor", "state_topic": .string(state), "device_class": .string(kind.deviceClass),
                    "unit_of_measurement": .string(kind.unit), "state_class": .string(kind.stateClass),
                ]))
            }
        }
        return sensors
    }

    /// Vendor measurement names -> Home Assistant's device class, unit and state class.
    private static let measurements: [String: (deviceClass: String, unit: String, stateClass: String)] = [
        "power": ("power", "W", "measurement"),
        "energy": ("energy", "kWh", "total_increasing"),
        "voltage": ("voltage", "V", "measurement"),
        "current": ("current", "A", "measurement"),
        "air-pressure": ("atmospheric_pressure", "hPa", "measurement"),
        "noise": ("sound_pressure", "dB", "measurement"),
    ]

    // MARK: Platforms

    /// `on`, `brightness` (0...100), `color-temperature` (mireds, as HAP has it). Hue and
    /// saturation are two topics where Home Assistant wants one `h,s`: left out.
    private func light(_ service: Service) -> [String: JSON]? {
        guard var component = onOff(service, "on", platform: "light") else { return nil }
        if let state = stateTopic(service, "brightness"), let command = commandTopic(service, "brightness") {
            component["brightness_state_topic"] = .string(state)
            component["brightness_command_topic"] = .string(command)
            component["brightness_scale"] = 100
        }
        if let temperature = service.characteristic(ofType: "color-temperature"),
           let state = stateTopic(service, "color-temperature"), let command = commandTopic(service, "color-temperature") {
            component["color_temp_state_topic"] = .string(state)
            component["color_temp_command_topic"] = .string(command)
            component["min_mireds"] = .int(Int((temperature.minValue ?? 140).rounded(.up)))
            component["max_mireds"] = .int(Int((temperature.maxValue ?? 500).rounded(.down)))
        }
        return component
    }

    private func toggle(_ service: Service, deviceClass: String) -> [String: JSON]? {
        guard var component = onOff(service, "on", platform: "switch") else { return nil }
        component["device_class"] = .string(deviceClass)
        return component
    }

    private func sensor(_ service: Service, _ type: String, deviceClass: String, unit: String) -> [String: JSON]? {
        guard let state = stateTopic(service, type) else { return nil }
        return ["platform": "sensor", "state_topic": .string(state), "device_class": .string(deviceClass),
                "unit_of_measurement": .string(unit), "state_class": "measurement"]
    }

    /// `battery-level` as a sensor; without it, `status-low-battery` as a binary sensor (on: low).
    private func battery(_ service: Service) -> [String: JSON]? {
        var component = sensor(service, "battery-level", deviceClass: "battery", unit: "%")
            ?? binarySensor(service, "status-low-battery", deviceClass: "battery")
        component?["entity_category"] = "diagnostic"
        return component
    }

    /// A detector: on when the characteristic is true (bool) or 1 (numeric).
    private func binarySensor(_ service: Service, _ type: String, deviceClass: String) -> [String: JSON]? {
        guard let characteristic = service.characteristic(ofType: type), let state = stateTopic(service, type) else { return nil }
        let (on, off) = Self.payloads(characteristic)
        return ["platform": "binary_sensor", "state_topic": .string(state), "device_class": .string(deviceClass),
                "payload_on": .string(on), "payload_off": .string(off)]
    }

    /// HAP lock-current-state: 0 unsecured, 1 secured, 2 jammed, 3 unknown;
    /// lock-target-state: 0 unsecured, 1 secured. Home Assistant resets to unknown on `None`.
    private func lock(_ service: Service) -> [String: JSON]? {
        guard let state = stateTopic(service, "lock-current-state"), let command = commandTopic(service, "lock-target-state") else { return nil }
        return [
            "platform": "lock", "state_topic": .string(state), "command_topic": .string(command),
            "value_template": .string(Self.template([("0", "UNLOCKED"), ("1", "LOCKED"), ("2", "JAMMED")], otherwise: "None")),
            "state_locked": "LOCKED", "state_unlocked": "UNLOCKED", "state_jammed": "JAMMED",
            "payload_lock": "1", "payload_unlock": "0",
        ]
    }

    /// HAP current-door-state: 0 open, 1 closed, 2 opening, 3 closing, 4 stopped;
    /// target-door-state: 0 open, 1 closed. No stop.
    private func garageDoor(_ service: Service) -> [String: JSON]? {
        guard let state = stateTopic(service, "current-door-state"), let command = commandTopic(service, "target-door-state") else { return nil }
        return [
            "platform": "cover", "device_class": "garage", "state_topic": .string(state), "command_topic": .string(command),
            "value_template": .string(Self.template([("0", "open"), ("1", "closed"), ("2", "opening"), ("3", "closing"), ("4", "stopped")],
                                                    otherwise: "None")),
            "payload_open": "0", "payload_close": "1", "payload_stop": .null,
        ]
    }

    /// Window coverings, doors and windows: position 0 (closed) ... 100 (open). Open and close
    /// write the target position's bounds; HAP position-state (0 decreasing, 1 increasing,
    /// 2 stopped) gives closing and opening. No stop (hold-position is a characteristic of its own).
    private func positionCover(_ service: Service, deviceClass: String?) -> [String: JSON]? {
        guard let target = service.characteristic(ofType: "target-position"),
              let position = stateTopic(service, "current-position"), let command = commandTopic(service, "target-position") else { return nil }
        var component: [String: JSON] = [
            "platform": "cover", "position_topic": .string(position), "set_position_topic": .string(command),
            "position_open": 100, "position_closed": 0,
            "command_topic": .string(command), "payload_open": .string(Value.format(target.maxValue ?? 100)),
            "payload_close": .string(Value.format(target.minValue ?? 0)), "payload_stop": .null,
        ]
        if let deviceClass { component["device_class"] = .string(deviceClass) }
        if let state = stateTopic(service, "position-state") {
            component["state_topic"] = .string(state)
            component["value_template"] = .string(Self.template([("0", "closing"), ("1", "opening"), ("2", "stopped")], otherwise: "None"))
        }
        return component
    }

    /// HAP target-heating-cooling-state 0 off, 1 heat, 2 cool, 3 auto (only the valid values the
    /// device declares); current-heating-cooling-state 0 idle, 1 heating, 2 cooling.
    private func climate(_ service: Service) -> [String: JSON]? {
        var component: [String: JSON] = ["platform": "climate", "temperature_unit": "C"]
        let names: [(value: Double, mode: String)] = [(0, "off"), (1, "heat"), (2, "cool"), (3, "auto")]
        if let mode = service.characteristic(ofType: "target-heating-cooling-state"),
           let state = stateTopic(service, "target-heating-cooling-state"), let command = commandTopic(service, "target-heating-cooling-state") {
            let valid = names.filter { name in
                (mode.validValues?.contains(name.value) ?? true) && name.value >= (mode.minValue ?? 0) && name.value <= (mode.maxValue ?? 3)
            }
            let pairs = valid.map { (Value.format($0.value), $0.mode) }
            component["modes"] = .array(valid.map { JSON.string($0.mode) })
            component["mode_state_topic"] = .string(state)
            component["mode_state_template"] = .string(Self.template(pairs))
            component["mode_command_topic"] = .string(command)
            component["mode_command_template"] = .string(Self.template(pairs.map { ($0.1, $0.0) }))
        }
        if let target = service.characteristic(ofType: "target-temperature"),
           let state = stateTopic(service, "target-temperature"), let command = commandTopic(service, "target-temperature") {
            component["temperature_state_topic"] = .string(state)
            component["temperature_command_topic"] = .string(command)
            if let minValue = target.minValue { component["min_temp"] = .double(minValue) }
            if let maxValue = target.maxValue { component["max_temp"] = .double(maxValue) }
            if let step = target.minStep, step > 0 { component["temp_step"] = .double(step) }
        }
        guard component["mode_command_topic"] != nil || component["temperature_command_topic"] != nil else { return nil }
        if let current = stateTopic(service, "current-temperature") { component["current_temperature_topic"] = .string(current) }
        if let humidity = stateTopic(service, "current-relative-humidity") { component["current_humidity_topic"] = .string(humidity) }
        if let action = stateTopic(service, "current-heating-cooling-state") {
            component["action_topic"] = .string(action)
            component["action_template"] = .string(Self.template([("0", "idle"), ("1", "heating"), ("2", "cooling")]))
        }
        return component
    }

    /// `fan`: on/off by `on`; `fanv2`: by `active` (1/0). Speed from `rotation-speed` (percent).
    private func fan(_ service: Service) -> [String: JSON]? {
        guard var component = onOff(service, service.type == "fanv2" ? "active" : "on", platform: "fan") else { return nil }
        if let state = stateTopic(service, "rotation-speed"), let command = commandTopic(service, "rotation-speed") {
            component["percentage_state_topic"] = .string(state)
            component["percentage_command_topic"] = .string(command)
            // Home Assistant reads the percentage as an integer; a float speed may have a fraction.
            component["percentage_value_template"] = "{{ value | float(0) | round(0) | int }}"
        }
        return component
    }

    // MARK: Helpers

    /// State and command on one characteristic, with the payloads of its format.
    private func onOff(_ service: Service, _ type: String, platform: String) -> [String: JSON]? {
        guard let characteristic = service.characteristic(ofType: type),
              let state = stateTopic(service, type), let command = commandTopic(service, type) else { return nil }
        let (on, off) = Self.payloads(characteristic)
        return ["platform": .string(platform), "state_topic": .string(state), "command_topic": .string(command),
                "payload_on": .string(on), "payload_off": .string(off)]
    }

    /// The topic a readable characteristic's value is published on.
    private func stateTopic(_ service: Service, _ type: String) -> String? {
        guard let characteristic = service.characteristic(ofType: type), characteristic.isReadable else { return nil }
        return topic(characteristic)
    }

    /// The set topic of a writable characteristic.
    private func commandTopic(_ service: Service, _ type: String) -> String? {
        guard let characteristic = service.characteristic(ofType: type), characteristic.isWritable,
              let topic = topic(characteristic) else { return nil }
        return topic + "/set"
    }

    private func topic(_ characteristic: Characteristic) -> String? {
        map.topic(of: .characteristic(home, CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)))
    }

    /// True and false as the characteristic's value topic carries them: `true`/`false` for a
    /// bool, `1`/`0` for a number.
    private static func payloads(_ characteristic: Characteristic) -> (on: String, off: String) {
        characteristic.format == .bool ? ("true", "false") : ("1", "0")
    }

    /// A Jinja template mapping the payload (`value`) through `pairs`; anything else renders
    /// `otherwise` (empty: Home Assistant ignores it).
    static func template(_ pairs: [(String, String)], otherwise: String = "") -> String {
        var text = ""
        for (index, (from, to)) in pairs.enumerated() {
            text += "{% \(index == 0 ? "if" : "elif") value == '\(from)' %}\(to)"
        }
        guard !pairs.isEmpty else { return otherwise }
        return text + (otherwise.isEmpty ? "" : "{% else %}\(otherwise)") + "{% endif %}"
    }
}

import HomeModel
import Wire

/// The component of one service: its platform and topics (the caller adds identity and name).
///
/// Which service becomes which platform follows Home Assistant's own HomeKit integration
/// (`homekit_controller`), with MQTT's platforms: a valve is a `valve`, a television (MQTT has
/// no media player) a power switch.
struct ComponentBuilder {
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
        case "air-purifier": return airPurifier(service)
        case "heater-cooler": return heaterCooler(service)
        case "humidifier-dehumidifier": return humidifier(service)
        case "security-system": return securitySystem(service)
        case "valve", "faucet": return valve(service)
        case "irrigation-system": return onOff(service, "active", platform: "switch")
        case "television": return onOff(service, "active", platform: "switch")
        case "stateless-programmable-switch": return event(service, deviceClass: "button")
        case "doorbell": return event(service, deviceClass: "doorbell")
        default: return nil
        }
    }

    // MARK: Platforms

    /// `on`, `brightness` (0...100), `color-temperature` (mireds, as HAP has it), and colour:
    /// hue and saturation read together from the service's `$color` and written together by a
    /// service-level set, so the device gets one write.
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
        if stateTopic(service, "hue") != nil, stateTopic(service, "saturation") != nil,
           commandTopic(service, "hue") != nil, commandTopic(service, "saturation") != nil, let serviceTopic = topic(service) {
            component["hs_state_topic"] = .string("\(serviceTopic)/$color")
            // An empty payload (the topic cleared after a rename) renders nothing, which Home Assistant ignores.
            component["hs_value_template"] = "{% if value_json is defined %}{{ value_json.hue }},{{ value_json.saturation }}{% endif %}"
            component["hs_command_topic"] = .string("\(serviceTopic)/set")
            component["hs_command_template"] = #"{"hue": {{ hue }}, "saturation": {{ sat }}}"#
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

    /// Window coverings, doors and windows: position 0 (closed) ... 100 (open). Open, close and
    /// stop are service-level sets (`{"target-position": 100}`, `{"hold-position": true}`) on
    /// the service's `set`; set position writes `target-position`; HAP position-state
    /// (0 decreasing, 1 increasing, 2 stopped) gives closing and opening; tilt from the
    /// horizontal or vertical tilt angles (-90...90 degrees).
    private func positionCover(_ service: Service, deviceClass: String?) -> [String: JSON]? {
        guard let target = service.characteristic(ofType: "target-position"), let serviceTopic = topic(service),
              let position = stateTopic(service, "current-position"), let command = commandTopic(service, "target-position") else { return nil }
        var component: [String: JSON] = [
            "platform": "cover", "position_topic": .string(position), "set_position_topic": .string(command),
            "position_open": 100, "position_closed": 0, "command_topic": .string("\(serviceTopic)/set"),
            "payload_open": .string(#"{"target-position": \#(Value.format(target.maxValue ?? 100))}"#),
            "payload_close": .string(#"{"target-position": \#(Value.format(target.minValue ?? 0))}"#),
            "payload_stop": commandTopic(service, "hold-position") == nil ? .null : #"{"hold-position": true}"#,
        ]
        if let deviceClass { component["device_class"] = .string(deviceClass) }
        if let state = stateTopic(service, "position-state") {
            component["state_topic"] = .string(state)
            component["value_template"] = .string(Self.template([("0", "closing"), ("1", "opening"), ("2", "stopped")], otherwise: "None"))
        }
        for axis in ["horizontal", "vertical"] {
            guard let angle = service.characteristic(ofType: "target-\(axis)-tilt-angle"),
                  let state = stateTopic(service, "current-\(axis)-tilt-angle"), let tilt = commandTopic(service, "target-\(axis)-tilt-angle") else { continue }
            component["tilt_status_topic"] = .string(state)
            component["tilt_command_topic"] = .string(tilt)
            component["tilt_min"] = .int(Int(angle.minValue ?? -90))
            component["tilt_max"] = .int(Int(angle.maxValue ?? 90))
            component["tilt_closed_value"] = .int(Int(angle.minValue ?? -90))
            component["tilt_opened_value"] = .int(Int(angle.maxValue ?? 90))
            break
        }
        return component
    }

    /// HAP target-heating-cooling-state 0 off, 1 heat, 2 cool, 3 auto (only the valid values the
    /// device declares); current-heating-cooling-state 0 idle, 1 heating, 2 cooling.
    private func climate(_ service: Service) -> [String: JSON]? {
        var component: [String: JSON] = ["platform": "climate", "temperature_unit": "C"]
        // HAP's auto keeps the temperature between the two thresholds: Home Assistant's heat_cool.
        let names: [(value: Double, mode: String)] = [(0, "off"), (1, "heat"), (2, "cool"), (3, "heat_cool")]
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
        addTargetTemperature(service, to: &component)
        addRange(service, to: &component)
        addTargetHumidity(service, to: &component)
        guard component["mode_command_topic"] != nil || component["temperature_command_topic"] != nil else { return nil }
        if let current = stateTopic(service, "current-temperature") { component["current_temperature_topic"] = .string(current) }
        if let humidity = stateTopic(service, "current-relative-humidity") { component["current_humidity_topic"] = .string(humidity) }
        if let action = stateTopic(service, "current-heating-cooling-state") {
            component["action_topic"] = .string(action)
            component["action_template"] = .string(Self.template([("0", "idle"), ("1", "heating"), ("2", "cooling")]))
        }
        return component
    }

    /// `target-temperature`, with its bounds and step.
    private func addTargetTemperature(_ service: Service, to component: inout [String: JSON]) {
        guard let target = service.characteristic(ofType: "target-temperature"),
              let state = stateTopic(service, "target-temperature"), let command = commandTopic(service, "target-temperature") else { return }
        component["temperature_state_topic"] = .string(state)
        component["temperature_command_topic"] = .string(command)
        if let minValue = target.minValue { component["min_temp"] = .double(minValue) }
        if let maxValue = target.maxValue { component["max_temp"] = .double(maxValue) }
        if let step = target.minStep, step > 0 { component["temp_step"] = .double(step) }
    }

    /// The heating and cooling thresholds as Home Assistant's low and high target temperatures
    /// (what it shows in heat_cool).
    func addRange(_ service: Service, to component: inout [String: JSON]) {
        for (type, key) in [("heating-threshold-temperature", "temperature_low"), ("cooling-threshold-temperature", "temperature_high")] {
            guard let state = stateTopic(service, type), let command = commandTopic(service, type) else { continue }
            component["\(key)_state_topic"] = .string(state)
            component["\(key)_command_topic"] = .string(command)
        }
    }

    /// `target-relative-humidity`, with its bounds.
    private func addTargetHumidity(_ service: Service, to component: inout [String: JSON]) {
        guard let target = service.characteristic(ofType: "target-relative-humidity"),
              let state = stateTopic(service, "target-relative-humidity"), let command = commandTopic(service, "target-relative-humidity") else { return }
        component["target_humidity_state_topic"] = .string(state)
        component["target_humidity_command_topic"] = .string(command)
        component["min_humidity"] = .double(target.minValue ?? 0)
        component["max_humidity"] = .double(target.maxValue ?? 100)
    }

    /// `fan`: on/off by `on`; `fanv2`: by `active` (1/0). Speed from `rotation-speed` (percent),
    /// direction from `rotation-direction` (0 clockwise: forward, 1 counter-clockwise: reverse),
    /// oscillation from `swing-mode` (1 swinging).
    private func fan(_ service: Service) -> [String: JSON]? {
        guard var component = onOff(service, service.type == "fanv2" ? "active" : "on", platform: "fan") else { return nil }
        addFanControls(service, to: &component)
        return component
    }

    private func addFanControls(_ service: Service, to component: inout [String: JSON]) {
        if let state = stateTopic(service, "rotation-speed"), let command = commandTopic(service, "rotation-speed") {
            component["percentage_state_topic"] = .string(state)
            component["percentage_command_topic"] = .string(command)
            // Home Assistant reads the percentage as an integer; a float speed may have a fraction.
            component["percentage_value_template"] = "{{ value | float(0) | round(0) | int }}"
        }
        addChoice("direction", stateTemplate: "direction_value_template", service, "rotation-direction", [("0", "forward"), ("1", "reverse")], to: &component)
        if let state = stateTopic(service, "swing-mode"), let command = commandTopic(service, "swing-mode") {
            component["oscillation_state_topic"] = .string(state)
            component["oscillation_command_topic"] = .string(command)
            component["payload_oscillation_on"] = "1"
            component["payload_oscillation_off"] = "0"
        }
    }

    /// An air purifier is a fan switched by `active`, with its speed and swing, and the presets
    /// `auto` and `manual` from `target-air-purifier-state` (1 auto, 0 manual).
    private func airPurifier(_ service: Service) -> [String: JSON]? {
        guard var component = onOff(service, "active", platform: "fan") else { return nil }
        addFanControls(service, to: &component)
        if addChoice("preset_mode", stateTemplate: "preset_mode_value_template", service, "target-air-purifier-state",
                     [("0", "manual"), ("1", "auto")], to: &component) {
            component["preset_modes"] = ["auto", "manual"]
        }
        return component
    }

    /// A heater-cooler is a climate: `active` turns it on and off; the mode is
    /// `target-heater-cooler-state` (0 auto: heat_cool, 1 heat, 2 cool), written together with
    /// `active` 1 by one service-level set (off writes `{"active": 0}`); the heating and cooling
    /// thresholds are the low and high targets; the action from `current-heater-cooler-state`
    /// (0 inactive: off, 1 idle, 2 heating, 3 cooling); swing from `swing-mode`. Home
    /// Assistant's mode state reads only the target state, so a heater-cooler switched off shows
    /// its last mode with the action off.
    ///
    /// A heater-cooler without `active` (Home Assistant's own HomeKit bridge makes them, its
    /// `active` on a linked fan) has no off: its modes are written to the target state alone,
    /// and when the device does not let the target state be written either (that bridge's
    /// heater-coolers, captured in 2024, have it read-only), the mode is shown and not offered
    /// for change. Without thresholds, a `target-temperature` it has is the target temperature.
    private func heaterCooler(_ service: Service) -> [String: JSON]? {
        guard let serviceTopic = topic(service), let target = service.characteristic(ofType: "target-heater-cooler-state"),
              let state = stateTopic(service, "target-heater-cooler-state") else { return nil }
        let names: [(value: Double, mode: String)] = [(0, "heat_cool"), (1, "heat"), (2, "cool")]
        let valid = names.filter { target.validValues?.contains($0.value) ?? ($0.value >= (target.minValue ?? 0) && $0.value <= (target.maxValue ?? 2)) }
        var component: [String: JSON] = [
            "platform": "climate", "temperature_unit": "C",
            "mode_state_topic": .string(state), "mode_state_template": .string(Self.template(valid.map { (Value.format($0.value), $0.mode) })),
        ]
        if let active = commandTopic(service, "active") {
            var command: [(String, String)] = [("off", #"{"active": 0}"#)]
            command += valid.map { ($0.mode, #"{"active": 1, "target-heater-cooler-state": \#(Value.format($0.value))}"#) }
            component["modes"] = .array([JSON.string("off")] + valid.map { JSON.string($0.mode) })
            component["mode_command_topic"] = .string("\(serviceTopic)/set")
            component["mode_command_template"] = .string(Self.template(command))
            component["power_command_topic"] = .string(active)
            component["payload_on"] = "1"
            component["payload_off"] = "0"
        } else {
            component["modes"] = .array(valid.map { JSON.string($0.mode) })
            if let targetCommand = commandTopic(service, "target-heater-cooler-state") {
                component["mode_command_topic"] = .string(targetCommand)
                component["mode_command_template"] = .string(Self.template(valid.map { ($0.mode, Value.format($0.value)) }))
            }
        }
        addRange(service, to: &component)
        if component["temperature_low_command_topic"] == nil, component["temperature_high_command_topic"] == nil {
            addTargetTemperature(service, to: &component)
        }
        if let current = stateTopic(service, "current-temperature") { component["current_temperature_topic"] = .string(current) }
        if let action = stateTopic(service, "current-heater-cooler-state") {
            component["action_topic"] = .string(action)
            component["action_template"] = .string(Self.template([("0", "off"), ("1", "idle"), ("2", "heating"), ("3", "cooling")]))
        }
        if addChoice("swing_mode", stateTemplate: "swing_mode_state_template", service, "swing-mode", [("0", "off"), ("1", "on")], to: &component) {
            component["swing_modes"] = ["on", "off"]
        }
        return component
    }

    /// A humidifier-dehumidifier: on and off by `active`; a humidifier (or, when it only
    /// dehumidifies, a dehumidifier) whose target humidity is the matching threshold; modes
    /// `normal` and `auto` from `target-humidifier-dehumidifier-state` (0 auto, 1 humidify,
    /// 2 dehumidify); the action from `current-humidifier-dehumidifier-state`.
    private func humidifier(_ service: Service) -> [String: JSON]? {
        guard var component = onOff(service, "active", platform: "humidifier") else { return nil }
        let target = service.characteristic(ofType: "target-humidifier-dehumidifier-state")
        let dehumidifies = target?.validValues == [2] || target?.minValue == 2
        component["device_class"] = dehumidifies ? "dehumidifier" : "humidifier"
        let threshold = dehumidifies ? "relative-humidity-dehumidifier-threshold" : "relative-humidity-humidifier-threshold"
        if let bounds = service.characteristic(ofType: threshold), let state = stateTopic(service, threshold), let command = commandTopic(service, threshold) {
            component["target_humidity_state_topic"] = .string(state)
            component["target_humidity_command_topic"] = .string(command)
            component["min_humidity"] = .double(bounds.minValue ?? 0)
            component["max_humidity"] = .double(bounds.maxValue ?? 100)
        }
        if let state = stateTopic(service, "target-humidifier-dehumidifier-state"),
           let command = commandTopic(service, "target-humidifier-dehumidifier-state"), target?.validValues?.contains(0) ?? true {
            let normal = dehumidifies ? "2" : "1"
            component["modes"] = ["normal", "auto"]
            component["mode_state_topic"] = .string(state)
            component["mode_state_template"] = .string(Self.template([("0", "auto"), ("1", "normal"), ("2", "normal")]))
            component["mode_command_topic"] = .string(command)
            component["mode_command_template"] = .string(Self.template([("auto", "0"), ("normal", normal)]))
        }
        if let current = stateTopic(service, "current-relative-humidity") { component["current_humidity_topic"] = .string(current) }
        if let action = stateTopic(service, "current-humidifier-dehumidifier-state") {
            component["action_topic"] = .string(action)
            component["action_template"] = .string(Self.template([("0", "off"), ("1", "idle"), ("2", "humidifying"), ("3", "drying")]))
        }
        return component
    }

    /// HAP security-system-current-state: 0 stay, 1 away, 2 night, 3 disarmed, 4 triggered;
    /// target state: 0 stay, 1 away, 2 night, 3 disarm. No code: HomeKit asks none.
    private func securitySystem(_ service: Service) -> [String: JSON]? {
        guard let state = stateTopic(service, "security-system-current-state"),
              let target = service.characteristic(ofType: "security-system-target-state"),
              let command = commandTopic(service, "security-system-target-state") else { return nil }
        let arms: [(value: Double, feature: String, payload: String)] = [(0, "arm_home", "payload_arm_home"), (1, "arm_away", "payload_arm_away"),
                                                                        (2, "arm_night", "payload_arm_night")]
        let offered = arms.filter { target.validValues?.contains($0.value) ?? true }
        var component: [String: JSON] = [
            "platform": "alarm_control_panel", "state_topic": .string(state), "command_topic": .string(command),
            "value_template": .string(Self.template([("0", "armed_home"), ("1", "armed_away"), ("2", "armed_night"), ("3", "disarmed"),
                                                     ("4", "triggered")], otherwise: "None")),
            "payload_disarm": "3", "code_arm_required": false, "code_disarm_required": false, "code_trigger_required": false,
            "supported_features": .array(offered.map { JSON.string($0.feature) }),
        ]
        for arm in offered { component[arm.payload] = .string(Value.format(arm.value)) }
        return component
    }

    /// A valve or faucet: open and closed by `active` (1 open); MQTT's `valve` platform, water.
    private func valve(_ service: Service) -> [String: JSON]? {
        guard let state = stateTopic(service, "active"), let command = commandTopic(service, "active") else { return nil }
        return ["platform": "valve", "device_class": "water", "state_topic": .string(state), "command_topic": .string(command),
                "value_template": .string(Self.template([("0", "closed"), ("1", "open")], otherwise: "None")),
                "state_open": "open", "state_closed": "closed", "payload_open": "1", "payload_close": "0", "reports_position": false]
    }

    /// A characteristic read and written as words: `<key>_state_topic` with `stateTemplate` from
    /// its values to the words, `<key>_command_topic` with `<key>_command_template` back. False
    /// (and nothing added) unless it can be read and written.
    @discardableResult
    private func addChoice(_ key: String, stateTemplate: String, _ service: Service, _ type: String, _ words: [(value: String, word: String)],
                           to component: inout [String: JSON]) -> Bool {
        guard let state = stateTopic(service, type), let command = commandTopic(service, type) else { return false }
        component["\(key)_state_topic"] = .string(state)
        component[stateTemplate] = .string(Self.template(words.map { ($0.value, $0.word) }))
        component["\(key)_command_topic"] = .string(command)
        component["\(key)_command_template"] = .string(Self.template(words.map { ($0.word, $0.value) }))
        return true
    }

    /// A programmable switch's presses (`programmable-switch-event`, sent, never retained):
    /// 0 single, 1 double, 2 long press, as Home Assistant's `event` entity.
    private func event(_ service: Service, deviceClass: String) -> [String: JSON]? {
        guard let presses = Self.presses(of: service), let state = stateTopic(service, "programmable-switch-event") else { return nil }
        return ["platform": "event", "device_class": .string(deviceClass), "state_topic": .string(state),
                "event_types": .array(presses.map { JSON.string($0.eventType) }),
                "value_template": .string(Self.template(presses.map { (Value.format($0.value), #"{"event_type": "\#($0.eventType)"}"#) }))]
    }

    /// The presses a programmable switch declares (all three when it declares none).
    static func presses(of service: Service) -> [(value: Double, eventType: String, trigger: String)]? {
        guard let event = service.characteristic(ofType: "programmable-switch-event") else { return nil }
        let all: [(value: Double, eventType: String, trigger: String)] = [(0, "single_press", "button_short_press"),
                                                                          (1, "double_press", "button_double_press"),
                                                                          (2, "long_press", "button_long_press")]
        return all.filter { press in
            event.validValues?.contains(press.value) ?? (press.value >= (event.minValue ?? 0) && press.value <= (event.maxValue ?? 2))
        }
    }

    // MARK: Helpers

    /// State and command on one characteristic, with the payloads of its format.
    func onOff(_ service: Service, _ type: String, platform: String) -> [String: JSON]? {
        guard let characteristic = service.characteristic(ofType: type),
              let state = stateTopic(service, type), let command = commandTopic(service, type) else { return nil }
        let (on, off) = Self.payloads(characteristic)
        return ["platform": .string(platform), "state_topic": .string(state), "command_topic": .string(command),
                "payload_on": .string(on), "payload_off": .string(off)]
    }

    /// The topic a readable characteristic's value is published on.
    func stateTopic(_ service: Service, _ type: String) -> String? {
        guard let characteristic = service.characteristic(ofType: type), characteristic.isReadable else { return nil }
        return topic(characteristic)
    }

    /// The set topic of a writable characteristic.
    func commandTopic(_ service: Service, _ type: String) -> String? {
        guard let characteristic = service.characteristic(ofType: type), characteristic.isWritable,
              let topic = topic(characteristic) else { return nil }
        return topic + "/set"
    }

    func topic(_ service: Service) -> String? {
        map.topic(of: .service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid)))
    }

    func topic(_ characteristic: Characteristic) -> String? {
        map.topic(of: .characteristic(home, CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)))
    }

    /// True and false as the characteristic's value topic carries them: `true`/`false` for a
    /// bool, `1`/`0` for a number.
    static func payloads(_ characteristic: Characteristic) -> (on: String, off: String) {
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

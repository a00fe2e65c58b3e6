import HomeModel
import Wire

/// Entities of single characteristics, beside the services' own: what Home Assistant's HomeKit
/// integration (`homekit_controller`) shows as sensors, configuration switches, selects, numbers
/// and buttons, the identify button of every accessory, and device triggers for programmable
/// switches. Each is keyed `<name>_<iid>` (`current-temperature_12`), its `unique_id` the
/// object id, `_` and that key.
extension ComponentBuilder {
    /// What one characteristic becomes.
    struct Entity: Sendable {
        enum Kind: Sendable {
            /// A read-only value, with Home Assistant's device class, unit and state class.
            case sensor(deviceClass: String?, unit: String?, stateClass: String)
            /// A detector: on at 1 or `true`.
            case binarySensor(deviceClass: String?)
            /// A writable on/off setting.
            case toggle
            /// A writable number, with the characteristic's bounds and step.
            case number(unit: String?)
            /// A writable choice among the characteristic's labels.
            case select
            /// A write-only trigger: `true` written on press.
            case button
            /// A bit field shown as the one word its most important bit names (Home Assistant's
            /// `enum` sensor): the words in order of importance, and the word when no bit is set.
            case flags([(bit: Int, word: String)], otherwise: String)
        }

        let kind: Kind
        /// The entity's name, as Home Assistant's own integration names it.
        let name: String
        /// `config` or `diagnostic`, or nil for a primary entity.
        let category: String?
        /// Service types whose own component already shows this characteristic.
        var skippedIn: Set<String> = []
    }

    /// Standard characteristics, by name.
    static let standardEntities: [String: Entity] = [
        "current-temperature": Entity(kind: .sensor(deviceClass: "temperature", unit: "°C", stateClass: "measurement"), name: "Current Temperature",
                                      category: nil, skippedIn: ["temperature-sensor"]),
        "current-relative-humidity": Entity(kind: .sensor(deviceClass: "humidity", unit: "%", stateClass: "measurement"), name: "Current Humidity",
                                            category: nil, skippedIn: ["humidity-sensor"]),
        "battery-level": Entity(kind: .sensor(deviceClass: "battery", unit: "%", stateClass: "measurement"), name: "Battery",
                                category: "diagnostic", skippedIn: ["battery-service"]),
        "air-quality": Entity(kind: .sensor(deviceClass: "aqi", unit: nil, stateClass: "measurement"), name: "Air Quality", category: nil),
        "pm2-5-density": Entity(kind: .sensor(deviceClass: "pm25", unit: "µg/m³", stateClass: "measurement"), name: "PM2.5 Density", category: nil),
        "pm10-density": Entity(kind: .sensor(deviceClass: "pm10", unit: "µg/m³", stateClass: "measurement"), name: "PM10 Density", category: nil),
        "ozone-density": Entity(kind: .sensor(deviceClass: "ozone", unit: "µg/m³", stateClass: "measurement"), name: "Ozone Density", category: nil),
        "nitrogen-dioxide-density": Entity(kind: .sensor(deviceClass: "nitrogen_dioxide", unit: "µg/m³", stateClass: "measurement"),
                                           name: "Nitrogen Dioxide Density", category: nil),
        "sulphur-dioxide-density": Entity(kind: .sensor(deviceClass: "sulphur_dioxide", unit: "µg/m³", stateClass: "measurement"),
                                          name: "Sulphur Dioxide Density", category: nil),
        "voc-density": Entity(kind: .sensor(deviceClass: "volatile_organic_compounds", unit: "µg/m³", stateClass: "measurement"),
                              name: "Volatile Organic Compound Density", category: nil),
        "carbon-dioxide-level": Entity(kind: .sensor(deviceClass: "carbon_dioxide", unit: "ppm", stateClass: "measurement"),
                                       name: "Carbon Dioxide", category: nil),
        "carbon-monoxide-level": Entity(kind: .sensor(deviceClass: "carbon_monoxide", unit: "ppm", stateClass: "measurement"),
                                        name: "Carbon Monoxide", category: nil),
        "filter-life-level": Entity(kind: .sensor(deviceClass: nil, unit: "%", stateClass: "measurement"), name: "Filter Lifetime", category: nil),
        "filter-change-indication": Entity(kind: .binarySensor(deviceClass: "problem"), name: "Filter Change", category: nil),
        "status-low-battery": Entity(kind: .binarySensor(deviceClass: "battery"), name: "Low Battery", category: "diagnostic",
                                     skippedIn: ["battery-service"]),
        "carbon-dioxide-detected": Entity(kind: .binarySensor(deviceClass: nil), name: "Carbon Dioxide Detected", category: nil),
        "lock-physical-controls": Entity(kind: .toggle, name: "Lock Physical Controls", category: "config"),
        "mute": Entity(kind: .toggle, name: "Mute", category: "config"),
        "temperature-display-units": Entity(kind: .select, name: "Temperature Display Units", category: "config"),
        // The Thread Management service's status and node capabilities are bit fields; Home
        // Assistant's own integration shows the most important bit's word (a border router is
        // also a router, it shows Border Router). The words are its English ones.
        "thread-status": Entity(kind: .flags([(64, "Border Router"), (32, "Leader"), (16, "Router"), (8, "Child"), (4, "Joining"),
                                              (2, "Detached")], otherwise: "Disabled"),
                                name: "Thread Status", category: "diagnostic"),
        "thread-node-capabilities": Entity(kind: .flags([(16, "Border Router Capable"), (8, "Router Eligible End Device"), (4, "Full End Device"),
                                                         (1, "Minimal End Device"), (2, "Sleepy End Device")], otherwise: "None"),
                                           name: "Thread Capabilities", category: "diagnostic"),
    ]

    /// Vendor characteristics, by the catalog's vendor name.
    static let vendorEntities: [String: Entity] = [
        "power": Entity(kind: .sensor(deviceClass: "power", unit: "W", stateClass: "measurement"), name: "Power", category: nil),
        "energy": Entity(kind: .sensor(deviceClass: "energy", unit: "kWh", stateClass: "total_increasing"), name: "Energy", category: nil),
        "voltage": Entity(kind: .sensor(deviceClass: "voltage", unit: "V", stateClass: "measurement"), name: "Voltage", category: nil),
        "current": Entity(kind: .sensor(deviceClass: "current", unit: "A", stateClass: "measurement"), name: "Current", category: nil),
        // Eve Degree's air pressure is a `pressure` sensor in Home Assistant's own integration.
        "air-pressure": Entity(kind: .sensor(deviceClass: "pressure", unit: "hPa", stateClass: "measurement"), name: "Air Pressure",
                               category: nil),
        "noise": Entity(kind: .sensor(deviceClass: "sound_pressure", unit: "dB", stateClass: "measurement"), name: "Noise", category: nil),
        "voc-density-ppm": Entity(kind: .sensor(deviceClass: "volatile_organic_compounds_parts", unit: "ppm", stateClass: "measurement"),
                                  name: "Volatile Organic Compounds", category: nil),
        "pairing-mode": Entity(kind: .toggle, name: "Pairing Mode", category: "config"),
        "sleep-mode": Entity(kind: .toggle, name: "Sleep Mode", category: "config"),
        "volume": Entity(kind: .number(unit: nil), name: "Volume", category: "config"),
        "spray-level": Entity(kind: .number(unit: nil), name: "Spray Quantity", category: "config"),
        // Without a unit, as Home Assistant's own integration has it (the catalog says metres).
        "elevation": Entity(kind: .number(unit: nil), name: "Elevation", category: "config"),
        "motion-duration": Entity(kind: .number(unit: "s"), name: "Motion Duration", category: "config"),
        "motion-sensitivity": Entity(kind: .select, name: "Motion Sensitivity", category: "config"),
        "clear-hold": Entity(kind: .button, name: "Clear Hold", category: nil),
        // One vendor's own take, by `vendor/name`, before the name alone: as Home Assistant's
        // integration makes them, ConnectSense's 20 A current is a current too, and its energy
        // counter a measurement (Eve's is total_increasing).
        "connectsense/current-20a": Entity(kind: .sensor(deviceClass: "current", unit: "A", stateClass: "measurement"), name: "Current",
                                           category: nil),
        "connectsense/energy": Entity(kind: .sensor(deviceClass: "energy", unit: "kWh", stateClass: "measurement"), name: "Energy",
                                      category: nil),
    ]

    /// The entity a characteristic of `service` gives, if any.
    static func entity(for characteristic: Characteristic, in service: Service) -> (key: String, entity: Entity)? {
        let found: (String, Entity)?
        if let vendor = Catalog.standard.vendorCharacteristic(characteristic.uuid) {
            found = (vendorEntities["\(vendor.vendor)/\(vendor.name)"] ?? vendorEntities[vendor.name]).map { (vendor.name, $0) }
        } else {
            found = standardEntities[characteristic.type].map { (characteristic.type, $0) }
        }
        guard let (name, entity) = found, !entity.skippedIn.contains(service.type) else { return nil }
        return (name, entity)
    }

    /// Every characteristic entity of the accessory, keyed.
    func characteristicComponents() -> [(String, [String: JSON])] {
        var components: [(String, [String: JSON])] = []
        for service in accessory.visibleServices {
            for characteristic in service.characteristics {
                guard let (name, entity) = Self.entity(for: characteristic, in: service),
                      var component = component(entity, characteristic) else { continue }
                component["name"] = .string(entity.name)
                if let category = entity.category { component["entity_category"] = .string(category) }
                components.append(("\(name)_\(characteristic.iid)", component))
            }
            if let mode = ecobeeMode(service) { components.append(mode) }
            if service.type == "television" { components += televisionControls(service) }
        }
        return components
    }

    /// The keys of a television's remote (`remote-key`) that get a button, with their names.
    static let remoteKeys: [(value: Double, name: String)] = [
        (4, "Arrow Up"), (5, "Arrow Down"), (6, "Arrow Left"), (7, "Arrow Right"), (8, "Select"), (9, "Back"), (10, "Exit"),
        (11, "Play/Pause"), (15, "Information"),
    ]

    /// A television's controls besides its power switch (the service's own component), as Home
    /// Assistant's MQTT integration, which has no media player, can show them: the input source
    /// as a select (`active-identifier`, the options the `configured-name`s of the input sources
    /// linked to the television, as they were when the config was made), and a button per
    /// remote key.
    private func televisionControls(_ service: Service) -> [(String, [String: JSON])] {
        var components: [(String, [String: JSON])] = []
        if let active = service.characteristic(ofType: "active-identifier"), active.isReadable, active.isWritable, let state = topic(active) {
            var sources: [(identifier: String, name: String)] = []
            for source in accessory.services where source.type == "input-source" && service.linked.contains(source.iid) {
                guard let identifier = source.characteristic(ofType: "identifier")?.value?.number else { continue }
                var configured: String?
                if case .string(let text)? = source.characteristic(ofType: "configured-name")?.value { configured = text }
                guard let name = configured ?? source.name, !name.isEmpty, !sources.contains(where: { $0.name == name }) else { continue }
                sources.append((Value.format(identifier), name))
            }
            if !sources.isEmpty {
                var show = ""
                var write = ""
                for (index, source) in sources.enumerated() {
                    let keyword = index == 0 ? "if" : "elif"
                    show += "{% \(keyword) value == '\(source.identifier)' %}{{ \(Self.literal(source.name)) }}"
                    write += "{% \(keyword) value == \(Self.literal(source.name)) %}\(source.identifier)"
                }
                components.append(("active-identifier_\(active.iid)", [
                    "platform": "select", "name": "Input Source", "state_topic": .string(state), "command_topic": .string(state + "/set"),
                    "options": .array(sources.map { JSON.string($0.name) }),
                    "value_template": .string(show + "{% else %}None{% endif %}"), "command_template": .string(write + "{% endif %}"),
                ]))
            }
        }
        if let key = service.characteristic(ofType: "remote-key"), key.isWritable, let command = topic(key) {
            for (value, name) in Self.remoteKeys
            where key.validValues?.contains(value) ?? (value >= (key.minValue ?? 0) && value <= (key.maxValue ?? 16)) {
                components.append(("remote-key_\(key.iid)_\(Value.format(value))", [
                    "platform": "button", "name": .string(name), "command_topic": .string(command + "/set"), "payload_press": .string(Value.format(value)),
                ]))
            }
        }
        return components
    }

    /// `text` as a Jinja string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    private func component(_ entity: Entity, _ characteristic: Characteristic) -> [String: JSON]? {
        guard let valueTopic = topic(characteristic) else { return nil }
        let state = characteristic.isReadable ? valueTopic : nil
        let command = characteristic.isWritable ? valueTopic + "/set" : nil
        switch entity.kind {
        case .sensor(let deviceClass, let unit, let stateClass):
            guard let state else { return nil }
            var component: [String: JSON] = ["platform": "sensor", "state_topic": .string(state), "state_class": .string(stateClass)]
            if let deviceClass { component["device_class"] = .string(deviceClass) }
            if let unit { component["unit_of_measurement"] = .string(unit) }
            return component
        case .binarySensor(let deviceClass):
            guard let state else { return nil }
            let (on, off) = Self.payloads(characteristic)
            var component: [String: JSON] = ["platform": "binary_sensor", "state_topic": .string(state), "payload_on": .string(on), "payload_off": .string(off)]
            if let deviceClass { component["device_class"] = .string(deviceClass) }
            return component
        case .toggle:
            guard let state, let command else { return nil }
            let (on, off) = Self.payloads(characteristic)
            return ["platform": "switch", "state_topic": .string(state), "command_topic": .string(command), "payload_on": .string(on), "payload_off": .string(off)]
        case .number(let unit):
            guard let state, let command else { return nil }
            var component: [String: JSON] = ["platform": "number", "state_topic": .string(state), "command_topic": .string(command), "mode": "box"]
            if let minValue = characteristic.minValue { component["min"] = .double(minValue) }
            if let maxValue = characteristic.maxValue { component["max"] = .double(maxValue) }
            if let step = characteristic.minStep, step > 0 { component["step"] = .double(step) }
            if let unit { component["unit_of_measurement"] = .string(unit) }
            return component
        case .select:
            guard state != nil, let command, let labels = ValueLabels.of(characteristic) else { return nil }
            // The gateway publishes the label beside the value and takes a label as a set.
            return ["platform": "select", "state_topic": .string(valueTopic + "/label"), "command_topic": .string(command),
                    "options": .array(labels.entries.map { JSON.string($0.label) })]
        case .button:
            guard let command else { return nil }
            return ["platform": "button", "command_topic": .string(command), "payload_press": "true"]
        case .flags(let words, let otherwise):
            guard let state else { return nil }
            // "None" is MQTT's payload for no state, so it is no option (a device without any
            // capability shows unknown).
            let options = (words.map(\.word) + [otherwise]).filter { $0 != "None" }
            return ["platform": "sensor", "device_class": "enum", "state_topic": .string(state),
                    "options": .array(options.map { JSON.string($0) }), "value_template": .string(Self.flagsTemplate(words, otherwise: otherwise))]
        }
    }

    /// A Jinja template from a bit field to the word of its most important bit set, `otherwise`
    /// when none is; an empty payload (a topic cleared after a rename) renders `None`, no state.
    static func flagsTemplate(_ words: [(bit: Int, word: String)], otherwise: String) -> String {
        var text = "{% set bits = value | int(0) %}{% if value == '' %}None"
        for (bit, word) in words { text += "{% elif bits | bitwise_and(\(bit)) %}\(word)" }
        return text + "{% else %}\(otherwise){% endif %}"
    }

    /// An ecobee's comfort setting: its `current-mode` (home, sleep, away) shown, and a choice
    /// written to `set-hold-schedule`, as Home Assistant's own integration does.
    private func ecobeeMode(_ service: Service) -> (String, [String: JSON])? {
        let byName = Dictionary(service.characteristics.compactMap { characteristic in
            Catalog.standard.vendorCharacteristic(characteristic.uuid).map { ($0.name, characteristic) }
        }, uniquingKeysWith: { first, _ in first })
        guard let current = byName["current-mode"], let hold = byName["set-hold-schedule"], current.isReadable, hold.isWritable,
              let state = topic(current), let command = topic(hold), let labels = ValueLabels.of(hold) else { return nil }
        return ("current-mode_\(current.iid)", ["platform": "select", "name": "Current Mode", "state_topic": .string(state + "/label"),
                                                  "command_topic": .string(command + "/set"),
                                                  "options": .array(labels.entries.map { JSON.string($0.label) })])
    }

    /// The accessory's identify button: presses are `$request/accessory/identify` requests.
    func identifyButton(base: String) -> [String: JSON]? {
        guard let information = accessory.services.first(where: { $0.type == "accessory-information" }),
              information.characteristic(ofType: "identify")?.isWritable == true else { return nil }
        return ["platform": "button", "device_class": "identify", "entity_category": "diagnostic", "name": "Identify",
                "command_topic": .string(TopicGrammar.topic(base, .request, "accessory", "identify")),
                "payload_press": .string(JSON.object(["accessory": .string(accessory.id.rawValue)]).text)]
    }

    /// Device triggers (Home Assistant's automation editor: "Button 1 pressed twice") for every
    /// press a programmable switch declares; subtype `button_<n>` from its service label index,
    /// else its place among the accessory's switches.
    func deviceTriggers() -> [(String, [String: JSON])] {
        var triggers: [(String, [String: JSON])] = []
        let switches = accessory.visibleServices.filter { $0.type == "stateless-programmable-switch" || $0.type == "doorbell" }
        for (position, service) in switches.enumerated() {
            guard let presses = Self.presses(of: service), let event = service.characteristic(ofType: "programmable-switch-event"),
                  let state = topic(event) else { continue }
            let index = service.characteristic(ofType: "service-label-index")?.value?.number.map { Int($0) } ?? position + 1
            for press in presses {
                triggers.append(("\(press.trigger)_\(service.iid)", [
                    "platform": "device_automation", "automation_type": "trigger", "topic": .string(state),
                    "type": .string(press.trigger), "subtype": .string("button_\(index)"), "payload": .string(Value.format(press.value)),
                ]))
            }
        }
        return triggers
    }
}

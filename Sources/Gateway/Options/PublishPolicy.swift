import HomeModel
import MQTT

/// What the options (docs/configuration.md, "Options per accessory") make of each accessory and
/// characteristic of the tree: worked out from the configuration's table and the options
/// `$request/accessory/options` stored, again whenever the layout or the options change. Only
/// what differs from the standard (retained, QoS 1, published at once, discovered) is kept, so a
/// home without options costs one empty check per value.
///
/// An accessory's options are its configuration entry over the configuration's defaults, with
/// what was stored over both (``OptionsTable/options(of:)``, ``AccessoryOptions/overlaid(by:)``).
/// Within them the most specific path wins: `<service>/<characteristic>` over the
/// characteristic's segment alone, over `<service>`, over the accessory's own.
struct PublishPolicy: Sendable {
    /// How one characteristic's values are published.
    struct Rule: Equatable, Sendable {
        var retain = true
        var qos: QoS = .atLeastOnce
        var debounce: Duration = .zero
        var throttle: Duration = .zero
        /// Not published at all (history and the page still get its values).
        var excluded = false
        /// Its Home Assistant entity's name and device class, or no entity.
        var homeAssistant: HomeAssistantOverride?

        static let standard = Rule()
        /// Whether its publishes wait for the ``PublishPacer``.
        var isPaced: Bool { debounce > .zero || throttle > .zero }
    }

    private(set) var rules: [CharacteristicReference: Rule] = [:]
    /// Accessories kept paired and followed, with nothing published or discovered.
    private(set) var disabled: Set<AccessoryID> = []
    /// Home Assistant's device per accessory: its name, or no device.
    private(set) var devices: [AccessoryID: HomeAssistantOverride] = [:]
    /// Home Assistant's entity of a service (its path's `homeassistant`).
    private(set) var services: [ServiceReference: HomeAssistantOverride] = [:]
    /// Value topics (and their labels) published with a QoS other than 1.
    private(set) var qosByTopic: [String: QoS] = [:]
    /// The options each accessory has (only those that have any), for `$layout` and the answer
    /// of `accessory/options`.
    private(set) var options: [AccessoryID: AccessoryOptions] = [:]

    /// No options: everything standard.
    init() {}

    init(table: OptionsTable, stored: [AccessoryID: AccessoryOptions], homes: [Home], map: TopicMap) {
        guard !table.isEmpty || !stored.isEmpty else { return }
        for home in homes {
            for accessory in home.accessories {
                let options = table.options(of: accessory.id).overlaid(by: stored[accessory.id] ?? AccessoryOptions())
                guard !options.isEmpty else { continue }
                self.options[accessory.id] = options
                apply(options, to: accessory, in: home.id, map: map)
            }
        }
    }

    /// The rule of a characteristic.
    func rule(_ reference: CharacteristicReference) -> Rule {
        rules.isEmpty ? .standard : rules[reference] ?? .standard
    }

    func isDisabled(_ id: AccessoryID) -> Bool { !disabled.isEmpty && disabled.contains(id) }

    /// The QoS a retained topic is published with.
    func qos(of topic: String) -> QoS { qosByTopic.isEmpty ? .atLeastOnce : qosByTopic[topic] ?? .atLeastOnce }

    private mutating func apply(_ options: AccessoryOptions, to accessory: Accessory, in home: HomeID, map: TopicMap) {
        if options.disabled == true { disabled.insert(accessory.id) }
        if let device = options.publish.homeAssistant { devices[accessory.id] = device }
        let excluded = Set(options.exclude ?? [])
        var accessoryWide = options.publish
        accessoryWide.homeAssistant = nil // the accessory's own is about the device
        for place in Self.places(of: accessory, in: home, map: map) {
            let serviceOptions = options.characteristics[place.servicePath]
            if let entity = serviceOptions?.homeAssistant {
                services[ServiceReference(accessoryID: accessory.id, serviceIID: place.service.iid)] = entity
            }
            var service = accessoryWide.overlaid(by: serviceOptions ?? PublishOptions())
            service.homeAssistant = nil
            let own = (options.characteristics[place.segment] ?? PublishOptions()).overlaid(by: options.characteristics[place.path] ?? PublishOptions())
            let given = service.overlaid(by: own)
            var rule = Rule(retain: given.retain ?? true, qos: given.qos.flatMap { QoS(rawValue: Int32($0)) } ?? .atLeastOnce,
                            debounce: given.debounce ?? .zero, throttle: given.throttle ?? .zero,
                            excluded: excluded.contains(place.path) || excluded.contains(place.segment) || excluded.contains(place.servicePath),
                            homeAssistant: own.homeAssistant)
            if place.characteristic.isMomentary { (rule.debounce, rule.throttle) = (.zero, .zero) } // each press is an event
            guard rule != .standard else { continue }
            rules[place.reference] = rule
            if rule.qos != .atLeastOnce, !rule.excluded {
                qosByTopic[place.topic] = rule.qos
                qosByTopic[place.topic + "/label"] = rule.qos
            }
        }
    }

    /// Where a characteristic is, as options name it.
    struct Place {
        let service: Service
        let characteristic: Characteristic
        let reference: CharacteristicReference
        /// Its value topic.
        let topic: String
        /// `<service>/<characteristic>` below the accessory's topic.
        let path: String
        /// Its last segment.
        let segment: String
        /// `<service>` below the accessory's topic.
        let servicePath: String
    }

    /// Every visible characteristic of an accessory with the paths options name it by.
    static func places(of accessory: Accessory, in home: HomeID, map: TopicMap) -> [Place] {
        guard let accessoryTopic = map.topic(of: .accessory(home, accessory.id)) else { return [] }
        let prefixLength = accessoryTopic.count + 1
        var places: [Place] = []
        for service in accessory.visibleServices {
            guard let serviceTopic = map.topic(of: .service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid))) else { continue }
            let servicePath = String(serviceTopic.dropFirst(prefixLength))
            for characteristic in service.characteristics {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let topic = map.topic(of: .characteristic(home, reference)) else { continue }
                let path = String(topic.dropFirst(prefixLength))
                places.append(Place(service: service, characteristic: characteristic, reference: reference, topic: topic, path: path,
                                    segment: String(path.split(separator: "/").last ?? ""), servicePath: servicePath))
            }
        }
        return places
    }

    /// What the log says of options that name nothing: an accessory the tree does not have, a
    /// path its accessory does not have (a typo, a service renamed since). The accessory's own
    /// options only: the defaults' paths need not fit every accessory.
    static func optionsNamingNothing(table: OptionsTable, stored: [AccessoryID: AccessoryOptions], tree: HomeTree) -> [String] {
        Set(table.accessories.keys).union(stored.keys).sorted(by: { $0.rawValue < $1.rawValue }).compactMap { id in
            guard let (home, accessory) = tree.accessory(id) else {
                return "options are given for accessory \(id), which the home does not have"
            }
            let own = (table.accessories[id] ?? AccessoryOptions()).overlaid(by: stored[id] ?? AccessoryOptions())
            let unknown = unknownPaths(in: own, of: accessory, in: home.id, map: tree.map)
            return unknown.isEmpty ? nil : "the options of \(accessory.name) (\(id)) name what it does not have: \(unknown.joined(separator: ", "))"
        }
    }

    /// The paths `options` names that match nothing of the accessory (a typo, a service renamed).
    static func unknownPaths(in options: AccessoryOptions, of accessory: Accessory, in home: HomeID, map: TopicMap) -> [String] {
        let places = places(of: accessory, in: home, map: map)
        let known = Set(places.flatMap { [$0.path, $0.segment, $0.servicePath] })
        return Set(Array(options.characteristics.keys) + (options.exclude ?? [])).subtracting(known).sorted()
    }
}

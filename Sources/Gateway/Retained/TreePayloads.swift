import HomeModel
import Wire

/// The payloads of the tree's retained topics that are worked out from the tree, its topic map
/// and the options alone, with no state of the engine's: an accessory's `$meta`, a service's
/// values as one object, a colour light's `$color`, Home Assistant's discovery config. What is
/// published when, and what is held back, is the engine's (`Gateway+Retained.swift`).
struct TreePayloads {
    let base: String
    let map: TopicMap
    let policy: PublishPolicy
    /// Home Assistant's discovery prefix, when discovery is on.
    let homeAssistantPrefix: String?

    /// `<accessory>/$meta`: what the accessory is (``metaObject(_:index:)``), and `services`:
    /// per service topic segment its `type` and `characteristics`, per characteristic topic
    /// segment its metadata (as `<characteristic>/$meta` has it), every characteristic with a
    /// topic that the options do not exclude. One message describes what a person needs to drive
    /// the accessory; `characteristicMeta` holds each kind's metadata once encoded, shared.
    func meta(_ accessory: Accessory, in home: Home, index: HomeIndex, characteristicMeta: inout [ObjectIdentifier: [UInt8]]) -> [UInt8] {
        let object = metaObject(accessory, index: index)
        // `services` is the last key in sorted order: it follows the others before the closing brace.
        assert(object.keys.allSatisfy { $0 < "services" }, "a key of an accessory's $meta sorts after services")
        var bytes = JSON.object(object).encoded()
        bytes.removeLast()
        bytes.append(contentsOf: #","services":{"#.utf8)
        var firstService = true
        for (segment, service, serviceTopic) in serviceSegments(of: accessory, home: home.id) {
            if !firstService { bytes.append(UInt8(ascii: ",")) }
            firstService = false
            bytes.append(contentsOf: JSON.string(segment).encoded())
            bytes.append(contentsOf: #":{"characteristics":{"#.utf8)
            var firstCharacteristic = true
            for characteristic in service.characteristics {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let topic = map.topic(of: .characteristic(home.id, reference)), !policy.rule(reference).excluded else { continue }
                let key = ObjectIdentifier(characteristic.definition)
                let meta = characteristicMeta[key] ?? LayoutDocument.characteristicMeta(characteristic)
                characteristicMeta[key] = meta
                if !firstCharacteristic { bytes.append(UInt8(ascii: ",")) }
                firstCharacteristic = false
                bytes.append(contentsOf: JSON.string(String(topic.dropFirst(serviceTopic.count + 1))).encoded())
                bytes.append(UInt8(ascii: ":"))
                bytes.append(contentsOf: meta)
            }
            bytes.append(contentsOf: #"},"type":"#.utf8)
            bytes.append(contentsOf: JSON.string(service.type).encoded())
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(contentsOf: "}}".utf8)
        return bytes
    }

    /// The accessory's services that have topics, by their topic segment, in segment order.
    private func serviceSegments(of accessory: Accessory, home: HomeID) -> [(segment: String, service: Service, topic: String)] {
        guard let accessoryTopic = map.topic(of: .accessory(home, accessory.id)) else { return [] }
        return accessory.visibleServices.compactMap { service -> (String, Service, String)? in
            guard let topic = map.topic(of: .service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid))) else { return nil }
            return (String(topic.dropFirst(accessoryTopic.count + 1)), service, topic)
        }.sorted { $0.0 < $1.0 }
    }

    private func metaObject(_ accessory: Accessory, index: HomeIndex) -> [String: JSON] {
        [
            "id": .string(accessory.id.rawValue), "name": .string(accessory.name), "manufacturer": .string(accessory.manufacturer),
            "model": .string(accessory.model), "serialNumber": .string(accessory.serialNumber),
            "firmwareRevision": .string(accessory.firmwareRevision), "category": .string(accessory.category.name),
            "room": .string(index.roomName(of: accessory)), "bridge": .string(accessory.bridgeID?.rawValue),
            "bridged": .array((index.bridged[accessory.id] ?? []).map(JSON.string)),
        ]
    }

    /// A service's values as one JSON object keyed by characteristic segment
    /// (`{"brightness": 40, "on": true}`), on the service's topic.
    func values(of service: Service, of accessory: Accessory, home: HomeID) -> (String, [UInt8])? {
        guard let topic = map.topic(of: .service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid))) else { return nil }
        var object: [String: JSON] = [:]
        for characteristic in service.characteristics where !characteristic.isMomentary {
            guard let value = characteristic.value, !policy.rule(CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)).excluded,
                  let valueTopic = map.topic(of: .characteristic(home, CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid))) else { continue }
            object[String(valueTopic.dropFirst(topic.count + 1))] = .value(value)
        }
        return (topic, JSON.object(object).encoded())
    }

    /// A colour light's hue and saturation together, `{"hue": 30, "saturation": 60}`, on
    /// `<service>/$color`: one topic for what a dashboard (Home Assistant's `hs_state_topic`)
    /// reads as one value. Nil unless the service has both, readable, with values.
    func color(of service: Service, of accessory: Accessory, home: HomeID) -> (String, [UInt8])? {
        guard let hue = service.characteristic(ofType: "hue"), let saturation = service.characteristic(ofType: "saturation"),
              hue.isReadable, saturation.isReadable, let hueValue = hue.value, let saturationValue = saturation.value,
              let topic = map.topic(of: .service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid))) else { return nil }
        return ("\(topic)/$color", JSON.object(["hue": .value(hueValue), "saturation": .value(saturationValue)]).encoded())
    }

    /// The Home Assistant discovery config of an accessory, when discovery is enabled.
    /// None for a disabled accessory or one whose options say no device; the options' names,
    /// device classes and entities left out are applied (``HomeAssistantDiscovery/applying(_:to:in:map:)``).
    func discoveryConfig(_ accessory: Accessory, in home: Home, index: HomeIndex) -> (topic: String, payload: [UInt8])? {
        guard let prefix = homeAssistantPrefix, !policy.isDisabled(accessory.id), policy.devices[accessory.id] != HomeAssistantOverride.none,
              let config = HomeAssistantDiscovery.config(for: accessory, in: home, map: map, base: base, prefix: prefix,
                                                         roomName: index.roomName(of: accessory), bridgeID: accessory.bridgeID) else { return nil }
        guard policy.options[accessory.id] != nil else { return (config.topic, config.payload.encoded()) }
        return (config.topic, HomeAssistantDiscovery.applying(policy, to: config.payload, of: accessory, in: home.id, map: map).encoded())
    }

    /// Whether a characteristic of one of these types of the service is excluded.
    func isExcluded(_ service: Service, of accessory: Accessory, types: Set<String>) -> Bool {
        service.characteristics.contains { types.contains($0.type) && policy.rule(CharacteristicReference(accessoryID: accessory.id, iid: $0.iid)).excluded }
    }
}

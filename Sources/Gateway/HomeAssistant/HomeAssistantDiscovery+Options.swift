import HomeModel
import Wire

/// The options' part in discovery: a device's name, an entity's name and device class, entities
/// left out (`homeassistant: null`), and entities of excluded characteristics left out (Home
/// Assistant could never show them).
extension HomeAssistantDiscovery {
    /// `payload` (an accessory's device config) with what `policy` says of the accessory applied.
    static func applying(_ policy: PublishPolicy, to payload: JSON, of accessory: Accessory, in home: HomeID, map: TopicMap) -> JSON {
        guard var config = payload.object, var components = config["components"]?.object else { return payload }
        if case .entity(let name?, _)? = policy.devices[accessory.id], var device = config["device"]?.object {
            device["name"] = .string(name)
            config["device"] = .object(device)
        }
        var overrides: [(topic: String, entity: HomeAssistantOverride)] = []
        var excluded: [String] = []
        for place in PublishPolicy.places(of: accessory, in: home, map: map) {
            let rule = policy.rule(place.reference)
            if rule.excluded { excluded.append(place.topic) }
            if let entity = rule.homeAssistant { overrides.append((place.topic, entity)) }
        }
        for (key, component) in components {
            guard var fields = component.object else { continue }
            if excluded.contains(where: { topic in references(fields, topic) }) {
                components[key] = nil
                continue
            }
            let entity = serviceOverride(policy, key: key, of: accessory) ?? overrides.first { fields["state_topic"]?.string == $0.topic }?.entity
            switch entity {
            case nil: continue
            case .none?: components[key] = nil
            case .entity(let name, let deviceClass)?:
                if let name { fields["name"] = .string(name) }
                if let deviceClass { fields["device_class"] = .string(deviceClass) }
                components[key] = .object(fields)
            }
        }
        config["components"] = .object(components)
        return .object(config)
    }

    /// The override of the service a component was made of (its key is `<type>_<iid>`).
    private static func serviceOverride(_ policy: PublishPolicy, key: String, of accessory: Accessory) -> HomeAssistantOverride? {
        guard !policy.services.isEmpty, let separator = key.lastIndex(of: "_"), let iid = Int(key[key.index(after: separator)...]) else { return nil }
        return policy.services[ServiceReference(accessoryID: accessory.id, serviceIID: iid)]
    }

    /// Whether any of a component's topics is `topic` or below it (`/set`, `/label`).
    private static func references(_ fields: [String: JSON], _ topic: String) -> Bool {
        fields.contains { key, value in
            guard key.hasSuffix("_topic"), let text = value.string else { return false }
            return text == topic || text.hasPrefix(topic + "/")
        }
    }
}

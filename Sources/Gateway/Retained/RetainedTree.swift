import HomeModel
import Wire

/// Everything the gateway asserts, retained, made from the tree and what decides it (the
/// options, the output setting, `$last-seen`, Adaptive Lighting, the browser), with no state of
/// the engine's: the engine offers it to the ``RetainedMachine`` at a synchronisation and after
/// a layout change (`Gateway+Retained.swift`).
struct RetainedTree {
    let tree: HomeTree
    let policy: PublishPolicy
    let output: Gateway.Output
    /// Whether each characteristic has its own `<characteristic>/$meta`.
    let characteristicMeta: Bool
    let homeAssistantPrefix: String?
    let lastSeen: LastSeen
    let adaptiveLighting: AdaptiveLightingSchedule
    let browser: BrowserEntries
    /// The payloads, from the tree and the options.
    private let payloads: TreePayloads

    init(tree: HomeTree, policy: PublishPolicy, output: Gateway.Output, characteristicMeta: Bool, homeAssistantPrefix: String?,
         lastSeen: LastSeen, adaptiveLighting: AdaptiveLightingSchedule, browser: BrowserEntries) {
        self.tree = tree
        self.policy = policy
        self.output = output
        self.characteristicMeta = characteristicMeta
        self.homeAssistantPrefix = homeAssistantPrefix
        self.lastSeen = lastSeen
        self.adaptiveLighting = adaptiveLighting
        self.browser = browser
        payloads = TreePayloads(base: tree.base, map: tree.map, policy: policy, homeAssistantPrefix: homeAssistantPrefix)
    }

    /// Every retained message in the order it is published: `$layout` in its parts, then per
    /// accessory `$meta`, `$reachable`, `$last-seen`, every value (momentary characteristics
    /// excepted) with its label when it has one and each characteristic's `$meta` as the output
    /// setting says, Home Assistant's discovery config when enabled; last the accessory
    /// browser's entries. Each topic comes once; payloads are made one at a time, never all
    /// held. `withheld`: what the options hold back from the broker (a disabled accessory's, an
    /// excluded characteristic's, a value not retained), for the page instead.
    func forEach(_ body: (_ topic: String, _ payload: [UInt8], _ withheld: Bool) -> Void) {
        for (topic, payload) in LayoutDocument(base: tree.base, map: tree.map, options: policy.options).messages(for: tree.homes) { body(topic, payload, false) }
        // Characteristics of one kind share a definition and so a `$meta`: made once, shared.
        var metaPayloads: [ObjectIdentifier: [UInt8]] = [:]
        for home in tree.homes {
            let index = HomeIndex(home)
            for accessory in home.accessories {
                forEach(of: accessory, in: home, index: index, metaPayloads: &metaPayloads, body)
            }
        }
        for (topic, payload) in browser.retained { body(topic, payload, false) }
    }

    /// One accessory's retained messages (see ``forEach(_:)``).
    private func forEach(of accessory: Accessory, in home: Home, index: HomeIndex, metaPayloads: inout [ObjectIdentifier: [UInt8]],
                         _ body: (String, [UInt8], Bool) -> Void) {
        guard let topic = tree.map.topic(of: .accessory(home.id, accessory.id)) else { return }
        let disabled = policy.isDisabled(accessory.id)
        func emit(_ topic: String, _ payload: [UInt8], withheld: Bool = false) {
            body(topic, payload, disabled || withheld)
        }
        emit(TopicGrammar.topic(topic, .meta), payloads.meta(accessory, in: home, index: index, characteristicMeta: &metaPayloads))
        let reachable = Array((accessory.isReachable ? "true" : "false").utf8)
        emit(TopicGrammar.topic(topic, .reachable), reachable)
        if let seen = lastSeen.published(accessory.id) { emit(TopicGrammar.topic(topic, .lastSeen), LastSeen.payload(seen)) }
        // Home Assistant's copy of `$reachable`, before the config that points at it.
        let discovery = payloads.discoveryConfig(accessory, in: home, index: index)
        if discovery != nil, let prefix = homeAssistantPrefix {
            body(HomeAssistantDiscovery.reachabilityTopic(for: accessory.id, prefix: prefix), reachable, false)
        }
        for bulb in AdaptiveLightingBulb.all(of: accessory) {
            if let topic = tree.adaptiveLightingTopic(of: bulb.service) { emit(topic, adaptiveLighting.payload(bulb.service)) }
        }
        for service in accessory.visibleServices {
            if output.perService, let (serviceTopic, payload) = payloads.values(of: service, of: accessory, home: home.id) {
                emit(serviceTopic, payload)
            }
            guard output.perCharacteristic else { continue }
            if let (colorTopic, payload) = payloads.color(of: service, of: accessory, home: home.id) {
                emit(colorTopic, payload, withheld: payloads.isExcluded(service, of: accessory, types: ["hue", "saturation"]))
            }
            for characteristic in service.characteristics {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let valueTopic = tree.map.topic(of: .characteristic(home.id, reference)) else { continue }
                let rule = policy.rule(reference)
                if characteristicMeta {
                    let key = ObjectIdentifier(characteristic.definition)
                    let payload = metaPayloads[key] ?? LayoutDocument.characteristicMeta(characteristic)
                    metaPayloads[key] = payload
                    emit(TopicGrammar.topic(valueTopic, .meta), payload, withheld: rule.excluded)
                }
                guard !characteristic.isMomentary, let value = characteristic.value else { continue }
                emit(valueTopic, value.encoded, withheld: rule.excluded || !rule.retain)
                if let label = ValueLabels.of(characteristic)?.label(of: value) {
                    emit("\(valueTopic)/label", Array(label.utf8), withheld: rule.excluded || !rule.retain)
                }
            }
        }
        if let discovery { body(discovery.topic, discovery.payload, false) }
    }
}

import Foundation
import HomeStore
import HomeModel
import MQTT
import Wire

/// The retained topics under the base: exactly those of the tree.
///
/// After every (re)connect the gateway synchronises: the broker sends every retained message
/// under the base (the subscription is restored before `.connected`), then the gateway's own
/// marker on `<base>/$sync/<id>` comes back after them. At the marker the gateway publishes
/// what the broker lacks or has wrong (all of it, if the broker lost its retained messages) and
/// clears what the tree does not have (stale topics, stray retained messages, topics left from
/// before a rename, whether seen now or remembered in the store's ledger).
///
/// What to publish, clear and record is decided by the ``RetainedMachine``
/// (`Retained/RetainedMachine.swift`); here the tree's retained messages are made and the
/// machine's actions carried out.
extension Gateway {
    /// The connection is (again) up: a synchronisation begins with the marker.
    func beginSync() {
        synchronisationBegan = .now
        carry(retained.connected(marker: UUID().uuidString))
    }

    /// A marker came back. When it is the awaited one every retained message the broker has was
    /// seen: the tree's retained messages are offered to the machine as they are made, each
    /// published at once when the broker lacks it, then the stale ones are cleared.
    func finishSync(marker: String) {
        guard retained.markerReturned(marker) else { return }
        rememberLastSeenFromBroker()
        let markerBack = ContinuousClock.now
        logger.debug("synchronising: the broker's retained messages and the marker back \(synchronisationBegan.duration(to: markerBack)) after the connection")
        var offered = 0
        forEachRetained { topic, payload in
            offered += 1
            if retained.offer(topic, payload) { send(topic, payload, retain: true, qos: policy.qos(of: topic)) }
        }
        logger.debug("synchronising: \(offered) retained messages built and handed to the broker in \(markerBack.duration(to: .now)), \(Self.residentMemory)")
        carry(retained.endSynchronisation())
        logger.debug("synchronising: stale topics cleared and the ledger handed to the store after \(markerBack.duration(to: .now)), \(started.duration(to: .now)) after the engine started, \(Self.residentMemory)")
    }

    /// Carries out the retained machine's actions, in order.
    func carry(_ actions: [RetainedMachine.Action]) {
        for action in actions {
            switch action {
            case .sendMarker(let topic):
                send(topic, Array("sync".utf8), retain: false)
            case .publish(let topic, let payload):
                send(topic, payload, retain: true, qos: policy.qos(of: topic))
            case .clear(let topic):
                send(topic, [], retain: true)
            case .record(let topics):
                storeWriter.write("record retained topics in the ledger") { store throws(StoreError) in try store.recordRetained(topics) }
            case .forget(let topics):
                storeWriter.write("forget cleared topics in the ledger") { store throws(StoreError) in try store.forgetRetained(topics) }
            case .synchronised(let asserted, let published, let cleared):
                logger.info("synchronised with the broker: \(asserted) retained topics, \(published) published, \(cleared) stale cleared")
            case .store(let deferred):
                storeWriter.write(deferred.what, deferred.write)
            case .firstSynchronisationDone:
                Memory.returnFreedMemory()
            }
        }
    }

    /// Everything the gateway asserts, retained, in the order it is published
    /// (``RetainedTree/forEach(_:)``); what the options hold back goes to the page instead
    /// (``withhold(_:_:)``).
    func forEachRetained(_ body: (String, [UInt8]) -> Void) {
        let retainedTree = RetainedTree(tree: tree, policy: policy, output: configuration.output, characteristicMeta: configuration.characteristicMeta,
                                        homeAssistantPrefix: configuration.homeAssistantPrefix, lastSeen: lastSeen, adaptiveLighting: adaptiveLighting, browser: browser)
        retainedTree.forEach { topic, payload, withheld in
            if withheld { withhold(topic, payload) } else { body(topic, payload) }
        }
    }

    /// The payloads the tree's retained topics carry, from the tree and the options as they are now.
    var payloads: TreePayloads {
        TreePayloads(base: base, map: tree.map, policy: policy, homeAssistantPrefix: configuration.homeAssistantPrefix)
    }

    /// Home Assistant came (back) online: every discovery config again, changed or not.
    func republishDiscovery() {
        guard configuration.homeAssistantPrefix != nil else { return }
        let payloads = payloads
        for home in tree.homes {
            let index = HomeIndex(home)
            for accessory in home.accessories {
                guard let (topic, payload) = payloads.discoveryConfig(accessory, in: home, index: index) else { continue }
                send(topic, payload, retain: true)
            }
        }
        logger.info("Home Assistant is online: discovery configs published again")
    }

    /// Publishes a characteristic's value as its options say: retained (not for momentary
    /// characteristics or where `retain` is off), at once or when its debounce or throttle lets
    /// it (``PublishPacer``), not at all for an excluded characteristic or a disabled accessory;
    /// what is held back goes to the page. Returns false for a hidden characteristic, which has
    /// no topic.
    @discardableResult
    func publishValue(_ value: Value, of characteristic: Characteristic, reference: CharacteristicReference, home: HomeID) -> Bool {
        guard let topic = tree.map.topic(of: .characteristic(home, reference)) else { return false } // hidden: no topic
        let rule = policy.rule(reference)
        if policy.isDisabled(reference.accessoryID) || rule.excluded {
            withholdValue(value, of: characteristic, topic: topic)
            return true
        }
        if rule.isPaced, !pacer.offer(reference, debounce: rule.debounce, throttle: rule.throttle, now: clock.elapsed) {
            withholdValue(value, of: characteristic, topic: topic)
            pacerDeadlines.wake(for: pacer.nextDeadline)
            return true
        }
        publish(value, of: characteristic, reference: reference, topic: topic, home: home, rule: rule)
        return true
    }

    /// Publishes a value on its topics (the label, the colour, the service's object with it).
    func publish(_ value: Value, of characteristic: Characteristic, reference: CharacteristicReference, topic: String, home: HomeID, rule: PublishPolicy.Rule) {
        let payload = value.encoded
        let label = ValueLabels.of(characteristic)?.label(of: value)
        if characteristic.isMomentary || !rule.retain {
            if configuration.output.perCharacteristic || characteristic.isMomentary {
                send(topic, payload, retain: false, qos: rule.qos)
                if let label { send("\(topic)/label", Array(label.utf8), retain: false, qos: rule.qos) }
            }
            if !characteristic.isMomentary { withholdValue(value, of: characteristic, topic: topic) } // the page keeps it
            if characteristic.isMomentary { return }
        } else if configuration.output.perCharacteristic {
            assertRetained(topic, payload)
            if let label { assertRetained("\(topic)/label", Array(label.utf8)) }
        }
        // The service's own topics that carry this value: its colour, its object.
        let isColour = configuration.output.perCharacteristic && (characteristic.type == "hue" || characteristic.type == "saturation")
        guard isColour || configuration.output.perService, let (accessory, service) = tree.service(of: reference) else { return }
        let payloads = payloads
        if isColour, let (colorTopic, colorPayload) = payloads.color(of: service, of: accessory, home: home) {
            if payloads.isExcluded(service, of: accessory, types: ["hue", "saturation"]) { withhold(colorTopic, colorPayload) } else { assertRetained(colorTopic, colorPayload) }
        }
        if configuration.output.perService, let (serviceTopic, servicePayload) = payloads.values(of: service, of: accessory, home: home) {
            assertRetained(serviceTopic, servicePayload)
        }
    }

    func publishReachability(of accessory: Accessory, home: HomeID) {
        guard let topic = tree.map.topic(of: .accessory(home, accessory.id)) else { return }
        let reachable = Array((accessory.isReachable ? "true" : "false").utf8)
        if policy.isDisabled(accessory.id) {
            withhold(TopicGrammar.topic(topic, .reachable), reachable)
            return
        }
        assertRetained(TopicGrammar.topic(topic, .reachable), reachable)
        // Home Assistant's copy, for an accessory that has a discovery config.
        if let prefix = configuration.homeAssistantPrefix {
            let copy = HomeAssistantDiscovery.reachabilityTopic(for: accessory.id, prefix: prefix)
            if retained.isAsserted(copy) { assertRetained(copy, reachable) }
        }
    }

    /// Publishes a retained topic if its payload changed, and records it in the ledger.
    func assertRetained(_ topic: String, _ payload: [UInt8]) {
        carry(retained.assert(topic, payload))
    }

    /// Clears a retained topic the gateway asserted, and forgets it in the ledger.
    func clearRetained(_ topic: String) {
        carry(retained.withdraw(topic))
    }

    /// Moves the retained state to the current tree after the layout changed (a rename, a move):
    /// new topics published in the tree's order (an accessory's `$reachable` and values before its
    /// discovery config), then old ones cleared; unchanged ones left alone.
    func republishAfterLayoutChange() {
        var desired: [(topic: String, payload: [UInt8])] = []
        forEachRetained { topic, payload in desired.append((topic, payload)) }
        carry(retained.reassert(desired))
    }
}

extension Gateway {
    /// The process's resident memory, for the debug log of a start-up.
    public static var residentMemory: String {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return "resident memory unknown" }
        return "resident \(line.dropFirst("VmRSS:".count).trimmingCharacters(in: .whitespaces))"
    }
}

import Foundation
import HomeModel
import MQTT

/// The retained topics under the base: exactly those of the tree.
///
/// After every (re)connect the gateway synchronises: the broker sends every retained message
/// under the base (the subscription is restored before `.connected`), then the gateway's own
/// marker on `<base>/$sync/<id>` comes back after them. At the marker the gateway publishes
/// what the broker lacks or has wrong (all of it, if the broker lost its retained messages) and
/// clears what the tree does not have (stale topics, stray retained messages, topics left from
/// before a rename, whether seen now or remembered in the store's ledger).
extension Gateway {
    /// Topics under the base the gateway never touches in its hygiene.
    static let ownTopics: Set<String> = ["$state"]

    func beginSync() {
        let marker = UUID().uuidString
        sync = Sync(marker: marker)
        send("\(base)/$sync/\(marker)", Array("sync".utf8), retain: false)
    }

    /// The marker came back: every retained message the broker has was seen.
    func finishSync() {
        guard sync != nil else { return }
        sync = nil
        executedRetainedCommands.removeAll()
        let seen = seenRetained
        seenRetained.removeAll()
        let desired = desiredRetained()
        var published = 0
        for (topic, payload) in desired where seen[topic] != payload {
            send(topic, payload, retain: true)
            published += 1
        }
        let stale = Set(seen.keys).union(ledger).subtracting(desired.keys).filter { !isOwnTopic($0) }
        for topic in stale { send(topic, [], retain: true) }
        retained = desired
        updateLedger(adding: Set(desired.keys), removing: stale)
        logger.info("synchronised with the broker: \(desired.count) retained topics, \(published) published, \(stale.count) stale cleared")
    }

    /// Everything the gateway asserts, retained: `$layout`, and per accessory `$meta`,
    /// `$reachable` and every value (momentary characteristics excepted).
    func desiredRetained() -> [String: [UInt8]] {
        var desired: [String: [UInt8]] = ["\(base)/$layout": layoutPayload()]
        for home in homes {
            let index = HomeIndex(home)
            for accessory in home.accessories {
                guard let topic = map.topic(of: .accessory(home.id, accessory.id)) else { continue }
                desired["\(topic)/$meta"] = metaPayload(accessory, in: home, index: index)
                desired["\(topic)/$reachable"] = Array((accessory.isReachable ? "true" : "false").utf8)
                for service in accessory.visibleServices {
                    for characteristic in service.characteristics where !characteristic.isMomentary {
                        guard let value = characteristic.value,
                              let valueTopic = map.topic(of: .characteristic(home.id, CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid))) else { continue }
                        desired[valueTopic] = Array(value.json.utf8)
                    }
                }
            }
        }
        return desired
    }

    /// Publishes a characteristic's value: retained, or not for momentary characteristics.
    func publishValue(_ value: Value, of characteristic: Characteristic, reference: CharacteristicReference, home: HomeID) {
        guard let topic = map.topic(of: .characteristic(home, reference)) else { return } // hidden: no topic
        let payload = Array(value.json.utf8)
        if characteristic.isMomentary {
            send(topic, payload, retain: false)
            return
        }
        assertRetained(topic, payload)
    }

    func publishReachability(of accessory: Accessory, home: HomeID) {
        guard let topic = map.topic(of: .accessory(home, accessory.id)) else { return }
        assertRetained("\(topic)/$reachable", Array((accessory.isReachable ? "true" : "false").utf8))
    }

    /// Publishes a retained topic if its payload changed, and records it in the ledger.
    func assertRetained(_ topic: String, _ payload: [UInt8]) {
        guard retained[topic] != payload else { return }
        retained[topic] = payload
        send(topic, payload, retain: true)
        if !ledger.contains(topic) { updateLedger(adding: [topic], removing: []) }
    }

    /// Moves the retained state to the current tree after the layout changed (a rename, a move):
    /// old topics cleared, new ones published, unchanged ones left alone.
    func republishAfterLayoutChange() {
        let desired = desiredRetained()
        let stale = Set(retained.keys).subtracting(desired.keys)
        for topic in stale { send(topic, [], retain: true) }
        for (topic, payload) in desired where retained[topic] != payload {
            send(topic, payload, retain: true)
        }
        retained = desired
        updateLedger(adding: Set(desired.keys), removing: stale)
    }

    func isOwnTopic(_ topic: String) -> Bool {
        guard topic.hasPrefix(base + "/") else { return true }
        return Self.ownTopics.contains(String(topic.dropFirst(base.count + 1)))
    }

    /// Keeps the store's ledger of published retained topics.
    func updateLedger(adding added: Set<String>, removing removed: Set<String>) {
        let new = added.subtracting(ledger)
        let gone = removed.intersection(ledger)
        guard !new.isEmpty || !gone.isEmpty else { return }
        ledger.formUnion(new)
        ledger.subtract(gone)
        do {
            if !new.isEmpty { try store?.recordRetained(new) }
            if !gone.isEmpty { try store?.forgetRetained(gone) }
        } catch {
            logger.error("could not update the ledger of retained topics: \(error)")
        }
    }
}

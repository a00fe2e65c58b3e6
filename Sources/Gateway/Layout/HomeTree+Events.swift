import HomeModel
import Wire

/// The `$events` about one accessory, as the tree names it (its name and home's): reachability,
/// a device's new structure, a device's warning and its own events. The engine announces them.
extension HomeTree {
    /// `accessory-reachability`; nil for an accessory the tree lacks.
    func reachabilityEvent(_ id: AccessoryID, reachable: Bool) -> Announcement? {
        guard let (home, accessory) = accessory(id) else { return nil }
        return Announcement("accessory-reachability", [
            "accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name), "reachable": .bool(reachable),
        ])
    }

    /// `accessory-updated` for each accessory whose characteristics' topics differ from
    /// `topicsBefore` (its services or characteristics changed on the device: its configuration
    /// number went up), with the topics added and removed.
    func updateEvents(comparedWith topicsBefore: [AccessoryID: Set<String>]) -> [Announcement] {
        topicsBefore.sorted(by: { $0.key.rawValue < $1.key.rawValue }).compactMap { id, old in
            let new = characteristicTopics(of: id)
            guard new != old, let (home, accessory) = accessory(id) else { return nil }
            return Announcement("accessory-updated", [
                "accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name),
                "added": .array(new.subtracting(old).sorted().map(JSON.string)), "removed": .array(old.subtracting(new).sorted().map(JSON.string)),
            ])
        }
    }

    /// `accessory-warning`: what a device's driver warns of (the accessory named by id when the
    /// tree lacks it).
    func warningEvent(_ id: AccessoryID, message: String) -> Announcement {
        let (home, name) = accessory(id).map { ($0.home.name, $0.accessory.name) } ?? ("", id.rawValue)
        return Announcement("accessory-warning", [
            "accessory": .string(id.rawValue), "name": .string(name), "home": .string(home), "message": .string(message),
        ])
    }

    /// `device-event`: an event of the device's own (a doorbell's ring on a camera, ...); nil
    /// for an accessory the tree lacks.
    func deviceEvent(_ id: AccessoryID, kind: String, data: [String: JSON]) -> Announcement? {
        guard let (home, accessory) = accessory(id) else { return nil }
        return Announcement("device-event", [
            "accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name), "kind": .string(kind), "data": .object(data),
        ])
    }

    /// The values of accessories `ids` that differ from those in `before` (all of an accessory
    /// new since), for the history: a device's description brought them. Hidden
    /// characteristics (no topic) and momentary ones (events, not states) are left out.
    func changedValues(of ids: [AccessoryID], comparedWith before: [Home]) -> [(CharacteristicReference, Value)] {
        let previous = Dictionary(before.flatMap(\.accessories).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var changed: [(CharacteristicReference, Value)] = []
        for id in ids {
            guard let (home, accessory) = accessory(id) else { continue }
            for service in accessory.visibleServices {
                for characteristic in service.characteristics where !characteristic.isMomentary {
                    guard let value = characteristic.value, previous[id]?.characteristic(characteristic.iid)?.characteristic.value != value else { continue }
                    let reference = CharacteristicReference(accessoryID: id, iid: characteristic.iid)
                    if map.topic(of: .characteristic(home.id, reference)) != nil { changed.append((reference, value)) }
                }
            }
        }
        return changed
    }
}

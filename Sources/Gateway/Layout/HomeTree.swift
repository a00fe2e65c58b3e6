import HomeModel

/// The home tree the engine keeps: the homes, with their devices' structure, values and
/// reachability; the topic of each object (``TopicMap``); where each accessory is. A value type
/// the engine owns (`Gateway.tree`): it answers look-ups and takes values, and the engine
/// carries out what follows (publishing, storing, announcing).
///
/// The homes change in place through ``homes`` too (a layout change, a device's new
/// structure); ``reindex()`` then lays out the topics and locations again.
struct HomeTree {
    /// The base topic.
    let base: String
    /// The homes.
    var homes: [Home]
    /// The topic of each home, room, accessory, service and characteristic.
    private(set) var map: TopicMap
    /// Where each accessory is: home index and accessory index, for O(1) look-ups.
    private(set) var locations: [AccessoryID: (home: Int, accessory: Int)]

    /// The tree of `homes`; the topics are laid out at the first ``reindex()`` (once the
    /// devices' structure is known).
    init(base: String, homes: [Home]) {
        self.base = base
        self.homes = homes
        map = TopicMap(base: base, homes: [])
        locations = homes.accessoryLocations
    }

    /// Lays out the topics and the accessories' locations again after the homes changed.
    mutating func reindex() {
        map = TopicMap(base: base, homes: homes)
        locations = homes.accessoryLocations
    }

    // MARK: Look-ups

    /// The accessory with `id`, and its home.
    func accessory(_ id: AccessoryID) -> (home: Home, accessory: Accessory)? {
        guard let location = locations[id] else { return nil }
        return (homes[location.home], homes[location.home].accessories[location.accessory])
    }

    /// The characteristic `reference` names, read in place (``accessory(_:)`` copies the home).
    func characteristic(_ reference: CharacteristicReference) -> Characteristic? {
        guard let location = locations[reference.accessoryID] else { return nil }
        return homes[location.home].accessories[location.accessory].characteristic(reference.iid)?.characteristic
    }

    /// The accessory and the service a characteristic belongs to.
    func service(of reference: CharacteristicReference) -> (accessory: Accessory, service: Service)? {
        guard let (_, accessory) = accessory(reference.accessoryID), let (service, _) = accessory.characteristic(reference.iid) else { return nil }
        return (accessory, service)
    }

    /// A characteristic as messages name it: `Floor Lamp (Brightness)`.
    func name(of reference: CharacteristicReference) -> String {
        guard let (_, accessory) = accessory(reference.accessoryID), let (_, characteristic) = accessory.characteristic(reference.iid) else {
            return reference.description
        }
        return "\(accessory.name) (\(characteristic.displayName))"
    }

    /// The label of a characteristic's value, when its type has labels.
    func label(of value: Value, at reference: CharacteristicReference) -> String? {
        guard let characteristic = characteristic(reference) else { return nil }
        return ValueLabels.of(characteristic)?.label(of: value)
    }

    /// The topics of an accessory's visible characteristics.
    func characteristicTopics(of id: AccessoryID) -> Set<String> {
        guard let (home, accessory) = accessory(id) else { return [] }
        return Set(accessory.visibleServices.flatMap { service in
            service.characteristics.compactMap { map.topic(of: .characteristic(home.id, CharacteristicReference(accessoryID: id, iid: $0.iid))) }
        })
    }

    /// The topic of a characteristic's value; nil for a hidden one.
    func topic(of reference: CharacteristicReference) -> String? {
        guard let location = locations[reference.accessoryID] else { return nil }
        return map.topic(of: .characteristic(homes[location.home].id, reference))
    }

    // MARK: Changes

    /// A value the device confirmed or reported, kept unless the characteristic is momentary.
    /// Returns the characteristic as it was, its home, and whether the value changed (an event
    /// of a momentary characteristic always does); nil for a characteristic the tree lacks.
    mutating func takeValue(_ value: Value, at reference: CharacteristicReference) -> (characteristic: Characteristic, home: HomeID, changed: Bool)? {
        guard let location = locations[reference.accessoryID],
              let (_, characteristic) = homes[location.home].accessories[location.accessory].characteristic(reference.iid) else { return nil }
        let changed = characteristic.isMomentary || characteristic.value != value
        if !characteristic.isMomentary, changed {
            homes[location.home].accessories[location.accessory].setValue(value, iid: reference.iid)
        }
        return (characteristic, homes[location.home].id, changed)
    }

    /// Marks an accessory reachable.
    mutating func markReachable(_ id: AccessoryID) {
        guard let location = locations[id] else { return }
        homes[location.home].accessories[location.accessory].isReachable = true
    }
}

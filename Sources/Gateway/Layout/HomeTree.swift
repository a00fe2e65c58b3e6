import Accessories
import HomeModel
import Wire

/// The home tree the engine keeps: the homes, with their devices' structure, values and
/// reachability; the topic of each object (``TopicMap``); where each accessory is. A value type
/// the engine owns (`Gateway.tree`): it answers look-ups and takes what happened (a value,
/// reachability, a device's structure or description, a removal, a new accessory's placement),
/// saying what changed; the engine carries out what follows (publishing, storing, announcing).
///
/// Layout changes (a management request, a reload, a trigger's record) still change ``homes``
/// in place; ``reindex()`` then lays out the topics and locations again.
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

    /// A characteristic as messages name it: `Floor Lamp (brightness)`.
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

    /// `<accessory topic>/<attribute>` (`$snapshot`, `$last-seen`); nil for an accessory the tree lacks.
    func topic(of id: AccessoryID, _ attribute: TopicGrammar.Attribute) -> String? {
        guard let location = locations[id] else { return nil }
        return map.topic(of: .accessory(homes[location.home].id, id)).map { TopicGrammar.topic($0, attribute) }
    }

    /// The topic of a characteristic's value; nil for a hidden one.
    func topic(of reference: CharacteristicReference) -> String? {
        guard let location = locations[reference.accessoryID] else { return nil }
        return map.topic(of: .characteristic(homes[location.home].id, reference))
    }

    // MARK: Changes

    /// A value the device confirmed or reported, kept unless the characteristic is momentary.
    /// Returns the accessory's home, the characteristic as it was (nil for one the accessory
    /// lacks) and whether the value changed (an event of a momentary characteristic always
    /// does); nil for an accessory the tree lacks.
    mutating func takeValue(_ value: Value, at reference: CharacteristicReference) -> TakenValue? {
        guard let location = locations[reference.accessoryID] else { return nil }
        let home = homes[location.home].id
        guard let (_, characteristic) = homes[location.home].accessories[location.accessory].characteristic(reference.iid) else {
            return TakenValue(home: home, characteristic: nil, changed: false)
        }
        let changed = characteristic.isMomentary || characteristic.value != value
        if !characteristic.isMomentary, changed {
            homes[location.home].accessories[location.accessory].setValue(value, iid: reference.iid)
        }
        return TakenValue(home: home, characteristic: characteristic, changed: changed)
    }

    /// What ``takeValue(_:at:)`` found: the accessory's home, the characteristic as it was
    /// (nil if the accessory lacks it), and whether the value changed.
    struct TakenValue {
        let home: HomeID
        let characteristic: Characteristic?
        let changed: Bool
    }

    /// Marks an accessory reachable.
    mutating func markReachable(_ id: AccessoryID) {
        guard let location = locations[id] else { return }
        homes[location.home].accessories[location.accessory].isReachable = true
    }

    /// Sets an accessory's reachability. Returns the accessory and its home when it changed;
    /// nil when it was so already, or the tree lacks it.
    mutating func setReachable(_ id: AccessoryID, _ reachable: Bool) -> (home: Home, accessory: Accessory)? {
        guard let location = locations[id], homes[location.home].accessories[location.accessory].isReachable != reachable else { return nil }
        homes[location.home].accessories[location.accessory].isReachable = reachable
        return (homes[location.home], homes[location.home].accessories[location.accessory])
    }

    /// Removes accessories for good, from their homes and from the service groups and action sets
    /// that name them. Returns whether anything changed (then ``reindex()``).
    mutating func remove(_ gone: Set<AccessoryID>) -> Bool {
        let before = homes
        for index in homes.indices {
            homes[index].accessories.removeAll { gone.contains($0.id) }
            for group in homes[index].serviceGroups.indices {
                homes[index].serviceGroups[group].services.removeAll { gone.contains($0.accessoryID) }
            }
            for actionSet in homes[index].actionSets.indices {
                homes[index].actionSets[actionSet].actions.removeAll { gone.contains($0.characteristic.accessoryID) }
            }
        }
        return homes != before
    }

    /// Places a new accessory: into the home `placement` names (else the primary home; a home is
    /// made when there is none), and into the room it names (made if missing) unless it is
    /// behind a bridge: those start in the default room, as in HomeKit. Returns the home's and
    /// the room's names, and a room name refused (not a valid HomeKit name: the default room then).
    mutating func place(_ device: Accessory, _ placement: Placement) -> (home: String, room: String, refusedRoom: String?) {
        if homes.isEmpty { homes.append(Home(id: "home", name: "My Home", isPrimary: true)) }
        let homeIndex = placement.home.flatMap { name in
            homes.firstIndex { HomeKitName.key($0.name) == HomeKitName.key(name) || $0.id.rawValue == name }
        } ?? homes.firstIndex(where: \.isPrimary) ?? 0
        var accessory = device
        accessory.roomID = nil
        var refused: String?
        if device.bridgeID == nil, let roomName = placement.room {
            (accessory.roomID, refused) = room(named: roomName, inHome: homeIndex)
        }
        homes[homeIndex].accessories.append(accessory)
        return (homes[homeIndex].name, homes[homeIndex].room(of: accessory).name, refused)
    }

    /// The room called `name` in the home (HomeKit's comparison), made if there is none; nil
    /// for the default room, and for a name that is not a valid HomeKit name (returned as refused).
    private mutating func room(named name: String, inHome homeIndex: Int) -> (RoomID?, refused: String?) {
        if let room = homes[homeIndex].allRooms.first(where: { HomeKitName.key($0.name) == HomeKitName.key(name) }) {
            return (room.id == Home.defaultRoom.id ? nil : room.id, nil)
        }
        guard let valid = try? HomeKitName(name) else { return (nil, name) }
        let taken = Set(homes[homeIndex].rooms.map(\.id.rawValue))
        var id = Slug.make(valid.text, fallback: "room")
        var suffix = 2
        while taken.contains(id) || id == Home.defaultRoom.id.rawValue {
            id = "\(Slug.make(valid.text, fallback: "room"))-\(suffix)"
            suffix += 1
        }
        homes[homeIndex].rooms.append(Room(id: RoomID(id), name: valid.text))
        return (RoomID(id), nil)
    }

    /// The characteristics to read every poll interval: those of reachable accessories that can
    /// be read but send no events.
    var polledCharacteristics: [CharacteristicReference] {
        homes.flatMap(\.accessories).filter(\.isReachable).flatMap { accessory in
            accessory.visibleServices.flatMap(\.characteristics)
                .filter { $0.isReadable && !$0.supportsEvents && !$0.isMomentary }
                .map { CharacteristicReference(accessoryID: accessory.id, iid: $0.iid) }
        }
    }

    /// At start: each accessory a device describes takes the device's structure, reachability
    /// and bridge; those no device describes are unreachable. Names and rooms stay the layout's.
    mutating func takeStructure(of devices: [Accessory]) {
        let byID = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for homeIndex in homes.indices {
            for index in homes[homeIndex].accessories.indices {
                let id = homes[homeIndex].accessories[index].id
                if let device = byID[id] {
                    homes[homeIndex].accessories[index].services = device.services
                    homes[homeIndex].accessories[index].isReachable = device.isReachable
                    homes[homeIndex].accessories[index].bridgeID = device.bridgeID
                } else {
                    homes[homeIndex].accessories[index].isReachable = false
                }
            }
        }
    }

    /// A device described its accessories again (it connected, or reconnected): those the tree
    /// has take the description (``HomeModel/Accessory/described(by:)``: their name, room and
    /// reachability stay). Returns those that are reachable now and were not (the caller marks
    /// them, ``markReachable(_:)``, once it has published what changed), and the devices the
    /// tree does not have.
    mutating func takeDescriptions(_ devices: [Accessory]) -> (cameBack: [AccessoryID], unknown: [Accessory]) {
        var cameBack: [AccessoryID] = []
        var unknown: [Accessory] = []
        for device in devices {
            guard let location = locations[device.id] else {
                unknown.append(device)
                continue
            }
            let current = homes[location.home].accessories[location.accessory]
            if device.isReachable && !current.isReachable { cameBack.append(device.id) }
            homes[location.home].accessories[location.accessory] = current.described(by: device)
        }
        return (cameBack, unknown)
    }

    /// A new layout (a reloaded configuration merged with the running one) with the devices
    /// in it: each accessory the tree has keeps its device's structure, values and
    /// reachability, with the layout's name and room; one new in it is `joining`'s (the
    /// simulator's device), else left out (it appears at the next start).
    func withDevices(in layout: [Home], joining: (AccessoryID) -> Accessory?) -> (homes: [Home], joined: [AccessoryID], leftOut: Set<AccessoryID>) {
        var merged = layout
        var joined: [AccessoryID] = []
        var leftOut: Set<AccessoryID> = []
        for homeIndex in merged.indices {
            merged[homeIndex].accessories = merged[homeIndex].accessories.compactMap { accessory in
                let known = self.accessory(accessory.id)?.accessory
                guard var device = known ?? joining(accessory.id) else {
                    leftOut.insert(accessory.id)
                    return nil
                }
                if known == nil { joined.append(accessory.id) }
                device.name = accessory.name
                device.roomID = accessory.roomID
                return device
            }
        }
        return (merged, joined, leftOut)
    }

    /// How many accessories the tree has, and how many of them are reachable.
    var accessoryCounts: (all: Int, reachable: Int) {
        homes.reduce((0, 0)) { counts, home in
            (counts.0 + home.accessories.count, counts.1 + home.accessories.reduce(0) { $0 + ($1.isReachable ? 1 : 0) })
        }
    }
}

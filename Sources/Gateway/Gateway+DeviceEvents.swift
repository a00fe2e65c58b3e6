import Accessories
import Foundation
import HomeModel
import Wire

/// What the devices report: value changes, reachability (bridge cascade included, as the driver
/// reports it per accessory), and the polling of characteristics that cannot send events.
extension Gateway {
    func handle(_ event: AccessoryEvent) {
        switch event {
        case .value(let reference, let value):
            recordHealth(.event(reference.accessoryID))
            applyValue(value, to: reference)
        case .reachability(let id, let reachable):
            setReachable(id, reachable)
            if reachable { heard(from: id) }
        case .accessories(let devices):
            adopt(devices)
            for device in devices where device.isReachable { heard(from: device.id) }
        case .removed(let ids):
            remove(ids)
        case .warning(let id, let message):
            let (home, accessory) = tree.accessory(id).map { ($0.home.name, $0.accessory.name) } ?? ("", id.rawValue)
            announce("accessory-warning", ["accessory": .string(id.rawValue), "name": .string(accessory), "home": .string(home), "message": .string(message)])
        case .deviceEvent(let id, let kind, let fields):
            guard let (home, accessory) = tree.accessory(id) else { return }
            heard(from: id)
            announce("device-event", ["accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name),
                                      "kind": .string(kind), "data": .object(fields)])
        }
    }

    /// A device described its accessories (it connected, or reconnected): those the home has
    /// take the device's structure and values (keeping their name and room); new ones are placed
    /// where the driver says (``AccessoryDriver/placement(of:)``). Everything that changed is
    /// stored, announced and republished.
    func adopt(_ devices: [Accessory]) {
        let before = tree.homes
        let topicsBefore = Dictionary(devices.compactMap { device in tree.locations[device.id].map { _ in (device.id, tree.characteristicTopics(of: device.id)) } },
                                      uniquingKeysWith: { first, _ in first })
        var cameBack: [AccessoryID] = []
        for device in devices {
            if let location = tree.locations[device.id] {
                let current = tree.homes[location.home].accessories[location.accessory]
                if device.isReachable && !current.isReachable { cameBack.append(device.id) }
                tree.homes[location.home].accessories[location.accessory] = current.described(by: device)
            } else if driver.placement(of: device.id) != nil {
                place(device) // a newly paired device
            } else {
                // A simulated accessory the home no longer has was removed over MQTT: it stays
                // removed (the configuration's merge adds it back only if its entry changes).
                logger.debug("accessory \(device.id) (\(device.name)) was removed from the home; not added back")
            }
        }
        let changed = tree.homes != before
        if changed {
            reindex()
            recordChangedValues(of: devices, before: before)
        }
        for id in cameBack { tree.markReachable(id) }
        let announceCameBack = {
            for id in cameBack {
                guard let (home, accessory) = self.tree.accessory(id) else { continue }
                if !changed { self.publishReachability(of: accessory, home: home.id) }
                self.announce("accessory-reachability", ["accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name), "reachable": .bool(true)])
                self.resumeAdaptiveLighting(of: id)
            }
        }
        if changed {
            commitLayoutChange(from: before, reindexed: true) {
                announceUpdates(comparedWith: topicsBefore)
                announceCameBack()
            }
        } else {
            announceCameBack()
        }
        if !cameBack.isEmpty { recordAccessoryCounts() }
    }

    /// The history gets the values a device's description changed (all of a new accessory's).
    private func recordChangedValues(of devices: [Accessory], before: [Home]) {
        let previous = Dictionary(before.flatMap(\.accessories).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for device in devices {
            guard let (home, accessory) = tree.accessory(device.id) else { continue }
            recordChangedValues(of: accessory, comparedWith: previous[device.id], home: home.id)
        }
    }

    /// An accessory whose services or characteristics changed on the device (its configuration
    /// number went up) is announced as `accessory-updated` with the topics added and removed.
    private func announceUpdates(comparedWith topicsBefore: [AccessoryID: Set<String>]) {
        for (id, old) in topicsBefore.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let new = tree.characteristicTopics(of: id)
            guard new != old, let (home, accessory) = tree.accessory(id) else { continue }
            announce("accessory-updated", [
                "accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name),
                "added": .array(new.subtracting(old).sorted().map(JSON.string)), "removed": .array(old.subtracting(new).sorted().map(JSON.string)),
            ])
        }
    }

    /// A new accessory goes into the home the driver names (else the primary home), and into
    /// the room it names (made if missing) unless it is behind a bridge: those start in the
    /// default room, as in HomeKit.
    func place(_ device: Accessory) {
        let placement = driver.placement(of: device.id) ?? Placement()
        if tree.homes.isEmpty { tree.homes.append(Home(id: "home", name: "My Home", isPrimary: true)) }
        let homeIndex = placement.home.flatMap { name in
            tree.homes.firstIndex { HomeKitName.key($0.name) == HomeKitName.key(name) || $0.id.rawValue == name }
        } ?? tree.homes.firstIndex(where: \.isPrimary) ?? 0
        var accessory = device
        accessory.roomID = nil
        if device.bridgeID == nil, let roomName = placement.room {
            accessory.roomID = room(named: roomName, inHome: homeIndex)
        }
        tree.homes[homeIndex].accessories.append(accessory)
        logger.info("accessory \(device.id) (\(device.name)) joins \(tree.homes[homeIndex].name), \(tree.homes[homeIndex].room(of: accessory).name)")
    }

    /// The room called `name` in the home (HomeKit's comparison), made if there is none.
    private func room(named name: String, inHome homeIndex: Int) -> RoomID? {
        if let room = tree.homes[homeIndex].allRooms.first(where: { HomeKitName.key($0.name) == HomeKitName.key(name) }) {
            return room.id == Home.defaultRoom.id ? nil : room.id
        }
        guard let valid = try? HomeKitName(name) else {
            logger.warning("room \"\(name)\" is not a valid HomeKit name; the accessory goes to the default room")
            return nil
        }
        let taken = Set(tree.homes[homeIndex].rooms.map(\.id.rawValue))
        var id = Slug.make(valid.text, fallback: "room")
        var suffix = 2
        while taken.contains(id) || id == Home.defaultRoom.id.rawValue {
            id = "\(Slug.make(valid.text, fallback: "room"))-\(suffix)"
            suffix += 1
        }
        tree.homes[homeIndex].rooms.append(Room(id: RoomID(id), name: valid.text))
        return RoomID(id)
    }

    /// Accessories gone for good (their device was unpaired) leave the home: their topics are
    /// cleared, their removal announced, the layout stored.
    func remove(_ ids: [AccessoryID]) {
        let gone = Set(ids)
        let before = tree.homes
        for index in tree.homes.indices {
            tree.homes[index].accessories.removeAll { gone.contains($0.id) }
            for group in tree.homes[index].serviceGroups.indices {
                tree.homes[index].serviceGroups[group].services.removeAll { gone.contains($0.accessoryID) }
            }
            for actionSet in tree.homes[index].actionSets.indices {
                tree.homes[index].actionSets[actionSet].actions.removeAll { gone.contains($0.characteristic.accessoryID) }
            }
        }
        for id in ids { lastSeen.forget(id) }
        for service in adaptiveLighting.wanted where gone.contains(service.accessoryID) { adaptiveLighting.forget(service) }
        guard tree.homes != before else { return }
        commitLayoutChange(from: before)
    }

    /// An accessory came or went: `$reachable`, `$events`, `$layout`; when it is back, its
    /// values are read again and published where they changed.
    func setReachable(_ id: AccessoryID, _ reachable: Bool) {
        guard let location = tree.locations[id] else { return }
        guard tree.homes[location.home].accessories[location.accessory].isReachable != reachable else { return }
        tree.homes[location.home].accessories[location.accessory].isReachable = reachable
        recordHealth(.reachabilityChanged(id))
        recordAccessoryCounts()
        let accessory = tree.homes[location.home].accessories[location.accessory]
        let home = tree.homes[location.home]
        publishReachability(of: accessory, home: home.id)
        announce("accessory-reachability", ["accessory": .string(accessory.id.rawValue), "name": .string(accessory.name), "home": .string(home.name), "reachable": .bool(reachable)])
        if reachable {
            refresh(accessory)
            resumeAdaptiveLighting(of: id)
        }
    }

    /// Reads every readable characteristic of `accessory`, in line with the commands of each
    /// characteristic; what changed is published.
    func refresh(_ accessory: Accessory) {
        for service in accessory.visibleServices {
            for characteristic in service.characteristics where characteristic.isReadable && !characteristic.isMomentary {
                submit(.single(CommandMachine.Item(CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid), .read)), to: .nobody)
            }
        }
    }

    /// Reads, every poll interval, the characteristics that cannot send events (in line with the
    /// commands of each); what changed is published.
    func poll() async throws {
        while true {
            try await Task.sleep(for: configuration.pollInterval)
            for reference in polledCharacteristics() {
                submit(.single(CommandMachine.Item(reference, .read)), to: .nobody)
            }
        }
    }

    private func polledCharacteristics() -> [CharacteristicReference] {
        tree.homes.flatMap(\.accessories).filter(\.isReachable).flatMap { accessory in
            accessory.visibleServices.flatMap(\.characteristics)
                .filter { $0.isReadable && !$0.supportsEvents && !$0.isMomentary }
                .map { CharacteristicReference(accessoryID: accessory.id, iid: $0.iid) }
        }
    }
}

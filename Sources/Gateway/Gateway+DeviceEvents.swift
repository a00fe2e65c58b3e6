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
        let (cameBack, unknown) = tree.takeDescriptions(devices)
        for device in unknown {
            if driver.placement(of: device.id) != nil {
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

    /// A new accessory goes into the home the driver names (``HomeTree/place(_:_:)``).
    func place(_ device: Accessory) {
        let placed = tree.place(device, driver.placement(of: device.id) ?? Placement())
        if let refused = placed.refusedRoom {
            logger.warning("room \"\(refused)\" is not a valid HomeKit name; the accessory goes to the default room")
        }
        logger.info("accessory \(device.id) (\(device.name)) joins \(placed.home), \(placed.room)")
    }

    /// Accessories gone for good (their device was unpaired) leave the home: their topics are
    /// cleared, their removal announced, the layout stored.
    func remove(_ ids: [AccessoryID]) {
        let gone = Set(ids)
        let before = tree.homes
        let changed = tree.remove(gone)
        for id in ids { lastSeen.forget(id) }
        for service in adaptiveLighting.wanted where gone.contains(service.accessoryID) { adaptiveLighting.forget(service) }
        guard changed else { return }
        commitLayoutChange(from: before)
    }

    /// An accessory came or went: `$reachable`, `$events`, `$layout`; when it is back, its
    /// values are read again and published where they changed.
    func setReachable(_ id: AccessoryID, _ reachable: Bool) {
        guard let (home, accessory) = tree.setReachable(id, reachable) else { return }
        recordHealth(.reachabilityChanged(id))
        recordAccessoryCounts()
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
            for reference in tree.polledCharacteristics {
                submit(.single(CommandMachine.Item(reference, .read)), to: .nobody)
            }
        }
    }
}

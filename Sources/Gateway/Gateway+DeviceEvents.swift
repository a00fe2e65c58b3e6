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
            announce(tree.warningEvent(id, message: message))
        case .deviceEvent(let id, let kind, let fields):
            guard let event = tree.deviceEvent(id, kind: kind, data: fields) else { return }
            heard(from: id)
            announce(event)
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
            recordChangedValues(of: devices.map(\.id), comparedWith: before)
        }
        for id in cameBack { tree.markReachable(id) }
        let announceCameBack = {
            for id in cameBack {
                guard let (home, accessory) = self.tree.accessory(id), let event = self.tree.reachabilityEvent(id, reachable: true) else { continue }
                if !changed { self.publishReachability(of: accessory, home: home.id) }
                self.announce(event)
                self.resumeAdaptiveLighting(of: id)
            }
        }
        if changed {
            commitLayoutChange(from: before, reindexed: true) {
                for event in tree.updateEvents(comparedWith: topicsBefore) { announce(event) }
                announceCameBack()
            }
        } else {
            announceCameBack()
        }
        if !cameBack.isEmpty { recordAccessoryCounts() }
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
        if let event = tree.reachabilityEvent(id, reachable: reachable) { announce(event) }
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

import Foundation
import HomeModel

/// `$layout` (the whole tree, retained, at most about once a second while changes keep coming),
/// `$meta` (per accessory, retained), `$events` (one message per change, not retained), and
/// layout changes from a reloaded configuration.
extension Gateway {
    /// Marks the layout changed: `$layout` follows within the layout interval; `saving` also
    /// stores it (names, rooms: not for mere reachability).
    func layoutDidChange(saving: Bool) {
        layoutChanged = true
        guard saving else { return }
        do {
            try store?.saveHomes(homes)
        } catch {
            logger.error("could not save the layout: \(error)")
        }
    }

    /// Publishes `$layout` whenever it changed, at most once per layout interval.
    func publishLayoutWhenChanged() async throws {
        while true {
            try await Task.sleep(for: configuration.layoutInterval)
            guard layoutChanged, sync == nil else { continue }
            layoutChanged = false
            assertRetained("\(base)/$layout", layoutPayload())
        }
    }

    /// Announces a change on `$events`.
    func announce(_ event: String, _ fields: [String: Any]) {
        var body = fields
        body["event"] = event
        send("\(base)/$events", JSON.encode(body), retain: false)
    }

    /// Applies a new layout (a reloaded configuration merged with the store): renames and moves
    /// change topics; old retained topics are cleared and values republished on the new ones.
    public func reload(homes newHomes: [Home]) {
        let before = homes
        var merged = newHomes
        for homeIndex in merged.indices {
            // Devices keep their structure, values and reachability; unknown ones cannot appear on a reload.
            merged[homeIndex].accessories = merged[homeIndex].accessories.compactMap { accessory in
                guard var current = self.accessory(accessory.id)?.accessory else {
                    logger.notice("accessory \(accessory.id) is new in the configuration; it appears at the next start")
                    return nil
                }
                current.name = accessory.name
                current.roomID = accessory.roomID
                return current
            }
        }
        homes = merged
        reindex()
        layoutDidChange(saving: true)
        for event in LayoutChanges.events(from: before, to: homes) { announce(event.kind, event.fields) }
        republishAfterLayoutChange()
        logger.info("configuration reloaded")
    }

    // MARK: Payloads

    func metaPayload(_ accessory: Accessory, in home: Home) -> [UInt8] {
        JSON.encode(metaObject(accessory, in: home))
    }

    private func metaObject(_ accessory: Accessory, in home: Home) -> [String: Any] {
        [
            "id": accessory.id.rawValue, "name": accessory.name, "manufacturer": accessory.manufacturer, "model": accessory.model,
            "serialNumber": accessory.serialNumber, "firmwareRevision": accessory.firmwareRevision, "category": accessory.category.name,
            "room": home.room(of: accessory).name, "bridge": accessory.bridgeID?.rawValue ?? NSNull(),
            "bridged": home.bridged(by: accessory.id).map(\.id.rawValue),
        ]
    }

    func layoutPayload() -> [UInt8] {
        JSON.encode(["base": base, "homes": homes.map(layoutObject)])
    }

    private func layoutObject(_ home: Home) -> [String: Any] {
        [
            "id": home.id.rawValue, "name": home.name, "primary": home.isPrimary, "topic": map.topic(of: .home(home.id)) ?? NSNull(),
            "rooms": home.allRooms.map { room in
                ["id": room.id.rawValue, "name": room.name, "topic": map.topic(of: .room(home.id, room.id)) ?? NSNull()] as [String: Any]
            },
            "zones": home.zones.map { zone in
                ["id": zone.id.rawValue, "name": zone.name, "rooms": zone.roomIDs.compactMap { home.room(withID: $0)?.name }] as [String: Any]
            },
            "accessories": home.accessories.map { accessoryObject($0, in: home) },
            "serviceGroups": home.serviceGroups.map { group in
                ["id": group.id.rawValue, "name": group.name,
                 "services": group.services.map { ["accessory": $0.accessoryID.rawValue, "service": $0.serviceIID] }] as [String: Any]
            },
            "actionSets": home.actionSets.map { set in
                ["id": set.id.rawValue, "name": set.name, "actions": set.actions.map { action in
                    ["accessory": action.characteristic.accessoryID.rawValue, "characteristic": action.characteristic.iid, "value": action.value.jsonObject] as [String: Any]
                }] as [String: Any]
            },
            "triggers": home.triggers.map { trigger in
                ["id": trigger.id.rawValue, "name": trigger.name, "fireDate": ISO8601DateFormatter().string(from: trigger.fireDate),
                 "enabled": trigger.isEnabled, "actionSets": trigger.actionSetIDs.compactMap { id in home.actionSets.first { $0.id == id }?.name },
                 "recurrence": trigger.recurrence.map { ["unit": $0.unit.rawValue, "every": $0.every] as [String: Any] } ?? NSNull()] as [String: Any]
            },
        ]
    }

    private func accessoryObject(_ accessory: Accessory, in home: Home) -> [String: Any] {
        var object = metaObject(accessory, in: home)
        object["topic"] = map.topic(of: .accessory(home.id, accessory.id)) ?? NSNull()
        object["reachable"] = accessory.isReachable
        object["services"] = accessory.visibleServices.map { service in
            serviceObject(service, accessory: accessory, home: home)
        }
        return object
    }

    private func serviceObject(_ service: Service, accessory: Accessory, home: Home) -> [String: Any] {
        let reference = ServiceReference(accessoryID: accessory.id, serviceIID: service.iid)
        return [
            "iid": service.iid, "type": service.type, "name": service.name ?? NSNull(), "primary": service.isPrimary,
            "linked": service.linked, "topic": map.topic(of: .service(home.id, reference)) ?? NSNull(),
            "characteristics": service.characteristics.map { characteristicObject($0, accessory: accessory, home: home) },
        ]
    }

    private func characteristicObject(_ characteristic: Characteristic, accessory: Accessory, home: Home) -> [String: Any] {
        let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
        var object: [String: Any] = [
            "iid": characteristic.iid, "type": characteristic.type, "uuid": characteristic.uuid, "format": characteristic.format.rawValue,
            "perms": characteristic.perms.map(\.rawValue), "topic": map.topic(of: .characteristic(home.id, reference)) ?? NSNull(),
            "value": characteristic.value?.jsonObject ?? NSNull(),
        ]
        if characteristic.isMomentary { object["momentary"] = true }
        if let unit = characteristic.unit { object["unit"] = unit }
        if let minValue = characteristic.minValue { object["minValue"] = minValue }
        if let maxValue = characteristic.maxValue { object["maxValue"] = maxValue }
        if let minStep = characteristic.minStep { object["minStep"] = minStep }
        if let maxLen = characteristic.maxLen { object["maxLen"] = maxLen }
        if let validValues = characteristic.validValues { object["validValues"] = validValues }
        if let range = characteristic.validValuesRange { object["validValuesRange"] = range }
        if let description = characteristic.description { object["description"] = description }
        return object
    }
}

/// The `$events` a layout change produces.
enum LayoutChanges {
    struct Event {
        let kind: String
        let fields: [String: Any]
    }

    static func events(from before: [Home], to after: [Home]) -> [Event] {
        var events: [Event] = []
        let old = Dictionary(before.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for home in after {
            guard let previous = old[home.id] else {
                events.append(Event(kind: "home-added", fields: ["home": home.name]))
                continue
            }
            if previous.name != home.name { events.append(Event(kind: "home-renamed", fields: ["home": home.name, "oldName": previous.name])) }
            events += roomEvents(previous, home) + zoneEvents(previous, home) + accessoryEvents(previous, home)
        }
        for home in before where !after.contains(where: { $0.id == home.id }) {
            events.append(Event(kind: "home-removed", fields: ["home": home.name]))
        }
        return events
    }

    private static func roomEvents(_ before: Home, _ after: Home) -> [Event] {
        diff(before.rooms, after.rooms, id: \.id, name: \.name, object: "room", home: after.name)
    }

    private static func zoneEvents(_ before: Home, _ after: Home) -> [Event] {
        diff(before.zones, after.zones, id: \.id, name: \.name, object: "zone", home: after.name)
    }

    private static func accessoryEvents(_ before: Home, _ after: Home) -> [Event] {
        var events = diff(before.accessories, after.accessories, id: \.id, name: \.name, object: "accessory", home: after.name)
        let old = Dictionary(before.accessories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for accessory in after.accessories {
            guard let previous = old[accessory.id], previous.roomID != accessory.roomID else { continue }
            events.append(Event(kind: "accessory-assigned", fields: [
                "home": after.name, "accessory": accessory.id.rawValue, "name": accessory.name,
                "room": after.room(of: accessory).name, "oldRoom": before.room(of: previous).name,
            ]))
        }
        return events
    }

    private static func diff<T, ID: Hashable>(_ before: [T], _ after: [T], id: KeyPath<T, ID>, name: KeyPath<T, String>, object: String, home: String) -> [Event] {
        var events: [Event] = []
        let old = Dictionary(before.map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        let new = Set(after.map { $0[keyPath: id] })
        for element in after {
            var fields: [String: Any] = ["home": home, object: element[keyPath: name]]
            if let accessoryID = element[keyPath: id] as? AccessoryID { fields["id"] = accessoryID.rawValue }
            if let previous = old[element[keyPath: id]] {
                guard previous[keyPath: name] != element[keyPath: name] else { continue }
                fields["oldName"] = previous[keyPath: name]
                events.append(Event(kind: "\(object)-renamed", fields: fields))
            } else {
                events.append(Event(kind: "\(object)-added", fields: fields))
            }
        }
        for element in before where !new.contains(element[keyPath: id]) {
            events.append(Event(kind: "\(object)-removed", fields: ["home": home, object: element[keyPath: name]]))
        }
        return events
    }
}

import HomeModel
import Wire

/// The `$events` a layout change produces.
enum LayoutChanges {
    static func events(from before: [Home], to after: [Home]) -> [Announcement] {
        var events: [Announcement] = []
        let old = Dictionary(before.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for home in after {
            guard let previous = old[home.id] else {
                events.append(Announcement("home-added", ["home": .string(home.name)]))
                continue
            }
            if previous.name != home.name { events.append(Announcement("home-renamed", ["home": .string(home.name), "oldName": .string(previous.name)])) }
            events += roomEvents(previous, home) + zoneEvents(previous, home) + accessoryEvents(previous, home)
            events += serviceEvents(previous, home) + groupEvents(previous, home) + actionSetEvents(previous, home) + triggerEvents(previous, home)
        }
        for home in before where !after.contains(where: { $0.id == home.id }) {
            events.append(Announcement("home-removed", ["home": .string(home.name)]))
        }
        let oldPrimary = before.first(where: \.isPrimary)
        if let primary = after.first(where: \.isPrimary), primary.id != oldPrimary?.id {
            events.append(Announcement("home-primary", ["home": .string(primary.name), "oldHome": .string(oldPrimary?.name)]))
        }
        return events
    }

    private static func roomEvents(_ before: Home, _ after: Home) -> [Announcement] {
        diff(before.rooms, after.rooms, id: \.id, name: \.name, object: "room", home: after.name)
    }

    private static func zoneEvents(_ before: Home, _ after: Home) -> [Announcement] {
        var events = diff(before.zones, after.zones, id: \.id, name: \.name, object: "zone", home: after.name)
        for (previous, zone) in kept(before.zones, after.zones, id: \.id) where previous.roomIDs != zone.roomIDs {
            events.append(Announcement("zone-updated", [
                "home": .string(after.name), "zone": .string(zone.name),
                "rooms": .array(zone.roomIDs.compactMap { after.room(withID: $0).map { JSON.string($0.name) } }),
            ]))
        }
        return events
    }

    private static func accessoryEvents(_ before: Home, _ after: Home) -> [Announcement] {
        var events = diff(before.accessories, after.accessories, id: \.id, name: \.name, object: "accessory", home: after.name)
        for (previous, accessory) in kept(before.accessories, after.accessories, id: \.id) where previous.roomID != accessory.roomID {
            events.append(Announcement("accessory-assigned", [
                "home": .string(after.name), "accessory": .string(accessory.id.rawValue), "name": .string(accessory.name),
                "room": .string(after.room(of: accessory).name), "oldRoom": .string(before.room(of: previous).name),
            ]))
        }
        return events
    }

    /// `service-renamed`: the accessory by id, with its name; the service by iid.
    private static func serviceEvents(_ before: Home, _ after: Home) -> [Announcement] {
        var events: [Announcement] = []
        for (previous, accessory) in kept(before.accessories, after.accessories, id: \.id) {
            for service in accessory.services {
                guard let previousService = previous.service(service.iid), previousService.name != service.name else { continue }
                events.append(Announcement("service-renamed", [
                    "home": .string(after.name), "accessory": .string(accessory.id.rawValue), "name": .string(accessory.name),
                    "service": .int(service.iid), "newName": .string(service.name), "oldName": .string(previousService.name),
                ]))
            }
        }
        return events
    }

    private static func groupEvents(_ before: Home, _ after: Home) -> [Announcement] {
        var events = diff(before.serviceGroups, after.serviceGroups, id: \.id, name: \.name, object: "service-group", key: "serviceGroup", home: after.name)
        for (previous, group) in kept(before.serviceGroups, after.serviceGroups, id: \.id) where previous.services != group.services {
            events.append(Announcement("service-group-updated", [
                "home": .string(after.name), "serviceGroup": .string(group.name),
                "services": .array(group.services.map { .object(["accessory": .string($0.accessoryID.rawValue), "service": .int($0.serviceIID)]) }),
            ]))
        }
        return events
    }

    private static func actionSetEvents(_ before: Home, _ after: Home) -> [Announcement] {
        var events = diff(before.actionSets, after.actionSets, id: \.id, name: \.name, object: "action-set", key: "actionSet", home: after.name)
        for (previous, actionSet) in kept(before.actionSets, after.actionSets, id: \.id) where previous.actions != actionSet.actions {
            events.append(Announcement("action-set-updated", [
                "home": .string(after.name), "actionSet": .string(actionSet.name),
                "actions": .array(actionSet.actions.map { action in
                    .object(["accessory": .string(action.characteristic.accessoryID.rawValue), "characteristic": .int(action.characteristic.iid),
                             "value": .value(action.value)])
                }),
            ]))
        }
        return events
    }

    /// `trigger-added/-removed/-renamed`, `trigger-enabled/-disabled`, and `trigger-updated` when
    /// its fire date, recurrence or action sets change.
    private static func triggerEvents(_ before: Home, _ after: Home) -> [Announcement] {
        var events = diff(before.triggers, after.triggers, id: \.id, name: \.name, object: "trigger", home: after.name)
        for (previous, trigger) in kept(before.triggers, after.triggers, id: \.id) {
            if previous.isEnabled != trigger.isEnabled {
                events.append(Announcement(trigger.isEnabled ? "trigger-enabled" : "trigger-disabled",
                                    ["home": .string(after.name), "trigger": .string(trigger.name)]))
            }
            guard previous.fireDate != trigger.fireDate || previous.recurrence != trigger.recurrence || previous.actionSetIDs != trigger.actionSetIDs else { continue }
            events.append(Announcement("trigger-updated", [
                "home": .string(after.name), "trigger": .string(trigger.name),
                "fireDate": .string(ISODate.text(trigger.fireDate)), "enabled": .bool(trigger.isEnabled),
                "recurrence": trigger.recurrence.map { .object(["unit": .string($0.unit.rawValue), "every": .int($0.every)]) } ?? .null,
                "actionSets": .array(trigger.actionSetIDs.compactMap { id in after.actionSets.first { $0.id == id }.map { JSON.string($0.name) } }),
            ]))
        }
        return events
    }

    /// The objects of `after` that `before` had too (matched by id), each with its earlier self.
    private static func kept<T, ID: Hashable>(_ before: [T], _ after: [T], id: KeyPath<T, ID>) -> [(before: T, after: T)] {
        let old = Dictionary(before.map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        return after.compactMap { element in old[element[keyPath: id]].map { ($0, element) } }
    }

    /// `<object>-added/-removed/-renamed`, the object's name under `key` (default: `object`).
    private static func diff<T, ID: Hashable>(_ before: [T], _ after: [T], id: KeyPath<T, ID>, name: KeyPath<T, String>, object: String, key: String? = nil,
                                             home: String) -> [Announcement] {
        var events: [Announcement] = []
        let old = Dictionary(before.map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        let new = Set(after.map { $0[keyPath: id] })
        func fields(_ element: T) -> [String: JSON] {
            // An accessory is named by its id (as in accessory-reachability), with its name beside it.
            if let accessoryID = element[keyPath: id] as? AccessoryID {
                return ["home": .string(home), "accessory": .string(accessoryID.rawValue), "name": .string(element[keyPath: name])]
            }
            return ["home": .string(home), key ?? object: .string(element[keyPath: name])]
        }
        for element in after {
            var fields = fields(element)
            if let previous = old[element[keyPath: id]] {
                guard previous[keyPath: name] != element[keyPath: name] else { continue }
                fields["oldName"] = .string(previous[keyPath: name])
                events.append(Announcement("\(object)-renamed", fields))
            } else {
                events.append(Announcement("\(object)-added", fields))
            }
        }
        for element in before where !new.contains(element[keyPath: id]) {
            events.append(Announcement("\(object)-removed", fields(element)))
        }
        return events
    }
}

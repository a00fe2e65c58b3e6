import Foundation
import HomeModel

extension Layout {
    /// The homes these rows store, each list in its stored order.
    func homes(json: JSONColumn) throws -> [Home] {
        let rooms = Dictionary(grouping: rooms, by: \.homeID)
        let zones = Dictionary(grouping: zones, by: \.homeID)
        let zoneRooms = Dictionary(grouping: zoneRooms) { [$0.homeID, $0.zoneID] }
        let accessories = Dictionary(grouping: accessories, by: \.homeID)
        let serviceGroups = Dictionary(grouping: serviceGroups, by: \.homeID)
        let actionSets = Dictionary(grouping: actionSets, by: \.homeID)
        let triggers = Dictionary(grouping: triggers, by: \.homeID)
        return try homes.map { home in
            Home(
                id: HomeID(home.id), name: home.name, isPrimary: home.isPrimary,
                rooms: rooms[home.id, default: []].map { Room(id: RoomID($0.id), name: $0.name) },
                zones: zones[home.id, default: []].map { zone in
                    Zone(id: ZoneID(zone.id), name: zone.name,
                         roomIDs: zoneRooms[[home.id, zone.id], default: []].map { RoomID($0.roomID) })
                },
                accessories: try accessories[home.id, default: []].map { try $0.accessory(json: json) },
                serviceGroups: try serviceGroups[home.id, default: []].map { try $0.serviceGroup(json: json) },
                actionSets: try actionSets[home.id, default: []].map { try $0.actionSet(json: json) },
                triggers: try triggers[home.id, default: []].map { try $0.trigger(json: json) }
            )
        }
    }
}

extension AccessoryRecord {
    func accessory(json: JSONColumn) throws -> Accessory {
        guard let hapCategory = HomeModel.Category(rawValue: category) else {
            throw InvalidColumn(self, column: "category", reason: "\(category) is not a HAP accessory category")
        }
        return Accessory(id: AccessoryID(id), name: name, manufacturer: manufacturer, model: model, serialNumber: serialNumber,
                         firmwareRevision: firmwareRevision, category: hapCategory, roomID: roomID.map { RoomID($0) },
                         isReachable: isReachable, bridgeID: bridgeID.map { AccessoryID($0) },
                         services: try json.decodeList(services, column: "services", of: self) { json throws(ModelJSON.Failure) in try Service(modelJSON: json) })
    }
}

extension ServiceGroupRecord {
    func serviceGroup(json: JSONColumn) throws -> ServiceGroup {
        ServiceGroup(id: ServiceGroupID(id), name: name,
                     services: try json.decodeList(services, column: "services", of: self) { json throws(ModelJSON.Failure) in try ServiceReference(modelJSON: json) })
    }
}

extension ActionSetRecord {
    func actionSet(json: JSONColumn) throws -> ActionSet {
        ActionSet(id: ActionSetID(id), name: name,
                  actions: try json.decodeList(actions, column: "actions", of: self) { json throws(ModelJSON.Failure) in try ActionSet.Action(modelJSON: json) })
    }
}

extension TimerTriggerRecord {
    func trigger(json: JSONColumn) throws -> TimerTrigger {
        TimerTrigger(id: TriggerID(id), name: name, fireDate: Date(timeIntervalSince1970: fireDate),
                     recurrence: try recurrence.map { text in try json.decode(text, column: "recurrence", of: self) { json throws(ModelJSON.Failure) in try TimerTrigger.Recurrence(modelJSON: json) } },
                     actionSetIDs: try json.decodeList(actionSetIDs, column: "action_set_ids", of: self) { json throws(ModelJSON.Failure) in ActionSetID(try ModelJSON.string(json, "an action set id")) },
                     isEnabled: isEnabled, lastFireDate: lastFireDate.map { Date(timeIntervalSince1970: $0) })
    }
}

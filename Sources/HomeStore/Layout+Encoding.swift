import Foundation
import HomeModel

extension Layout {
    /// The rows that store `homes`.
    init(homes: [Home], json: JSONColumn) {
        for (position, home) in homes.enumerated() {
            append(home, at: position, json: json)
        }
    }

    /// The rows of `home`, at `position` among the homes (its accessories too, unless told not).
    mutating func append(_ home: Home, at position: Int, json: JSONColumn, withAccessories: Bool = true) {
        let homeID = home.id.rawValue
        homes.append(HomeRecord(id: homeID, name: home.name, isPrimary: home.isPrimary, position: position))
        for (position, room) in home.rooms.enumerated() {
            rooms.append(RoomRecord(homeID: homeID, id: room.id.rawValue, name: room.name, position: position))
        }
        for (position, zone) in home.zones.enumerated() {
            append(zone, homeID: homeID, at: position)
        }
        for (position, accessory) in home.accessories.enumerated() where withAccessories {
            accessories.append(AccessoryRecord(accessory, homeID: homeID, position: position, json: json))
        }
        for (position, group) in home.serviceGroups.enumerated() {
            serviceGroups.append(ServiceGroupRecord(homeID: homeID, id: group.id.rawValue, name: group.name, position: position,
                                                    services: json.encode(group.services)))
        }
        for (position, actionSet) in home.actionSets.enumerated() {
            actionSets.append(ActionSetRecord(homeID: homeID, id: actionSet.id.rawValue, name: actionSet.name, position: position,
                                              actions: json.encode(actionSet.actions)))
        }
        for (position, trigger) in home.triggers.enumerated() {
            triggers.append(TimerTriggerRecord(trigger, homeID: homeID, position: position, json: json))
        }
    }

    private mutating func append(_ zone: Zone, homeID: String, at position: Int) {
        zones.append(ZoneRecord(homeID: homeID, id: zone.id.rawValue, name: zone.name, position: position))
        for (position, roomID) in zone.roomIDs.enumerated() {
            zoneRooms.append(ZoneRoomRecord(homeID: homeID, zoneID: zone.id.rawValue, roomID: roomID.rawValue, position: position))
        }
    }
}

extension AccessoryRecord {
    init(_ accessory: Accessory, homeID: String, position: Int, json: JSONColumn) {
        self.init(homeID: homeID, id: accessory.id.rawValue, name: accessory.name, manufacturer: accessory.manufacturer,
                  model: accessory.model, serialNumber: accessory.serialNumber, firmwareRevision: accessory.firmwareRevision,
                  category: accessory.category.rawValue, roomID: accessory.roomID?.rawValue, isReachable: accessory.isReachable,
                  bridgeID: accessory.bridgeID?.rawValue, position: position, services: json.encode(accessory.services))
    }
}

extension TimerTriggerRecord {
    init(_ trigger: TimerTrigger, homeID: String, position: Int, json: JSONColumn) {
        self.init(homeID: homeID, id: trigger.id.rawValue, name: trigger.name, fireDate: trigger.fireDate.timeIntervalSince1970,
                  recurrence: trigger.recurrence.map { json.encode($0) }, actionSetIDs: json.encode(trigger.actionSetIDs),
                  isEnabled: trigger.isEnabled, position: position, lastFireDate: trigger.lastFireDate?.timeIntervalSince1970)
    }
}

/// A home: its rooms, zones, accessories, service groups, action sets and triggers.
///
/// Names follow HomeKit's rules (see ``HomeKitName``); everything inside a home shares one
/// namespace. An accessory without a room is in the home's default room (HomeKit's
/// `roomForEntireHome`).
public struct Home: Sendable, Hashable {
    public var id: HomeID
    public var name: String
    /// Exactly one home is primary.
    public var isPrimary: Bool
    /// The rooms a person made; the default room is not among them (see ``defaultRoom``).
    public var rooms: [Room]
    public var zones: [Zone]
    /// Every accessory, bridged ones included (each names its bridge).
    public var accessories: [Accessory]
    public var serviceGroups: [ServiceGroup]
    public var actionSets: [ActionSet]
    public var triggers: [TimerTrigger]

    public init(id: HomeID, name: String, isPrimary: Bool = false, rooms: [Room] = [], zones: [Zone] = [], accessories: [Accessory] = [],
                serviceGroups: [ServiceGroup] = [], actionSets: [ActionSet] = [], triggers: [TimerTrigger] = []) {
        self.id = id
        self.name = name
        self.isPrimary = isPrimary
        self.rooms = rooms
        self.zones = zones
        self.accessories = accessories
        self.serviceGroups = serviceGroups
        self.actionSets = actionSets
        self.triggers = triggers
    }

    /// The room for accessories not assigned to one (HomeKit's `roomForEntireHome`).
    public static let defaultRoom = Room(id: "default-room", name: "Default Room")

    /// The room an accessory is in: its own, or the default room.
    public func room(of accessory: Accessory) -> Room {
        accessory.roomID.flatMap(room(withID:)) ?? Self.defaultRoom
    }

    /// The room with `id` (the default room included).
    public func room(withID id: RoomID) -> Room? {
        id == Self.defaultRoom.id ? Self.defaultRoom : rooms.first { $0.id == id }
    }

    /// Every room, the default room first.
    public var allRooms: [Room] { [Self.defaultRoom] + rooms }

    public func accessory(_ id: AccessoryID) -> Accessory? {
        accessories.first { $0.id == id }
    }

    /// The accessories behind the bridge `id`, in stable-id order.
    public func bridged(by id: AccessoryID) -> [Accessory] {
        accessories.filter { $0.bridgeID == id }.sorted { $0.id < $1.id }
    }

    /// The accessories in `room`.
    public func accessories(in room: RoomID) -> [Accessory] {
        accessories.filter { (self.room(of: $0)).id == room }
    }
}

/// A room of a home.
public struct Room: Sendable, Hashable {
    public var id: RoomID
    public var name: String

    public init(id: RoomID, name: String) {
        self.id = id
        self.name = name
    }
}

/// A zone: a group of rooms ("Upstairs"). A room can be in several zones.
public struct Zone: Sendable, Hashable {
    public var id: ZoneID
    public var name: String
    public var roomIDs: [RoomID]

    public init(id: ZoneID, name: String, roomIDs: [RoomID] = []) {
        self.id = id
        self.name = name
        self.roomIDs = roomIDs
    }
}

/// Services grouped by a person ("Reading Lights"), across accessories.
public struct ServiceGroup: Sendable, Hashable {
    public var id: ServiceGroupID
    public var name: String
    public var services: [ServiceReference]

    public init(id: ServiceGroupID, name: String, services: [ServiceReference] = []) {
        self.id = id
        self.name = name
        self.services = services
    }
}

/// A service of an accessory, by the accessory's stable id and the service's instance id.
public struct ServiceReference: Sendable, Hashable {
    public var accessoryID: AccessoryID
    public var serviceIID: Int

    public init(accessoryID: AccessoryID, serviceIID: Int) {
        self.accessoryID = accessoryID
        self.serviceIID = serviceIID
    }
}

/// A characteristic of an accessory, by the accessory's stable id and the characteristic's
/// instance id (unique within an accessory).
public struct CharacteristicReference: Sendable, Hashable, CustomStringConvertible {
    public var accessoryID: AccessoryID
    public var iid: Int

    public init(accessoryID: AccessoryID, iid: Int) {
        self.accessoryID = accessoryID
        self.iid = iid
    }

    public var description: String { "\(accessoryID).\(iid)" }
}

/// A scene ("Good Night"): characteristic writes run together.
public struct ActionSet: Sendable, Hashable {
    public var id: ActionSetID
    public var name: String
    public var actions: [Action]

    public init(id: ActionSetID, name: String, actions: [Action] = []) {
        self.id = id
        self.name = name
        self.actions = actions
    }

    /// One write: this value to that characteristic.
    public struct Action: Sendable, Hashable {
        public var characteristic: CharacteristicReference
        public var value: Value

        public init(characteristic: CharacteristicReference, value: Value) {
            self.characteristic = characteristic
            self.value = value
        }
    }
}

/// A timer trigger: runs action sets at a date, optionally again and again.
public struct TimerTrigger: Sendable, Hashable {
    public var id: TriggerID
    public var name: String
    public var fireDate: Date
    public var recurrence: Recurrence?
    public var actionSetIDs: [ActionSetID]
    public var isEnabled: Bool
    /// The date of the last occurrence the gateway dealt with: one it ran (its scheduled date,
    /// also when it ran late) or skipped as missed. The trigger waits for its first occurrence
    /// after this date; nil: for ``fireDate`` itself. See ``TriggerSchedule``.
    public var lastFireDate: Date?

    public init(id: TriggerID, name: String, fireDate: Date, recurrence: Recurrence? = nil, actionSetIDs: [ActionSetID] = [], isEnabled: Bool = true,
                lastFireDate: Date? = nil) {
        self.id = id
        self.name = name
        self.fireDate = fireDate
        self.recurrence = recurrence
        self.actionSetIDs = actionSetIDs
        self.isEnabled = isEnabled
        self.lastFireDate = lastFireDate
    }

    /// Every `every` `unit`s after the fire date.
    public struct Recurrence: Sendable, Hashable {
        public enum Unit: String, Sendable, CaseIterable {
            case minute, hour, day, week

            public var seconds: Double {
                switch self {
                case .minute: return 60
                case .hour: return 3600
                case .day: return 86_400
                case .week: return 604_800
                }
            }
        }

        public var unit: Unit
        public var every: Int

        public init(unit: Unit, every: Int) {
            self.unit = unit
            self.every = every
        }
    }
}

import struct Foundation.Date

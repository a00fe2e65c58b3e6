import GRDB

// One record type per layout table, field for field. Identifiers are plain strings here; lists
// that are only ever read whole (an accessory's services, a group's members) are JSON text.
// Conversions to and from the model are in `Layout+Encoding.swift` and `Layout+Decoding.swift`.

/// A row of `home`.
struct HomeRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "home"

    var id: String
    var name: String
    var isPrimary: Bool
    var position: Int

    enum CodingKeys: String, CodingKey {
        case id, name, isPrimary = "is_primary", position
    }
}

/// A row of `room`.
struct RoomRecord: Codable, FetchableRecord, PersistableRecord, HomeChildRecord {
    static let databaseTableName = "room"

    var homeID: String
    var id: String
    var name: String
    var position: Int

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", id, name, position
    }
}

/// A row of `zone`.
struct ZoneRecord: Codable, FetchableRecord, PersistableRecord, HomeChildRecord {
    static let databaseTableName = "zone"

    var homeID: String
    var id: String
    var name: String
    var position: Int

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", id, name, position
    }
}

/// A row of `zone_room`: the room at `position` in a zone's list.
struct ZoneRoomRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zone_room"

    var homeID: String
    var zoneID: String
    var roomID: String
    var position: Int

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", zoneID = "zone_id", roomID = "room_id", position
    }
}

/// A row of `accessory`; `services` is the JSON of `[Service]`.
struct AccessoryRecord: Codable, FetchableRecord, PersistableRecord, HomeChildRecord {
    static let databaseTableName = "accessory"

    var homeID: String
    var id: String
    var name: String
    var manufacturer: String
    var model: String
    var serialNumber: String
    var firmwareRevision: String
    var category: Int
    var roomID: String?
    var isReachable: Bool
    var bridgeID: String?
    var position: Int
    var services: String

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", id, name, manufacturer, model, serialNumber = "serial_number"
        case firmwareRevision = "firmware_revision", category, roomID = "room_id", isReachable = "is_reachable"
        case bridgeID = "bridge_id", position, services
    }
}

/// A row of `service_group`; `services` is the JSON of `[ServiceReference]`.
struct ServiceGroupRecord: Codable, FetchableRecord, PersistableRecord, HomeChildRecord {
    static let databaseTableName = "service_group"

    var homeID: String
    var id: String
    var name: String
    var position: Int
    var services: String

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", id, name, position, services
    }
}

/// A row of `action_set`; `actions` is the JSON of `[ActionSet.Action]`.
struct ActionSetRecord: Codable, FetchableRecord, PersistableRecord, HomeChildRecord {
    static let databaseTableName = "action_set"

    var homeID: String
    var id: String
    var name: String
    var position: Int
    var actions: String

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", id, name, position, actions
    }
}

/// A row of `timer_trigger`: `fire_date` in seconds since 1970, `recurrence` the JSON of a
/// `TimerTrigger.Recurrence` (NULL for none), `action_set_ids` the JSON of `[String]`,
/// `last_fire_date` in seconds since 1970 (NULL: never fired; the column is from
/// `v4-trigger-last-fire`).
struct TimerTriggerRecord: Codable, FetchableRecord, PersistableRecord, HomeChildRecord {
    static let databaseTableName = "timer_trigger"

    var homeID: String
    var id: String
    var name: String
    var fireDate: Double
    var recurrence: String?
    var actionSetIDs: String
    var isEnabled: Bool
    var position: Int
    var lastFireDate: Double?

    enum CodingKeys: String, CodingKey {
        case homeID = "home_id", id, name, fireDate = "fire_date", recurrence, actionSetIDs = "action_set_ids"
        case isEnabled = "is_enabled", position, lastFireDate = "last_fire_date"
    }
}

import GRDB

/// The layout as the tables hold it: every row of every layout table.
///
/// `Layout(homes:json:)` flattens the model into rows; `homes(json:)` builds it back. Each list
/// of the model keeps its order in the rows' `position`.
struct Layout {
    var homes: [HomeRecord] = []
    var rooms: [RoomRecord] = []
    var zones: [ZoneRecord] = []
    var zoneRooms: [ZoneRoomRecord] = []
    var accessories: [AccessoryRecord] = []
    var serviceGroups: [ServiceGroupRecord] = []
    var actionSets: [ActionSetRecord] = []
    var triggers: [TimerTriggerRecord] = []
}

extension Layout {
    /// Reads every layout table, each in list order.
    static func fetch(_ db: Database) throws -> Layout {
        let position = Column("position")
        return Layout(
            homes: try HomeRecord.order(position).fetchAll(db),
            rooms: try RoomRecord.order(position).fetchAll(db),
            zones: try ZoneRecord.order(position).fetchAll(db),
            zoneRooms: try ZoneRoomRecord.order(position).fetchAll(db),
            accessories: try AccessoryRecord.order(position).fetchAll(db),
            serviceGroups: try ServiceGroupRecord.order(position).fetchAll(db),
            actionSets: try ActionSetRecord.order(position).fetchAll(db),
            triggers: try TimerTriggerRecord.order(position).fetchAll(db)
        )
    }

    /// Deletes the stored layout: every home, and with it (`ON DELETE CASCADE`) all it holds.
    static func deleteAll(_ db: Database) throws {
        _ = try HomeRecord.deleteAll(db)
    }

    /// Inserts every row, parents before children.
    func insert(_ db: Database) throws {
        for record in homes { try record.insert(db) }
        for record in rooms { try record.insert(db) }
        for record in zones { try record.insert(db) }
        for record in zoneRooms { try record.insert(db) }
        for record in accessories { try record.insert(db) }
        for record in serviceGroups { try record.insert(db) }
        for record in actionSets { try record.insert(db) }
        for record in triggers { try record.insert(db) }
    }
}

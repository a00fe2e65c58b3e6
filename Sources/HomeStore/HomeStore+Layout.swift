import Foundation
import GRDB
import HomeModel

extension HomeStore {
    /// The stored homes, whole: rooms, zones, accessories with their last known structure and
    /// values, service groups, action sets and triggers, every list in the order it was saved.
    /// Empty if no layout was saved.
    ///
    /// - Throws: ``StoreError``; of kind ``StoreError/Kind/invalidData`` if a stored value does not
    ///   fit the model (its description names the row and column).
    public func loadHomes() throws(StoreError) -> [Home] {
        try read("load the layout") { db in
            try Layout.fetch(db).homes(json: JSONColumn())
        }
    }

    /// Replaces the stored layout with `homes`, in one transaction: after a failure the previous
    /// layout is still there, whole.
    ///
    /// Identifiers must be unique where the model says so (homes; rooms, zones, accessories,
    /// groups, action sets and triggers within a home); a duplicate fails the save. Trigger fire
    /// dates are kept as seconds since 1970 in a double: exact to well under a microsecond.
    public func saveHomes(_ homes: [Home]) throws(StoreError) {
        let operation = "save the layout"
        let layout = Layout(homes: homes, json: JSONColumn())
        try write(operation) { db in
            try Layout.deleteAll(db)
            try layout.insert(db)
            try Self.setSetting(SettingKey.layoutSaved, to: Data(), in: db)
        }
    }

    /// Stores `homes` where the store holds the layout `previous` describes (as this process
    /// saved or loaded it), writing only what changed, in one transaction: a home's own row, its
    /// small tables (rooms, zones, groups, action sets, triggers) when they changed, and each
    /// accessory whose row changed. Without `previous`, the whole layout is written.
    public func saveHomes(_ homes: [Home], previous: LayoutDigest?) throws(StoreError) {
        guard let previous else { return try saveHomes(homes) }
        let json = JSONColumn()
        let new = LayoutDigest(homes)
        let old = Dictionary(previous.homes.enumerated().map { ($1.id, (position: $0, home: $1)) }, uniquingKeysWith: { first, _ in first })
        let kept = Set(homes.map(\.id))
        try write("save the layout") { db in
            for (id, _) in old where !kept.contains(id) {
                _ = try HomeRecord.deleteOne(db, key: id.rawValue) // everything in it goes too
            }
            for (position, (home, digest)) in zip(homes, new.homes).enumerated() {
                guard let before = old[home.id] else {
                    var rows = Layout()
                    rows.append(home, at: position, json: json)
                    try rows.insert(db)
                    continue
                }
                try Self.update(home, digest, at: position, from: before.home, wasAt: before.position, json: json, in: db)
            }
            try Self.setSetting(SettingKey.layoutSaved, to: Data(), in: db)
        }
    }

    /// One home's changes since `before`.
    private static func update(_ home: Home, _ digest: LayoutDigest.HomeDigest, at position: Int, from before: LayoutDigest.HomeDigest,
                               wasAt oldPosition: Int, json: JSONColumn, in db: Database) throws {
        guard digest != before || position != oldPosition else { return }
        let homeID = home.id.rawValue
        var rows = Layout()
        rows.append(home, at: position, json: json, withAccessories: false)
        if digest.name != before.name || digest.isPrimary != before.isPrimary || position != oldPosition {
            try rows.homes[0].update(db)
        }
        if digest.own != before.own {
            for table in ["room", "zone", "service_group", "action_set", "timer_trigger"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE home_id = ?", arguments: [homeID])
            }
            var children = rows
            children.homes = []
            try children.insert(db)
        }
        if digest.accessories != before.accessories {
            // Added, removed or reordered: the home's accessory rows are written again.
            try db.execute(sql: "DELETE FROM accessory WHERE home_id = ?", arguments: [homeID])
            for (index, accessory) in home.accessories.enumerated() {
                try AccessoryRecord(accessory, homeID: homeID, position: index, json: json).insert(db)
            }
            return
        }
        for (index, accessory) in home.accessories.enumerated() where digest.accessoryHashes[index] != before.accessoryHashes[index] {
            try AccessoryRecord(accessory, homeID: homeID, position: index, json: json).update(db)
        }
    }

    /// Whether a layout was ever saved (even one of no homes); false on the first start.
    public func hasLayout() throws(StoreError) -> Bool {
        try read("check for a saved layout") { db in
            try Self.setting(SettingKey.layoutSaved, in: db) != nil
        }
    }
}

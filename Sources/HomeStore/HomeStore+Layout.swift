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
        let layout: Layout
        do {
            layout = try Layout(homes: homes, json: JSONColumn())
        } catch {
            throw StoreError.wrapping(error, as: .write, path: path, operation: operation)
        }
        try write(operation) { db in
            try Layout.deleteAll(db)
            try layout.insert(db)
            try Self.setSetting(SettingKey.layoutSaved, to: Data(), in: db)
        }
    }

    /// Whether a layout was ever saved (even one of no homes); false on the first start.
    public func hasLayout() throws(StoreError) -> Bool {
        try read("check for a saved layout") { db in
            try Self.setting(SettingKey.layoutSaved, in: db) != nil
        }
    }
}

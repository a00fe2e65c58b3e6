import Foundation
import GRDB
import HomeModel
import Wire

extension HomeStore {
    /// The configuration last applied, as ``saveLastAppliedConfiguration(_:)`` stored it; nil if
    /// none was. The gateway compares it with the configuration it starts with to tell what
    /// changed.
    public func lastAppliedConfiguration() throws(StoreError) -> Data? {
        try read("read the last applied configuration") { db in
            try Self.setting(SettingKey.lastAppliedConfiguration, in: db)
        }
    }

    /// Stores `data` as the configuration last applied, replacing the previous one.
    public func saveLastAppliedConfiguration(_ data: Data) throws(StoreError) {
        try write("save the last applied configuration") { db in
            try Self.setSetting(SettingKey.lastAppliedConfiguration, to: data, in: db)
            try Self.setSetting(SettingKey.lastAppliedDigest, to: Data(), in: db) // no file digest goes with it
        }
    }

    /// The homes of the configuration last applied (``saveLastAppliedConfiguration(_:)-([Home])``);
    /// nil if none was stored, or if what is stored cannot be read (the gateway then treats the
    /// configuration as new: the file wins, as at a first start).
    public func lastAppliedHomes() throws(StoreError) -> [Home]? {
        guard let data = try lastAppliedConfiguration() else { return nil }
        guard let json = try? ModelJSON.parse(Array(data), "the last applied configuration"),
              let homes = try? ModelJSON.list(json, "homes", { json throws(ModelJSON.Failure) in try Home(modelJSON: json) }) else { return nil }
        return homes
    }

    /// Stores `homes` as the configuration last applied, replacing the previous one, with the
    /// digest of the file they came from (``lastAppliedDigest()``).
    public func saveLastAppliedConfiguration(_ homes: [Home], digest: [UInt8]) throws(StoreError) {
        let encoded = Data(JSON.array(homes.map(\.modelJSON)).encoded())
        try write("save the last applied configuration") { db in
            try Self.setSetting(SettingKey.lastAppliedConfiguration, to: encoded, in: db)
            try Self.setSetting(SettingKey.lastAppliedDigest, to: Data(digest), in: db)
        }
    }

    /// The digest of the configuration file last applied; nil if none was stored (or only a
    /// configuration without one).
    public func lastAppliedDigest() throws(StoreError) -> [UInt8]? {
        try read("read the last applied configuration's digest") { db in
            try Self.setting(SettingKey.lastAppliedDigest, in: db).map(Array.init)
        }
    }

    /// The value of the setting `key`, nil if it is not set.
    static func setting(_ key: String, in db: Database) throws -> Data? {
        try Data.fetchOne(db, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key])
    }

    /// Sets the setting `key` to `value`.
    static func setSetting(_ key: String, to value: Data, in db: Database) throws {
        // SQLite binds empty bytes as NULL; the value of an empty setting is the empty BLOB.
        try db.execute(sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, coalesce(?, X''))", arguments: [key, value])
    }
}

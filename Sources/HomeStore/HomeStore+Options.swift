import Foundation
import GRDB
import HomeModel
import Wire

extension HomeStore {
    /// The options `$request/accessory/options` set, per accessory id (empty when none were).
    /// What cannot be read (a store of a later version, a damaged entry) is left out and named
    /// in `damaged`, so a person can set it again; nothing else is lost.
    public func accessoryOptions() throws(StoreError) -> (options: [AccessoryID: AccessoryOptions], damaged: [String]) {
        let data = try read("read the accessories' options") { db in try Self.setting(SettingKey.accessoryOptions, in: db) }
        guard let data, !data.isEmpty else { return ([:], []) }
        guard let object = (try? JSON.parse(Array(data)))?.object else { return ([:], ["the whole entry is not a JSON object"]) }
        var options: [AccessoryID: AccessoryOptions] = [:]
        var damaged: [String] = []
        for (id, json) in object {
            do throws(JSONOptionsSource.Failure) {
                options[AccessoryID(id)] = try AccessoryOptions(reading: JSONOptionsSource(json, keyPath: id))
            } catch {
                damaged.append("\(error)")
            }
        }
        return (options, damaged.sorted())
    }

    /// Stores the options set per accessory, replacing what was stored (an accessory without
    /// options is left out).
    public func saveAccessoryOptions(_ options: [AccessoryID: AccessoryOptions]) throws(StoreError) {
        let object = JSON.object(Dictionary(uniqueKeysWithValues: options.filter { !$0.value.isEmpty }.map { ($0.key.rawValue, $0.value.json) }))
        let data = Data(object.encoded())
        try write("save the accessories' options") { db in try Self.setSetting(SettingKey.accessoryOptions, to: data, in: db) }
    }
}

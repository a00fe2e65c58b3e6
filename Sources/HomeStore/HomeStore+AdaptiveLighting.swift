import Foundation
import GRDB
import HomeModel
import Wire

extension HomeStore {
    /// The lightbulb services a person turned Adaptive Lighting on for (empty when none): the
    /// gateway gives them a new transition when it starts.
    public func adaptiveLighting() throws(StoreError) -> Set<ServiceReference> {
        let data = try read("read the Adaptive Lighting bulbs") { db in try Self.setting(SettingKey.adaptiveLighting, in: db) }
        guard let data, let entries = (try? JSON.parse(Array(data)))?.array else { return [] }
        return Set(entries.compactMap { entry in
            guard let accessory = entry["accessory"]?.string, let iid = entry["service"]?.int, let service = Int(exactly: iid) else { return nil }
            return ServiceReference(accessoryID: AccessoryID(accessory), serviceIID: service)
        })
    }

    /// Stores the lightbulb services Adaptive Lighting is on for, replacing what was stored.
    public func saveAdaptiveLighting(_ services: Set<ServiceReference>) throws(StoreError) {
        let entries = services.sorted { ($0.accessoryID.rawValue, $0.serviceIID) < ($1.accessoryID.rawValue, $1.serviceIID) }
            .map { JSON.object(["accessory": .string($0.accessoryID.rawValue), "service": .int(Int64($0.serviceIID))]) }
        let data = Data(JSON.array(entries).encoded())
        try write("save the Adaptive Lighting bulbs") { db in try Self.setSetting(SettingKey.adaptiveLighting, to: data, in: db) }
    }
}

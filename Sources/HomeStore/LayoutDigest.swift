import HomeModel

/// What the store holds, in a few bytes per accessory: enough to tell which rows a new layout
/// changes (``HomeStore/saveHomes(_:previous:)``) without keeping a second copy of the homes.
///
/// Hashes are this process's (Swift's hashing is seeded per process): a digest is made from the
/// layout this process loaded or saved, never stored.
public struct LayoutDigest: Sendable, Equatable {
    struct HomeDigest: Sendable, Equatable {
        let id: HomeID
        /// The home's own fields and its small lists (rooms, zones, groups, action sets, triggers).
        let own: Int
        let name: String
        let isPrimary: Bool
        let accessories: [AccessoryID]
        let accessoryHashes: [Int]
    }

    let homes: [HomeDigest]

    public init(_ homes: [Home]) {
        self.homes = homes.map { home in
            var own = Hasher()
            own.combine(home.name)
            own.combine(home.isPrimary)
            own.combine(home.rooms)
            own.combine(home.zones)
            own.combine(home.serviceGroups)
            own.combine(home.actionSets)
            own.combine(home.triggers)
            return HomeDigest(id: home.id, own: own.finalize(), name: home.name, isPrimary: home.isPrimary,
                              accessories: home.accessories.map(\.id), accessoryHashes: home.accessories.map(\.hashValue))
        }
    }
}

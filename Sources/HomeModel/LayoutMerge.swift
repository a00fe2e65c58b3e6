/// Decides the layout at start (and on reload) from the store and the configuration file.
///
/// The rule: **a change in the configuration file wins; otherwise the store wins.**
///
/// - First start (nothing stored): the layout is the configuration's.
/// - Later, each object the configuration declares (a home, room, zone or accessory, matched by
///   its id) is compared with the configuration applied last time:
///   - new in the file: added;
///   - its entry changed in the file (a name, a room, a zone's rooms, the primary flag): the
///     file's value is applied, replacing any change made over MQTT;
///   - unchanged in the file: the stored object stays as it is, with the changes made over MQTT
///     (a rename, a move) intact;
///   - gone from the file: removed (its accessories' room falls back to the default room).
/// - Objects the configuration never declared (made over MQTT, paired HAP accessories) are
///   never touched by it; service groups, action sets and triggers live only in the store.
/// - An accessory's structure (services, characteristics, reachability) is always the device's:
///   for simulated accessories, the configuration's.
public enum LayoutMerge {
    /// The layout to use.
    /// - Parameters:
    ///   - stored: the layout in the store; nil on first start.
    ///   - lastApplied: the configuration's homes as applied last time; nil on first start.
    ///   - configuration: the configuration's homes now.
    public static func merge(stored: [Home]?, lastApplied: [Home]?, configuration: [Home]) -> [Home] {
        guard let stored else { return configuration }
        let previous = Dictionary((lastApplied ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let declared = Set(configuration.map(\.id))
        var result: [Home] = stored.filter { home in previous[home.id] == nil || declared.contains(home.id) }
        for home in configuration {
            if let index = result.firstIndex(where: { $0.id == home.id }) {
                result[index] = merge(stored: result[index], last: previous[home.id], file: home)
            } else if previous[home.id] != home {
                result.append(home) // new in the file, or changed there since a removal over MQTT
            }
        }
        return withOnePrimary(result, configuration: configuration, lastApplied: lastApplied)
    }

    private static func merge(stored: Home, last: Home?, file: Home) -> Home {
        var home = stored
        home.name = pick(stored.name, last?.name, file.name)
        home.isPrimary = pick(stored.isPrimary, last?.isPrimary, file.isPrimary)
        home.rooms = mergeList(stored: stored.rooms, last: last?.rooms, file: file.rooms, id: \.id) { stored, last, file in
            Room(id: stored.id, name: pick(stored.name, last?.name, file.name))
        }
        home.zones = mergeList(stored: stored.zones, last: last?.zones, file: file.zones, id: \.id) { stored, last, file in
            Zone(id: stored.id, name: pick(stored.name, last?.name, file.name), roomIDs: pick(stored.roomIDs, last?.roomIDs, file.roomIDs))
        }
        home.accessories = mergeList(stored: stored.accessories, last: last?.accessories, file: file.accessories, id: \.id) { stored, last, file in
            var accessory = file // the structure is the device's
            accessory.name = pick(stored.name, last?.name, file.name)
            accessory.roomID = pick(stored.roomID, last?.roomID, file.roomID)
            return accessory
        }
        // Rooms that went away: their accessories fall back to the default room; zones forget them.
        let roomIDs = Set(home.rooms.map(\.id))
        for index in home.accessories.indices {
            if let room = home.accessories[index].roomID, room != Home.defaultRoom.id, !roomIDs.contains(room) {
                home.accessories[index].roomID = nil
            }
        }
        for index in home.zones.indices {
            home.zones[index].roomIDs.removeAll { !roomIDs.contains($0) }
        }
        return home
    }

    /// A field's value: the file's if it changed there since last time, else the stored one.
    static func pick<T: Equatable>(_ stored: T, _ last: T?, _ file: T) -> T {
        guard let last else { return file } // newly declared
        return file != last ? file : stored
    }

    /// Merges a list of objects by id: keeps stored ones the file never declared, drops those the
    /// file no longer declares, merges the rest, and appends the file's new ones.
    static func mergeList<Element: Equatable, ID: Hashable>(stored: [Element], last: [Element]?, file: [Element], id: KeyPath<Element, ID>,
                                                 merge: (Element, Element?, Element) -> Element) -> [Element] {
        let previous = Dictionary((last ?? []).map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        let current = Dictionary(file.map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        var result: [Element] = []
        for element in stored {
            let key = element[keyPath: id]
            if let fileElement = current[key] {
                result.append(merge(element, previous[key], fileElement))
            } else if previous[key] == nil {
                result.append(element) // never declared by the file
            }
        }
        let present = Set(result.map { $0[keyPath: id] })
        // New in the file, or changed there since it was removed over MQTT (unchanged: stays removed).
        result += file.filter { element in
            !present.contains(element[keyPath: id]) && previous[element[keyPath: id]].map { $0 != element } ?? true
        }
        return result
    }

    /// Exactly one primary home: the merged flags if they name one, else the first home.
    private static func withOnePrimary(_ homes: [Home], configuration: [Home], lastApplied: [Home]?) -> [Home] {
        var homes = homes
        let primaries = homes.indices.filter { homes[$0].isPrimary }
        let keep = primaries.first(where: { index in
            // A primary flag the file just changed wins over an older one.
            let id = homes[index].id
            let file = configuration.first { $0.id == id }?.isPrimary
            let last = lastApplied?.first { $0.id == id }?.isPrimary
            return file == true && last != true
        }) ?? primaries.first ?? homes.indices.first
        for index in homes.indices { homes[index].isPrimary = index == keep }
        return homes
    }
}

/// The topic of every object in the tree, and the way back from an inbound topic to the object:
///
/// ```
/// <base>/<home>/<room>/<accessory>/<service>/<characteristic>
/// ```
///
/// Segments come from names (``Slug``), unique among siblings with `-2`, `-3` suffixes in
/// stable-id order. Inbound topics resolve by ``Slug/canonical(_:)`` comparison, with one
/// dictionary look-up per message whatever the size of the home.
public struct TopicMap: Sendable {
    /// An object that has a topic.
    public enum Target: Hashable, Sendable {
        case home(HomeID)
        case room(HomeID, RoomID)
        case accessory(HomeID, AccessoryID)
        case service(HomeID, ServiceReference)
        case characteristic(HomeID, CharacteristicReference)
    }

    /// The outcome of resolving an inbound topic's levels.
    public enum Resolution: Equatable, Sendable {
        case found(Target)
        /// Level number `index` (0 = the home) names nothing; `segment` is that level as sent.
        case unresolved(index: Int, segment: String)
    }

    /// The base topic (`homegate`).
    public let base: String
    private var homes: [HomeEntry] = []
    private var homeIndex: [HomeID: Int] = [:]
    /// The primary home, which `~` in place of the home's segment names.
    private var primaryHome: HomeID?
    /// The home level that names the primary home in inbound topics.
    public static let primaryAlias = "~"
    /// Every accessory's topics, by id (an accessory is in one home).
    private var accessories: [AccessoryID: AccessoryEntry] = [:]

    // The tree of topics, one entry per object, each with its topic and the canonical key of its
    // own segment (``Slug/canonical(_:)``): inbound topics resolve level by level, and a home of
    // 10,000 accessories keeps each topic once.
    private struct HomeEntry {
        let id: HomeID
        let topic: String
        let key: String
        var rooms: [RoomEntry] = []
        var roomsByKey: [String: Int] = [:]
    }

    private struct RoomEntry {
        let id: RoomID
        let topic: String
        var accessoriesByKey: [String: AccessoryID] = [:]
    }

    private struct AccessoryEntry {
        let home: HomeID
        let topic: String
        var services: [ServiceEntry] = []
    }

    private struct ServiceEntry {
        let iid: Int
        let topic: String
        let key: String
        var characteristics: [CharacteristicEntry] = []
    }

    private struct CharacteristicEntry {
        let iid: Int
        let topic: String
        let key: String
    }

    /// Lays out the topics of `homes` under `base`.
    public init(base: String, homes: [Home]) {
        self.base = base
        let homeSegments = Slug.assign(homes.map { (id: $0.id, slug: Slug.make($0.name, fallback: "home")) })
        for home in homes {
            guard let segment = homeSegments[home.id] else { continue }
            add(home: home, segment: segment)
        }
        primaryHome = homes.first(where: \.isPrimary)?.id ?? homes.first?.id
    }

    /// The full topic of `target`, if it has one (hidden services and their characteristics do not).
    public func topic(of target: Target) -> String? {
        switch target {
        case .home(let id):
            return homeIndex[id].map { homes[$0].topic }
        case .room(let home, let room):
            return homeIndex[home].flatMap { index in homes[index].rooms.first { $0.id == room }?.topic }
        case .accessory(let home, let id):
            guard let entry = accessories[id], entry.home == home else { return nil }
            return entry.topic
        case .service(let home, let reference):
            guard let entry = accessories[reference.accessoryID], entry.home == home else { return nil }
            return entry.services.first { $0.iid == reference.serviceIID }?.topic
        case .characteristic(let home, let reference):
            guard let entry = accessories[reference.accessoryID], entry.home == home else { return nil }
            for service in entry.services {
                if let characteristic = service.characteristics.first(where: { $0.iid == reference.iid }) { return characteristic.topic }
            }
            return nil
        }
    }

    /// Every object with a topic, and the topic.
    public var allTopics: [Target: String] {
        var topics: [Target: String] = [:]
        for home in homes {
            topics[.home(home.id)] = home.topic
            for room in home.rooms { topics[.room(home.id, room.id)] = room.topic }
        }
        for (id, entry) in accessories {
            topics[.accessory(entry.home, id)] = entry.topic
            for service in entry.services {
                topics[.service(entry.home, ServiceReference(accessoryID: id, serviceIID: service.iid))] = service.topic
                for characteristic in service.characteristics {
                    topics[.characteristic(entry.home, CharacteristicReference(accessoryID: id, iid: characteristic.iid))] = characteristic.topic
                }
            }
        }
        return topics
    }

    /// Resolves the levels of an inbound topic after the base (`home`, `room`, `accessory`,
    /// `service`, `characteristic`, or a prefix of them).
    public func resolve(_ levels: [Substring]) -> Resolution {
        func unresolved(_ index: Int) -> Resolution {
            .unresolved(index: index, segment: levels.indices.contains(index) ? String(levels[index]) : "")
        }
        guard let first = levels.first else { return unresolved(0) }
        guard let home = home(named: first) else { return unresolved(0) }
        guard levels.count > 1 else { return .found(.home(home.id)) }
        guard let roomIndex = home.roomsByKey[Slug.canonical(levels[1])] else { return unresolved(1) }
        let room = home.rooms[roomIndex]
        guard levels.count > 2 else { return .found(.room(home.id, room.id)) }
        guard let accessoryID = room.accessoriesByKey[Slug.canonical(levels[2])], let accessory = accessories[accessoryID] else { return unresolved(2) }
        guard levels.count > 3 else { return .found(.accessory(home.id, accessoryID)) }
        let serviceKey = Slug.canonical(levels[3])
        guard let service = accessory.services.last(where: { $0.key == serviceKey }) else { return unresolved(3) }
        guard levels.count > 4 else { return .found(.service(home.id, ServiceReference(accessoryID: accessoryID, serviceIID: service.iid))) }
        let characteristicKey = Slug.canonical(levels[4])
        guard let characteristic = service.characteristics.last(where: { $0.key == characteristicKey }) else { return unresolved(4) }
        guard levels.count == 5 else { return unresolved(5) } // deeper than a characteristic
        return .found(.characteristic(home.id, CharacteristicReference(accessoryID: accessoryID, iid: characteristic.iid)))
    }

    /// The home a first level names: its segment (canonically), or `~` for the primary home.
    private func home(named level: Substring) -> HomeEntry? {
        if level == Self.primaryAlias {
            return primaryHome.flatMap { homeIndex[$0] }.map { homes[$0] }
        }
        let key = Slug.canonical(level)
        return homes.last { $0.key == key }
    }

    /// The segments that may follow `levels` (which must resolve, or be empty): the homes, a
    /// home's rooms, a room's accessories, an accessory's services, a service's characteristics.
    public func segments(after levels: [Substring]) -> [String] {
        func last(_ topic: String) -> String { String(topic.split(separator: "/").last ?? "") }
        guard !levels.isEmpty else { return homes.map { last($0.topic) } }
        guard case .found(let target) = resolve(levels) else { return [] }
        switch target {
        case .home(let id):
            return homeIndex[id].map { homes[$0].rooms.map { last($0.topic) } } ?? []
        case .room(let home, let room):
            guard let entry = homeIndex[home].flatMap({ index in homes[index].rooms.first { $0.id == room } }) else { return [] }
            return entry.accessoriesByKey.values.compactMap { accessories[$0].map { last($0.topic) } }.sorted()
        case .accessory(_, let id):
            return accessories[id]?.services.map { last($0.topic) } ?? []
        case .service(_, let reference):
            return accessories[reference.accessoryID]?.services.first { $0.iid == reference.serviceIID }?.characteristics.map { last($0.topic) } ?? []
        case .characteristic:
            return []
        }
    }

    // MARK: - Building

    private mutating func add(home: Home, segment: String) {
        var entry = HomeEntry(id: home.id, topic: "\(base)/\(segment)", key: Slug.canonical(segment))
        let roomSegments = Self.roomSegments(home)
        let known = Set(home.rooms.map(\.id))
        let byRoom = Dictionary(grouping: home.accessories) { accessory in
            accessory.roomID.flatMap { known.contains($0) ? $0 : nil } ?? Home.defaultRoom.id
        }
        for room in home.allRooms {
            guard let roomSegment = roomSegments[room.id] else { continue }
            var roomEntry = RoomEntry(id: room.id, topic: entry.topic + "/" + roomSegment)
            let accessories = byRoom[room.id] ?? []
            let accessorySegments = Slug.assign(accessories.map { (id: $0.id, slug: Slug.make($0.name, fallback: "accessory")) })
            for accessory in accessories {
                guard let accessorySegment = accessorySegments[accessory.id] else { continue }
                roomEntry.accessoriesByKey[Slug.canonical(accessorySegment)] = accessory.id
                add(accessory: accessory, home: home.id, topic: roomEntry.topic + "/" + accessorySegment)
            }
            entry.roomsByKey[Slug.canonical(roomSegment)] = entry.rooms.count
            entry.rooms.append(roomEntry)
        }
        homeIndex[home.id] = homes.count
        homes.append(entry)
    }

    private mutating func add(accessory: Accessory, home: HomeID, topic: String) {
        var entry = AccessoryEntry(home: home, topic: topic)
        let services = accessory.visibleServices
        let serviceSegments = Self.serviceSegments(services)
        for service in services {
            guard let serviceSegment = serviceSegments[service.iid] else { continue }
            var serviceEntry = ServiceEntry(iid: service.iid, topic: topic + "/" + serviceSegment, key: Slug.canonical(serviceSegment))
            let characteristicSegments = Slug.assign(service.characteristics.map { (id: $0.iid, slug: Self.segment(of: $0)) })
            for characteristic in service.characteristics {
                guard let characteristicSegment = characteristicSegments[characteristic.iid] else { continue }
                serviceEntry.characteristics.append(CharacteristicEntry(iid: characteristic.iid, topic: serviceEntry.topic + "/" + characteristicSegment,
                                                                        key: Self.key(of: characteristicSegment)))
            }
            entry.services.append(serviceEntry)
        }
        accessories[accessory.id] = entry
    }

    /// The canonical key of a segment; the catalog's names share one copy of theirs.
    private static func key(of segment: String) -> String {
        Self.standardKeys[segment] ?? Slug.canonical(segment)
    }

    /// The canonical keys of the catalog's characteristic names, made once.
    private static let standardKeys: [String: String] = Dictionary(
        Catalog.standard.characteristics.map { ($0.name, Slug.canonical($0.name)) }, uniquingKeysWith: { first, _ in first })

    /// Rooms: `default-room` for the default room, the others by name.
    static func roomSegments(_ home: Home) -> [RoomID: String] {
        let defaultSegment = Slug.make(Home.defaultRoom.name, fallback: "default-room")
        var segments = Slug.assign([(id: "", slug: defaultSegment)] + home.rooms.map { (id: "~" + $0.id.rawValue, slug: Slug.make($0.name, fallback: "room")) })
        var result: [RoomID: String] = [Home.defaultRoom.id: segments.removeValue(forKey: "")!]
        for room in home.rooms { result[room.id] = segments["~" + room.id.rawValue] }
        return result
    }

    /// Services: the type's name; several of one type take their own names' slugs when those
    /// differ, else `outlet`, `outlet-2` ... in instance-id order.
    static func serviceSegments(_ services: [Service]) -> [Int: String] {
        var preferred: [(id: Int, slug: String)] = []
        for (_, group) in Dictionary(grouping: services, by: \.type) {
            let typeSlug = Self.typeSegment(group[0])
            guard group.count > 1 else {
                preferred.append((id: group[0].iid, slug: typeSlug))
                continue
            }
            let names = group.map { $0.name.map { Slug.make($0, fallback: "") } ?? "" }
            let distinct = !names.contains("") && Set(names.map { Slug.canonical($0) }).count == names.count
            for (service, name) in zip(group, names) {
                preferred.append((id: service.iid, slug: distinct ? name : typeSlug))
            }
        }
        return Slug.assign(preferred)
    }

    /// A service type's segment: its standard name; a vendor type's catalog name; a custom
    /// type's own name; else a short stable form of its UUID.
    static func typeSegment(_ service: Service) -> String {
        if let standard = Catalog.standard.service(service.type) { return standard.name }
        if let vendor = Catalog.standard.vendorService(service.uuid) { return vendor.name }
        if let name = service.name, !name.isEmpty { return Slug.make(name, fallback: shortForm(of: service.uuid)) }
        return shortForm(of: service.uuid)
    }

    /// A characteristic's segment: the standard type's name; a vendor type's catalog name
    /// (`power`); a custom type's description; else a short stable form of its UUID.
    static func segment(of characteristic: Characteristic) -> String {
        if let standard = Catalog.standard.characteristic(characteristic.type) { return standard.name }
        if let vendor = Catalog.standard.vendorCharacteristic(characteristic.uuid) { return vendor.name }
        if let description = characteristic.description, !description.isEmpty {
            return Slug.make(description, fallback: shortForm(of: characteristic.uuid))
        }
        return shortForm(of: characteristic.uuid)
    }

    /// A custom type's UUID, short and stable: its first eight hex digits, after the vendor's
    /// name when the catalog knows the UUID's base (`eve-e863f11e`).
    static func shortForm(of uuid: String) -> String {
        let head = String(uuid.prefix { $0 != "-" }.lowercased().prefix(8))
        let short = head.isEmpty ? "custom" : head
        return Catalog.standard.vendor(ofUUID: uuid).map { "\($0)-\(short)" } ?? short
    }
}

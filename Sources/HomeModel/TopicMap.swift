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
    private var topics: [Target: String] = [:]
    private var index: [String: Target] = [:]

    /// Lays out the topics of `homes` under `base`.
    public init(base: String, homes: [Home]) {
        self.base = base
        let homeSegments = Slug.assign(homes.map { (id: $0.id, slug: Slug.make($0.name, fallback: "home")) })
        for home in homes {
            guard let segment = homeSegments[home.id] else { continue }
            add(home: home, segment: segment)
        }
    }

    /// The full topic of `target`, if it has one (hidden services and their characteristics do not).
    public func topic(of target: Target) -> String? {
        topics[target]
    }

    /// Every object with a topic, and the topic.
    public var allTopics: [Target: String] { topics }

    /// Resolves the levels of an inbound topic after the base (`home`, `room`, `accessory`,
    /// `service`, `characteristic`, or a prefix of them).
    public func resolve(_ levels: [Substring]) -> Resolution {
        let keys = levels.map(Slug.canonical)
        if let target = index[keys.joined(separator: "/")] { return .found(target) }
        // Not found: name the first level that does not resolve.
        var prefix = ""
        for (number, key) in keys.enumerated() {
            prefix = number == 0 ? key : prefix + "/" + key
            if index[prefix] == nil { return .unresolved(index: number, segment: String(levels[number])) }
        }
        return .unresolved(index: max(0, levels.count - 1), segment: levels.last.map(String.init) ?? "")
    }

    // MARK: - Building

    private mutating func add(home: Home, segment: String) {
        let homePath = Path(topic: "\(base)/\(segment)", key: Slug.canonical(segment))
        record(.home(home.id), homePath)
        let roomSegments = Self.roomSegments(home)
        let known = Set(home.rooms.map(\.id))
        let byRoom = Dictionary(grouping: home.accessories) { accessory in
            accessory.roomID.flatMap { known.contains($0) ? $0 : nil } ?? Home.defaultRoom.id
        }
        for room in home.allRooms {
            guard let roomSegment = roomSegments[room.id] else { continue }
            let roomPath = homePath.appending(roomSegment)
            record(.room(home.id, room.id), roomPath)
            let accessories = byRoom[room.id] ?? []
            let accessorySegments = Slug.assign(accessories.map { (id: $0.id, slug: Slug.make($0.name, fallback: "accessory")) })
            for accessory in accessories {
                guard let accessorySegment = accessorySegments[accessory.id] else { continue }
                add(accessory: accessory, home: home.id, path: roomPath.appending(accessorySegment))
            }
        }
    }

    private mutating func add(accessory: Accessory, home: HomeID, path: Path) {
        record(.accessory(home, accessory.id), path)
        let services = accessory.visibleServices
        let serviceSegments = Self.serviceSegments(services)
        for service in services {
            guard let serviceSegment = serviceSegments[service.iid] else { continue }
            let servicePath = path.appending(serviceSegment)
            record(.service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid)), servicePath)
            let characteristicSegments = Slug.assign(service.characteristics.map { (id: $0.iid, slug: Self.segment(of: $0)) })
            for characteristic in service.characteristics {
                guard let characteristicSegment = characteristicSegments[characteristic.iid] else { continue }
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                record(.characteristic(home, reference), servicePath.appending(characteristicSegment))
            }
        }
    }

    private mutating func record(_ target: Target, _ path: Path) {
        topics[target] = path.topic
        index[path.key] = target
    }

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

    /// A service type's segment: its standard name, or the custom type's UUID.
    static func typeSegment(_ service: Service) -> String {
        Catalog.standard.service(service.type)?.name ?? Slug.make(service.type, fallback: "service")
    }

    /// A characteristic's segment: the standard type's name; a custom type's description, else its UUID.
    static func segment(of characteristic: Characteristic) -> String {
        if let standard = Catalog.standard.characteristic(characteristic.type) { return standard.name }
        if let description = characteristic.description, !description.isEmpty {
            return Slug.make(description, fallback: characteristic.uuid.lowercased())
        }
        return characteristic.uuid.lowercased()
    }

    /// A topic and its canonical key, built level by level.
    private struct Path {
        let topic: String
        let key: String

        func appending(_ segment: String) -> Path {
            Path(topic: topic + "/" + segment, key: key + "/" + Slug.canonical(segment))
        }
    }
}

/// Why an edit was refused: a wire code and a message a person understands.
public struct EditError: Error, Equatable, CustomStringConvertible {
    /// The `error` of a management answer.
    public enum Code: String, Sendable {
        case invalidName = "invalid-name"
        case nameInUse = "name-in-use"
        case notFound = "not-found"
        case invalidRequest = "invalid-request"
        case notAllowed = "not-allowed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func notFound(_ message: String) -> EditError { EditError(.notFound, message) }
    static func invalidRequest(_ message: String) -> EditError { EditError(.invalidRequest, message) }
    static func notAllowed(_ message: String) -> EditError { EditError(.notAllowed, message) }

    /// A name that breaks HomeKit's naming rules.
    static func invalidName(_ error: NameError) -> EditError { EditError(.invalidName, error.description) }
}

/// The decisions of every management request (`<base>/$request/<object>/<verb>`), with HomeKit's
/// rules, over plain values: no MQTT, no I/O. Each edit either changes ``homes`` completely or
/// throws and changes nothing.
///
/// - Names created or accepted must be valid HomeKit names (``HomeKitName``): `invalid-name`.
/// - Homes are one namespace; everything inside a home (its rooms, the default room's name
///   included, zones, service groups, action sets, triggers and accessories) shares the home's.
///   A new or renamed object clashes with any *other* object of the namespace whose name has the
///   same comparison key (`name-in-use`, naming what it clashes with); renaming an object to its
///   own name, or a case variant of it, is allowed. Service names are unique within their
///   accessory.
/// - New ids are slugs of the name (`Slug.make`), with `-2`, `-3` ... when the slug is taken by
///   another object of that kind in the home (homes: among homes).
/// - Homes, rooms, zones, groups, action sets and triggers are named by name (compared the
///   HomeKit way) or by id; accessories by id first, then by name; services and
///   characteristics by instance id. A nil home is the primary home.
public struct HomeEditor: Sendable {
    /// The homes as edited so far (settable only inside HomeModel, by the edits in the
    /// `HomeEditor+*.swift` files).
    public internal(set) var homes: [Home]

    public init(homes: [Home]) {
        self.homes = homes
    }

    // MARK: Homes

    /// The home a request names (by name, HomeKit comparison, or id); nil: the primary home.
    public func homeIndex(_ name: String?) throws(EditError) -> Int {
        guard let name else {
            guard let index = homes.firstIndex(where: \.isPrimary) ?? homes.indices.first else {
                throw .notFound("there is no home; add one first")
            }
            return index
        }
        let key = HomeKitName.key(name)
        if let index = homes.firstIndex(where: { HomeKitName.key($0.name) == key }) ?? homes.firstIndex(where: { $0.id.rawValue == name }) {
            return index
        }
        throw .notFound("no home \"\(name)\"\(Self.known(homes.map(\.name), kind: "homes", owner: nil))")
    }

    // MARK: Look-ups

    /// The room a request names, the default room included.
    public func room(_ name: String, home: String?) throws(EditError) -> Room {
        let index = try homeIndex(home)
        return homes[index].room(withID: try roomID(name, in: index)) ?? Home.defaultRoom
    }

    /// The zone a request names.
    public func zone(_ name: String, home: String?) throws(EditError) -> Zone {
        let index = try homeIndex(home)
        return homes[index].zones[try zoneIndex(name, in: index)]
    }

    /// The service group a request names.
    public func serviceGroup(_ name: String, home: String?) throws(EditError) -> ServiceGroup {
        let index = try homeIndex(home)
        return homes[index].serviceGroups[try groupIndex(name, in: index)]
    }

    /// The action set a request names.
    public func actionSet(_ name: String, home: String?) throws(EditError) -> ActionSet {
        let index = try homeIndex(home)
        return homes[index].actionSets[try actionSetIndex(name, in: index)]
    }

    /// The trigger a request names.
    public func trigger(_ name: String, home: String?) throws(EditError) -> TimerTrigger {
        let index = try homeIndex(home)
        return homes[index].triggers[try triggerIndex(name, in: index)]
    }

    /// The accessory a request names: its stable id, or its name compared the HomeKit way. A name
    /// several accessories share is refused (`invalid-request`, naming their ids).
    public func accessoryLocation(_ accessory: String, home: String?) throws(EditError) -> (home: Int, accessory: Int) {
        try accessoryLocation(accessory, in: try homeIndex(home))
    }

    /// The accessory a request names, in the home at `homeIndex`.
    func accessoryLocation(_ accessory: String, in homeIndex: Int) throws(EditError) -> (home: Int, accessory: Int) {
        if let index = homes[homeIndex].accessories.firstIndex(where: { $0.id.rawValue == accessory }) {
            return (homeIndex, index)
        }
        let key = HomeKitName.key(accessory)
        let matches = homes[homeIndex].accessories.indices.filter { HomeKitName.key(homes[homeIndex].accessories[$0].name) == key }
        if matches.count == 1 { return (homeIndex, matches[0]) }
        let homeName = homes[homeIndex].name
        if matches.count > 1 {
            let ids = matches.map { homes[homeIndex].accessories[$0].id }.sorted().map(\.rawValue)
            throw .invalidRequest("\"\(accessory)\" names \(ids.count) accessories in \"\(homeName)\" (\(ids.joined(separator: ", "))); name one by its id")
        }
        // Elsewhere? Say where, so the person can add "home".
        let elsewhere = homes.indices.filter { $0 != homeIndex }.first { index in
            homes[index].accessories.contains { $0.id.rawValue == accessory || HomeKitName.key($0.name) == key }
        }
        let hint = elsewhere.map { "; it is in \"\(homes[$0].name)\" (name that home in \"home\")" } ?? ""
        throw .notFound("no accessory \"\(accessory)\" in \"\(homeName)\"\(hint)")
    }

    // MARK: Indices inside a home

    func roomID(_ name: String, in home: Int) throws(EditError) -> RoomID {
        let rooms = homes[home].allRooms
        let index = Self.find(name, in: rooms, name: \.name, id: \.id.rawValue)
        guard let index else {
            throw .notFound("no room \"\(name)\" in \"\(homes[home].name)\"\(Self.known(rooms.map(\.name), kind: "rooms", owner: "its"))")
        }
        return rooms[index].id
    }

    func zoneIndex(_ name: String, in home: Int) throws(EditError) -> Int {
        let zones = homes[home].zones
        guard let index = Self.find(name, in: zones, name: \.name, id: \.id.rawValue) else {
            throw .notFound("no zone \"\(name)\" in \"\(homes[home].name)\"\(Self.known(zones.map(\.name), kind: "zones", owner: "its"))")
        }
        return index
    }

    func groupIndex(_ name: String, in home: Int) throws(EditError) -> Int {
        let groups = homes[home].serviceGroups
        guard let index = Self.find(name, in: groups, name: \.name, id: \.id.rawValue) else {
            throw .notFound("no service group \"\(name)\" in \"\(homes[home].name)\"\(Self.known(groups.map(\.name), kind: "service groups", owner: "its"))")
        }
        return index
    }

    func actionSetIndex(_ name: String, in home: Int) throws(EditError) -> Int {
        let actionSets = homes[home].actionSets
        guard let index = Self.find(name, in: actionSets, name: \.name, id: \.id.rawValue) else {
            throw .notFound("no action set \"\(name)\" in \"\(homes[home].name)\"\(Self.known(actionSets.map(\.name), kind: "action sets", owner: "its"))")
        }
        return index
    }

    func triggerIndex(_ name: String, in home: Int) throws(EditError) -> Int {
        let triggers = homes[home].triggers
        guard let index = Self.find(name, in: triggers, name: \.name, id: \.id.rawValue) else {
            throw .notFound("no trigger \"\(name)\" in \"\(homes[home].name)\"\(Self.known(triggers.map(\.name), kind: "triggers", owner: "its"))")
        }
        return index
    }

    /// The element named `name` (comparison key), else the one whose id is `name`.
    private static func find<T>(_ name: String, in list: [T], name keyPath: KeyPath<T, String>, id: KeyPath<T, String>) -> Int? {
        let key = HomeKitName.key(name)
        return list.firstIndex { HomeKitName.key($0[keyPath: keyPath]) == key } ?? list.firstIndex { $0[keyPath: id] == name }
    }

    /// `; its rooms: "Kitchen", "Hall"` for a not-found message (at most ten), or that there are none.
    static func known(_ names: [String], kind: String, owner: String?) -> String {
        guard !names.isEmpty else { return owner == nil ? "; there are no \(kind)" : "; it has no \(kind)" }
        let shown = names.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")
        return "; \(owner.map { "\($0) " } ?? "")\(kind): \(shown)\(names.count > 10 ? ", ..." : "")"
    }

    // MARK: Names

    /// An object of a home's namespace.
    enum Member: Equatable {
        case room(RoomID), zone(ZoneID), serviceGroup(ServiceGroupID), actionSet(ActionSetID), trigger(TriggerID), accessory(AccessoryID)
    }

    /// Everything named in a home, with how a message names it.
    private static func namespace(of home: Home) -> [(member: Member, name: String, label: String)] {
        var members: [(member: Member, name: String, label: String)] = []
        members += home.allRooms.map { (.room($0.id), $0.name, "the room \"\($0.name)\"") }
        members += home.zones.map { (.zone($0.id), $0.name, "the zone \"\($0.name)\"") }
        members += home.serviceGroups.map { (.serviceGroup($0.id), $0.name, "the service group \"\($0.name)\"") }
        members += home.actionSets.map { (.actionSet($0.id), $0.name, "the action set \"\($0.name)\"") }
        members += home.triggers.map { (.trigger($0.id), $0.name, "the trigger \"\($0.name)\"") }
        members += home.accessories.map { (.accessory($0.id), $0.name, "the accessory \"\($0.name)\" (\($0.id))") }
        return members
    }

    /// `text` as a valid name in the home's namespace, for `member` (nil: a new object).
    func validName(_ text: String, in home: Int, for member: Member?) throws(EditError) -> String {
        let name = try Self.homeKitName(text)
        for other in Self.namespace(of: homes[home]) where other.member != member && name.clashes(with: other.name) {
            throw Self.inUse(name.text, by: other.label, exact: other.name == name.text, in: "in \"\(homes[home].name)\" ")
        }
        return name.text
    }

    /// `text` as a valid home name, for the home `id` (nil: a new home).
    func validHomeName(_ text: String, for id: HomeID?) throws(EditError) -> String {
        let name = try Self.homeKitName(text)
        for other in homes where other.id != id && name.clashes(with: other.name) {
            throw Self.inUse(name.text, by: "the home \"\(other.name)\"", exact: other.name == name.text, in: "")
        }
        return name.text
    }

    static func homeKitName(_ text: String) throws(EditError) -> HomeKitName {
        do {
            return try HomeKitName(text)
        } catch {
            throw .invalidName(error)
        }
    }

    static func inUse(_ name: String, by label: String, exact: Bool, in place: String) -> EditError {
        let rule = exact ? "" : " (names are compared ignoring case, spaces and apostrophes)"
        return EditError(.nameInUse, "\"\(name)\" is already in use \(place)by \(label)\(rule)")
    }

    // MARK: Ids

    /// A new id from `name`: its slug, or the slug with `-2`, `-3` ... when taken.
    static func newID(_ name: String, fallback: String, taken: Set<String>) -> String {
        let slug = Slug.make(name, fallback: fallback)
        guard taken.contains(slug) else { return slug }
        var number = 2
        while taken.contains("\(slug)-\(number)") { number += 1 }
        return "\(slug)-\(number)"
    }
}

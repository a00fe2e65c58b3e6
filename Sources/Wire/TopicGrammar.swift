/// The topic grammar of docs/mqtt-api.md, defined once: the gateway's reserved levels under the
/// base topic and the verbs a client publishes. The engine reads inbound topics with it, the
/// broker's ACL and the page's publish rules are written from it, and the page gets it as data
/// (``json``) with its session, so that no script spells a level or a verb of its own.
public enum TopicGrammar {
    /// A reserved level: right under the base (`$request`) or under a home (`$action-sets`).
    public enum Level: String, CaseIterable, Sendable {
        /// `<base>/$request/<object>/<verb>`: management requests and the simulator's controls.
        case request = "$request"
        /// `<base>/$response/<object>/<verb>`: their answers.
        case response = "$response"
        /// `<base>/$sync/<marker>`: the gateway's own synchronisation markers.
        case sync = "$sync"
        /// `<base>/$events`: what happened, one JSON object each.
        case events = "$events"
        /// `<base>/$layout` and its parts: the homes' structure.
        case layout = "$layout"
        /// `<base>/$browser/<device id>`: accessories found by the accessory browser.
        case browser = "$browser"
        /// `<base>/$state`: `online` or `offline` (the gateway's will).
        case state = "$state"
        /// `<base>/$health`: the gateway's health report.
        case health = "$health"
        /// `<base>/<home>/$action-sets/<name>/execute`.
        case actionSets = "$action-sets"
        /// `<base>/<home>/$groups/<group>/<characteristic>/set`.
        case groups = "$groups"
        /// `<base>/<home>/$zones/<zone>/<service type>/<characteristic>/set`.
        case zones = "$zones"
    }

    /// What the gateway keeps about an accessory or characteristic, one level below its topic.
    public enum Attribute: String, CaseIterable, Sendable {
        /// `<characteristic>/$meta`, `<accessory>/$meta`: what it is and how to drive it.
        case meta = "$meta"
        /// `<accessory>/$reachable`: `true` or `false`.
        case reachable = "$reachable"
        /// `<accessory>/$last-seen`: when it was last heard from.
        case lastSeen = "$last-seen"
        /// `<accessory>/$snapshot`: a camera's last still image.
        case snapshot = "$snapshot"
        /// A lightbulb service's Adaptive Lighting, `on` or `off` (a plain segment, as its
        /// `set` is: `<service>/adaptive-lighting/set`).
        case adaptiveLighting = "adaptive-lighting"
    }

    /// What a client publishes at the end of a topic to have something done: `set` and `get`
    /// on a characteristic or service, `execute` on an action set.
    public enum Verb: String, CaseIterable, Sendable {
        case set, get, execute
    }

    /// `<base>/<level>` followed by `rest`, one level each (`<base>/$request/room/add`).
    public static func topic(_ base: String, _ level: Level, _ rest: String...) -> String {
        ([base, level.rawValue] + rest).joined(separator: "/")
    }

    /// `<topic>/<attribute>` (`<accessory>/$reachable`).
    public static func topic(_ topic: String, _ attribute: Attribute) -> String {
        "\(topic)/\(attribute.rawValue)"
    }

    /// The level after a verb where its acknowledgement comes: `<topic>/set/result`.
    public static let result = "result"

    /// The levels under a home that hold shortcuts (`$action-sets`, `$groups`, `$zones`).
    public static let shortcuts: [Level] = [.actionSets, .groups, .zones]

    /// The grammar as data: `{"levels": {"request": "$request", ...}, "verbs": {"set": "set", ...},
    /// "attributes": {"reachable": "$reachable", ...}, "result": "result", "shortcuts":
    /// ["$action-sets", ...]}`, for the page, whose scripts name
    /// an entry by its key and take its text from here.
    public static var json: JSON {
        .object([
            "levels": .object(Dictionary(uniqueKeysWithValues: Level.allCases.map { (String(describing: $0), JSON.string($0.rawValue)) })),
            "verbs": .object(Dictionary(uniqueKeysWithValues: Verb.allCases.map { ($0.rawValue, JSON.string($0.rawValue)) })),
            "attributes": .object(Dictionary(uniqueKeysWithValues: Attribute.allCases.map { (String(describing: $0), JSON.string($0.rawValue)) })),
            "result": .string(result),
            "shortcuts": .array(shortcuts.map { .string($0.rawValue) }),
        ])
    }
}

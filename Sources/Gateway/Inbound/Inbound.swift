import MQTT
import Wire

/// What an inbound message asks for, read once from its topic and payload by ``InboundCodec``.
/// Each case is a topic form of `docs/mqtt-api.md`; nothing after the codec looks at topic text.
enum Inbound: Sendable {
    /// `<base>/<home>/<room>/<accessory>/<service>/<characteristic>/set` or `/get` (section 3, 4):
    /// `path` is the levels between the base and the verb, as sent.
    case command(Command)
    /// `<base>/$request/<object>/<verb>` (sections 7, 8).
    case request(Request)
    /// `<base>/<home>/$action-sets/<name>/execute`, `$groups/...`, `$zones/...` (section 7).
    case shortcut(Shortcut)
    /// The gateway's own synchronisation marker, `<base>/$sync/<marker>` (section 6).
    case syncMarker(String)
    /// Home Assistant's birth message, `<prefix>/status` = `online` (section 10).
    case homeAssistantOnline
    /// Anything else under the base (a value, `$meta`, an acknowledgement): nothing to do, but
    /// a retained one is remembered for the synchronisation.
    case state
    /// Outside the base and not Home Assistant's status.
    case foreign

    enum Verb: String, Sendable {
        case set, get
    }

    /// A set or a get.
    struct Command: Sendable {
        let verb: Verb
        /// The levels between the base and the verb, as sent (matched ignoring case, `-`, ...).
        let path: [Substring]
        let body: Body
    }

    /// A management request or a simulator control.
    struct Request: Sendable {
        /// `room`, `accessory`, `simulator`, `gateway`, ...
        let object: String
        let verb: String
        /// Every level after `$request` (`room/add`), for answers and error messages.
        let path: String
        /// The body; nil when it is not a JSON object.
        let body: [String: JSON]?
    }

    /// A shortcut topic.
    struct Shortcut: Sendable {
        enum Target: Sendable {
            /// `<home>/$action-sets/<name>/execute`
            case actionSet(name: Substring)
            /// `<home>/$groups/<group>/<characteristic>/set`
            case group(name: Substring, characteristic: String)
            /// `<home>/$zones/<zone>/<service-type>/<characteristic>/set`
            case zone(name: Substring, serviceType: String, characteristic: String)
            /// A `$action-sets`, `$groups` or `$zones` topic of another shape.
            case malformed(path: String)
        }

        let home: Substring
        let target: Target
        let body: Body
    }

    /// A command's payload: a JSON object (`{"value": 80, "id": "abc"}`), or anything else as text
    /// (`on`, `80`, `"text"`), read by the characteristic's format later.
    enum Body: Sendable {
        case object([String: JSON])
        case text(String)

        init(_ payload: [UInt8]) {
            if let first = payload.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }), first == UInt8(ascii: "{"),
               case .object(let members)? = try? JSON.parse(payload) {
                self = .object(members)
            } else {
                self = .text(String(decoding: payload, as: UTF8.self))
            }
        }

        /// The `id` to echo: a JSON scalar given as `id`.
        var id: JSON? {
            guard case .object(let members) = self, let id = members["id"], id.isScalar else { return nil }
            return id
        }
    }

    /// Whether the message asks the gateway to do something (so a retained copy is cleared and
    /// run once).
    var isCommand: Bool {
        switch self {
        case .command, .request, .shortcut: true
        default: false
        }
    }
}

/// Reads inbound messages into ``Inbound`` by the topic grammar of `docs/mqtt-api.md`
/// (``TopicGrammar``, defined once for the engine, the ACL and the page).
struct InboundCodec: Sendable {
    /// The base topic's text.
    let base: String
    /// Home Assistant's status topic (`homeassistant/status`) when discovery is on.
    let homeAssistantStatus: String?

    func decode(_ message: Message) -> Inbound {
        let topic = message.topic.string
        guard topic.utf8.count > base.utf8.count, topic.hasPrefix(base), topic.utf8[topic.utf8.index(topic.utf8.startIndex, offsetBy: base.utf8.count)] == UInt8(ascii: "/") else {
            if topic == homeAssistantStatus, message.payload == Array("online".utf8) { return .homeAssistantOnline }
            return .foreign
        }
        var levels = Self.levels(of: topic, after: base.utf8.count + 1)
        if levels[0] == Level.sync.rawValue {
            return levels.count == 2 ? .syncMarker(String(levels[1])) : .state
        }
        if levels[0] == Level.request.rawValue {
            guard levels.count >= 2 else { return .state }
            let body = JSON.body(message.payload)
            let rest = levels.dropFirst()
            return .request(Inbound.Request(object: String(rest.first ?? ""), verb: rest.count == 2 ? String(rest.last ?? "") : "",
                                            path: rest.joined(separator: "/"), body: body))
        }
        if levels.count >= 2, TopicGrammar.shortcuts.contains(where: { levels[1] == $0.rawValue }) {
            guard let verb = levels.last, verb == Verb.execute.rawValue || verb == Verb.set.rawValue else { return .state }
            return .shortcut(Inbound.Shortcut(home: levels[0], target: shortcutTarget(levels), body: Inbound.Body(message.payload)))
        }
        let verb: Inbound.Verb
        switch levels.last {
        case Verb.set.rawValue?: verb = .set
        case Verb.get.rawValue?: verb = .get
        default: return .state
        }
        levels.removeLast() // the path is what comes before the verb
        return .command(Inbound.Command(verb: verb, path: levels, body: Inbound.Body(message.payload)))
    }

    /// The levels of `topic` after its first `offset` bytes, empty ones kept, made in one array
    /// (every message arrives through here).
    static func levels(of topic: String, after offset: Int) -> [Substring] {
        let utf8 = topic.utf8
        var levels: [Substring] = []
        levels.reserveCapacity(8)
        var start = utf8.index(utf8.startIndex, offsetBy: offset)
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                levels.append(Substring(utf8[start..<index]))
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        levels.append(Substring(utf8[start..<utf8.endIndex]))
        return levels
    }

    private typealias Level = TopicGrammar.Level
    private typealias Verb = TopicGrammar.Verb

    private func shortcutTarget(_ levels: [Substring]) -> Inbound.Shortcut.Target {
        let kind = Level(rawValue: String(levels[1]))
        let verb = levels.last.flatMap { Verb(rawValue: String($0)) }
        switch (kind, levels.count, verb) {
        case (.actionSets?, 4, .execute?): return .actionSet(name: levels[2])
        case (.groups?, 5, .set?): return .group(name: levels[2], characteristic: String(levels[3]))
        case (.zones?, 6, .set?): return .zone(name: levels[2], serviceType: String(levels[3]), characteristic: String(levels[4]))
        default: return .malformed(path: levels.joined(separator: "/"))
        }
    }
}

extension JSON {
    /// A command's or request's body: the payload as a JSON object, if it is one.
    static func body(_ payload: [UInt8]) -> [String: JSON]? {
        guard let first = payload.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }), first == UInt8(ascii: "{") else { return nil }
        return (try? JSON.parse(payload))?.object
    }

    /// Whether this is a scalar (an `id` or `transaction` to echo).
    var isScalar: Bool {
        switch self {
        case .array, .object, .null: false
        default: true
        }
    }
}

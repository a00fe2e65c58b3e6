import ArgumentParser
import Gateway
import HomeGateConfig
import HomeModel
import Wire

/// `homegate topics --config FILE`: prints the topic tree the configuration gives, without a broker.
struct TopicsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Print the topics the configuration's homes give, with each characteristic's format, permissions and value."
    )

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    @Flag(name: .long, help: "One JSON object per characteristic (a line each): its topic, where it is, its $meta and its value with its label.")
    var json = false

    @Argument(help: "Only characteristics whose topic, accessory name or type contains this (case, spaces, - and _ ignored).")
    var filter: String?

    func run() throws {
        let file = try loadConfigFileOrExit(config)
        let lines = json ? TopicListing.jsonLines(base: file.baseTopic.string, homes: file.homes, filter: filter)
                         : TopicListing.lines(base: file.baseTopic.string, homes: file.homes, filter: filter)
        for line in lines { print(line) }
    }
}

/// The topic tree as text: the gateway's own topics, then each accessory's `$meta` and
/// `$reachable` and its characteristics' value topics (`format perms = value`).
enum TopicListing {
    /// Whether a characteristic's topic, its accessory's name or its type contains `filter`
    /// (canonically: case, diacritics, spaces, `-` and `_` ignored).
    static func matches(_ filter: String?, topic: String, accessory: Accessory, characteristic: Characteristic) -> Bool {
        guard let filter else { return true }
        let key = Slug.canonical(filter)
        return [topic, accessory.name, characteristic.type].contains { Slug.canonical($0).contains(key) }
    }

    /// One JSON object per characteristic: `topic`, `home`, `room`, `accessory`, `service`, the
    /// `$meta` members, and `value` and `label` when it has them.
    static func jsonLines(base: String, homes: [Home], filter: String?) -> [String] {
        let map = TopicMap(base: base, homes: homes)
        var lines: [String] = []
        for home in homes {
            for accessory in home.accessories {
                for service in accessory.visibleServices {
                    for characteristic in service.characteristics {
                        let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                        guard let topic = map.topic(of: .characteristic(home.id, reference)),
                              matches(filter, topic: topic, accessory: accessory, characteristic: characteristic) else { continue }
                        var object = LayoutDocument.characteristicMetaFields(characteristic)
                        object["topic"] = .string(topic)
                        object["home"] = .string(home.name)
                        object["room"] = .string(home.room(of: accessory).name)
                        object["accessory"] = .string(accessory.name)
                        object["service"] = .string(service.name)
                        if let value = characteristic.value {
                            object["value"] = value.json
                            if let label = ValueLabels.of(characteristic)?.label(of: value) { object["label"] = .string(label) }
                        }
                        lines.append(JSON.object(object).text)
                    }
                }
            }
        }
        return lines
    }

    static func lines(base: String, homes: [Home], filter: String? = nil) -> [String] {
        let map = TopicMap(base: base, homes: homes)
        var lines = filter == nil ? [TopicGrammar.topic(base, .state), TopicGrammar.topic(base, .layout), TopicGrammar.topic(base, .events)] : []
        for home in homes {
            guard let homeTopic = map.topic(of: .home(home.id)) else { continue }
            var homeLines: [String] = []
            for room in home.allRooms {
                let accessories = home.accessories(in: room.id)
                guard !accessories.isEmpty, let roomTopic = map.topic(of: .room(home.id, room.id)) else { continue }
                let roomLines = accessories.sorted(by: { ($0.name, $0.id) < ($1.name, $1.id) }).flatMap {
                    accessoryLines($0, home: home.id, map: map, filter: filter)
                }
                // With a filter, only rooms (and homes) with a match are shown.
                if !roomLines.isEmpty { homeLines += ["# \(room.name): \(roomTopic)"] + roomLines }
            }
            guard filter == nil || !homeLines.isEmpty else { continue }
            lines += ["", "# \(home.name)\(home.isPrimary ? " (primary)" : ""): \(homeTopic)"] + homeLines
        }
        return lines
    }

    private static func accessoryLines(_ accessory: Accessory, home: HomeID, map: TopicMap, filter: String?) -> [String] {
        guard let topic = map.topic(of: .accessory(home, accessory.id)) else { return [] }
        var lines = filter == nil ? ["\(topic)/$meta", "\(topic)/$reachable"] : []
        for service in accessory.visibleServices {
            for characteristic in service.characteristics {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let characteristicTopic = map.topic(of: .characteristic(home, reference)),
                      matches(filter, topic: characteristicTopic, accessory: accessory, characteristic: characteristic) else { continue }
                lines.append("\(characteristicTopic)  \(describe(characteristic))")
            }
        }
        return lines
    }

    /// `uint8 [pr pw ev] = 1 (secured)  0...1 step 1  values: 0 unsecured, 1 secured`.
    static func describe(_ characteristic: Characteristic) -> String {
        let perms = characteristic.perms.map(\.rawValue).joined(separator: " ")
        let labels = ValueLabels.of(characteristic)
        var text = "\(characteristic.format.rawValue) [\(perms)]"
        if let value = characteristic.value {
            text += " = \(value.jsonText)" + (labels?.label(of: value).map { " (\($0))" } ?? "")
        }
        if let minimum = characteristic.minValue, let maximum = characteristic.maxValue {
            text += "  \(Value.format(minimum))...\(Value.format(maximum))" + (characteristic.minStep.map { " step \(Value.format($0))" } ?? "")
        }
        if let unit = characteristic.unit { text += " \(unit)" }
        if let labels { text += "  values: " + labels.entries.map { "\(Value.format($0.value)) \($0.label)" }.joined(separator: ", ") }
        return text
    }
}

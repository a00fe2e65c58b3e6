import ArgumentParser
import HomeGateConfig
import HomeModel

/// `homegate topics --config FILE`: prints the topic tree the configuration gives, without a broker.
struct TopicsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Print the topics the configuration's homes give, with each characteristic's format, permissions and value."
    )

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    func run() throws {
        let file = try loadConfigFileOrExit(config)
        for line in TopicListing.lines(base: file.baseTopic.string, homes: file.homes) {
            print(line)
        }
    }
}

/// The topic tree as text: the gateway's own topics, then each accessory's `$meta` and
/// `$reachable` and its characteristics' value topics (`format perms = value`).
enum TopicListing {
    static func lines(base: String, homes: [Home]) -> [String] {
        let map = TopicMap(base: base, homes: homes)
        var lines = ["\(base)/$state", "\(base)/$layout", "\(base)/$events"]
        for home in homes {
            guard let homeTopic = map.topic(of: .home(home.id)) else { continue }
            lines.append("")
            lines.append("# \(home.name)\(home.isPrimary ? " (primary)" : ""): \(homeTopic)")
            for room in home.allRooms {
                let accessories = home.accessories(in: room.id)
                guard !accessories.isEmpty, let roomTopic = map.topic(of: .room(home.id, room.id)) else { continue }
                lines.append("# \(room.name): \(roomTopic)")
                for accessory in accessories.sorted(by: { ($0.name, $0.id) < ($1.name, $1.id) }) {
                    lines += accessoryLines(accessory, home: home.id, map: map)
                }
            }
        }
        return lines
    }

    private static func accessoryLines(_ accessory: Accessory, home: HomeID, map: TopicMap) -> [String] {
        guard let topic = map.topic(of: .accessory(home, accessory.id)) else { return [] }
        var lines = ["\(topic)/$meta", "\(topic)/$reachable"]
        for service in accessory.visibleServices {
            for characteristic in service.characteristics {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let characteristicTopic = map.topic(of: .characteristic(home, reference)) else { continue }
                let perms = characteristic.perms.map(\.rawValue).joined(separator: " ")
                let value = characteristic.value.map { " = \($0.jsonText)" } ?? ""
                lines.append("\(characteristicTopic)  \(characteristic.format.rawValue) [\(perms)]\(value)")
            }
        }
        return lines
    }
}

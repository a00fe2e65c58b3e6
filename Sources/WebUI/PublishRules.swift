import HomeGateConfig
import MQTT
import Wire

/// Where the page may publish for a role: a guest exactly where the broker's ACL lets a guest
/// write (``UsersFile/guestWriteFilters()``, docs/roles.md); an admin also every other command
/// under the base: a `/set`, `/get` or `/execute` topic and every `$request/<object>/<verb>`.
/// Never a value, a retained message or anything outside the base.
struct PublishRules: Sendable {
    let baseTopic: String
    private let guestFilters: [TopicFilter]
    private let requestFilter: TopicFilter

    init(baseTopic: String) {
        self.baseTopic = baseTopic
        let users = UsersFile(baseTopic: baseTopic, gatewayUser: "homegate", users: [])
        // Built from a checked base topic: every filter is valid.
        guestFilters = users.guestWriteFilters().map { try! TopicFilter($0) } // swiftlint:disable:this force_try
        requestFilter = try! TopicFilter("\(baseTopic)/\(TopicGrammar.Level.request.rawValue)/+/+") // swiftlint:disable:this force_try
    }

    /// Why `role` may not publish on `topic`, in words; nil if it may.
    func problem(publishing topic: TopicName, as role: UsersFile.Role) -> String? {
        guard topic.string.hasPrefix(baseTopic + "/") else {
            return "the page publishes only under \(baseTopic)/"
        }
        if guestFilters.contains(where: { $0.matches(topic) }) { return nil }
        switch role {
        case .guest:
            return "a guest may set and get characteristics, identify accessories and execute action sets, not publish on \(topic)"
        case .admin:
            if requestFilter.matches(topic) { return nil }
            let last = topic.string.split(separator: "/").last.map(String.init) ?? ""
            if TopicGrammar.Verb(rawValue: last) != nil { return nil }
            return "the page publishes commands only: a .../set, .../get or .../execute topic, or \(baseTopic)/$request/<object>/<verb>"
        }
    }
}

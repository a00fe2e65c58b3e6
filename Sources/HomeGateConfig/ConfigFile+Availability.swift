import Accessories
import HomeModel

extension ConfigFile {
    /// The `availability:` section: `ip`, `thread`, `battery` (seconds) and `accessories` (a
    /// mapping of accessory ids to seconds), docs/configuration.md#availability.
    /// `threadKeepAlive` is `hap.thread_keep_alive` when given (the older form of `thread`): both
    /// at once are refused.
    static func availability(_ node: ConfigNode?, threadKeepAlive: (Duration, ConfigNode?)?) throws(ConfigError) -> Availability {
        var settings = Availability()
        if let (interval, hapNode) = threadKeepAlive {
            settings.thread = interval + Availability.threadAnswer
            if let node, (try? node.mapping(allowed: ["ip", "thread", "battery", "accessories"]))?["thread"] != nil {
                throw (hapNode ?? node).error("hap.thread_keep_alive and availability.thread say the same thing; keep availability.thread")
            }
        }
        guard let node else { return settings }
        let keys = try node.mapping(allowed: ["ip", "thread", "battery", "accessories"])
        if let ip = keys["ip"] { settings.ip = try ip.seconds(in: Availability.range) }
        if let thread = keys["thread"] { settings.thread = try thread.seconds(in: Availability.range) }
        if let battery = keys["battery"] { settings.battery = try battery.seconds(in: Availability.range) }
        if let accessories = keys["accessories"] {
            for (id, value) in try accessories.namedEntries() {
                settings.accessories[AccessoryID(id)] = try value.seconds(in: Availability.range)
            }
        }
        return settings
    }
}

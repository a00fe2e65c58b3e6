extension ConfigFile {
    /// The `history:` section: each characteristic's values over time, kept in the store
    /// (docs/configuration.md#history).
    public struct History: Sendable, Equatable {
        /// Whether values are recorded and served (`enabled`, default true). Off: nothing is
        /// recorded, `$request/history/get` answers `history-off`, and the history kept so far is
        /// deleted when the gateway starts.
        public var enabled = true
        /// How many days points are kept (`days`, default 7).
        public var days = 7
        /// The most points kept per characteristic (`max_points`, default 10,000); the oldest go first.
        public var maxPoints = 10_000

        /// The allowed `days` and `max_points`.
        public static let dayRange = 1...3_650
        public static let maxPointsRange = 10...1_000_000

        public init() {}
    }

    /// The `history:` section: `enabled`, `days`, `max_points`.
    static func history(_ node: ConfigNode) throws(ConfigError) -> History {
        let keys = try node.mapping(allowed: ["enabled", "days", "max_points"])
        var settings = History()
        if let enabled = keys["enabled"] { settings.enabled = try enabled.bool() }
        if let days = keys["days"] {
            if (try? days.int(in: 0...0)) == 0 { throw days.error("must be at least 1 day; to keep no history, write enabled: false") }
            settings.days = try days.int(in: History.dayRange, unit: "days")
        }
        if let points = keys["max_points"] { settings.maxPoints = try points.int(in: History.maxPointsRange, unit: "points") }
        return settings
    }
}

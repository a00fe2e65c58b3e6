import HomeModel

extension ConfigFile {
    /// The `options:` section: `defaults` (every accessory's options) and `accessories` (options
    /// per accessory id), each read by ``AccessoryOptions/init(reading:)``;
    /// docs/configuration.md#options-per-accessory.
    static func options(_ node: ConfigNode) throws(ConfigError) -> OptionsTable {
        let keys = try node.mapping(allowed: ["defaults", "accessories"])
        var table = OptionsTable()
        if let defaults = keys["defaults"] { table.defaults = try AccessoryOptions(reading: defaults) }
        for (id, entry) in try keys["accessories"]?.namedEntries() ?? [] {
            table.accessories[AccessoryID(id)] = try AccessoryOptions(reading: entry)
        }
        return table
    }
}

/// A node of the configuration as a source of options: the same keys and rules as a request's
/// JSON, with the configuration's errors (file, line, key path).
extension ConfigNode: OptionsSource {
    public func entries(allowed: [String]) throws(ConfigError) -> [String: ConfigNode] { try mapping(allowed: allowed) }
    public func items() throws(ConfigError) -> [ConfigNode] { try sequence() }
    public func boolean() throws(ConfigError) -> Bool { try bool() }
    public func wholeNumber(in range: ClosedRange<Int>, unit: String) throws(ConfigError) -> Int { try int(in: range, unit: unit) }
    public func text() throws(ConfigError) -> String { try string() }
    public var isNull: Bool { isPlainNull }
    public func failure(_ problem: String) -> ConfigError { error(problem) }
}

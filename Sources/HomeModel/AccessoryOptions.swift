import Wire

/// How a characteristic's values go to the broker, as a person set it (docs/configuration.md,
/// "Options per accessory"): every field nil means "not said here", so one layer can lie over
/// another (the configuration's defaults, the accessory's entry, what `$request/accessory/options`
/// stored).
public struct PublishOptions: Hashable, Sendable {
    /// Whether its value topics are retained.
    public var retain: Bool?
    /// The QoS its value topics are published with (0, 1 or 2).
    public var qos: Int?
    /// A burst of changes less than this apart publishes only the last value.
    public var debounce: Duration?
    /// At most one publish per this interval; the last value is always published in the end.
    public var throttle: Duration?
    /// Home Assistant: the entity's name and device class, or no entity.
    public var homeAssistant: HomeAssistantOverride?

    public init(retain: Bool? = nil, qos: Int? = nil, debounce: Duration? = nil, throttle: Duration? = nil,
                homeAssistant: HomeAssistantOverride? = nil) {
        self.retain = retain
        self.qos = qos
        self.debounce = debounce
        self.throttle = throttle
        self.homeAssistant = homeAssistant
    }

    /// Nothing said.
    public var isEmpty: Bool { self == PublishOptions() }

    /// These options with every field `other` says taking its place.
    public func overlaid(by other: PublishOptions) -> PublishOptions {
        PublishOptions(retain: other.retain ?? retain, qos: other.qos ?? qos, debounce: other.debounce ?? debounce,
                       throttle: other.throttle ?? throttle, homeAssistant: other.homeAssistant ?? homeAssistant)
    }
}

/// What Home Assistant is told of an entity (or, on an accessory, of its device).
public enum HomeAssistantOverride: Hashable, Sendable {
    /// No entity (on an accessory: no device, no discovery config at all).
    case none
    /// The entity's (the device's) name and the entity's device class, where given.
    case entity(name: String?, deviceClass: String?)
}

/// The options of one accessory: those of its values (``publish``), per service or
/// characteristic (``characteristics``, by path), which characteristics are not published at all,
/// and whether it is disabled (kept paired and followed, nothing published or discovered).
public struct AccessoryOptions: Hashable, Sendable {
    /// Kept paired and followed (history, the page), nothing published or discovered.
    public var disabled: Bool?
    /// Characteristics (or whole services) not published at all, by path.
    public var exclude: [String]?
    /// The options of all its values; `homeAssistant` here is about the device.
    public var publish: PublishOptions
    /// Options of one service or characteristic, by path: `<service>/<characteristic>` as the
    /// topics spell it below the accessory, `<service>`, or a characteristic's last segment alone
    /// (every characteristic of that name).
    public var characteristics: [String: PublishOptions]

    public init(disabled: Bool? = nil, exclude: [String]? = nil, publish: PublishOptions = PublishOptions(),
                characteristics: [String: PublishOptions] = [:]) {
        self.disabled = disabled
        self.exclude = exclude
        self.publish = publish
        self.characteristics = characteristics
    }

    /// Nothing said.
    public var isEmpty: Bool { self == AccessoryOptions() }

    /// These options with everything `other` says taking its place (each path's options field by
    /// field; `exclude` as a whole).
    public func overlaid(by other: AccessoryOptions) -> AccessoryOptions {
        var merged = AccessoryOptions(disabled: other.disabled ?? disabled, exclude: other.exclude ?? exclude,
                                      publish: publish.overlaid(by: other.publish), characteristics: characteristics)
        for (path, options) in other.characteristics {
            merged.characteristics[path] = (characteristics[path] ?? PublishOptions()).overlaid(by: options)
        }
        return merged
    }

    /// The longest debounce or throttle (`options:` accepts up to a day).
    public static let intervalRange: ClosedRange<Int> = 0...86_400_000
}

/// The `options:` section of the configuration: defaults for every accessory and entries per
/// accessory id.
public struct OptionsTable: Hashable, Sendable {
    /// What every accessory gets unless its own entry says otherwise.
    public var defaults: AccessoryOptions
    /// Per accessory id.
    public var accessories: [AccessoryID: AccessoryOptions]

    public init(defaults: AccessoryOptions = AccessoryOptions(), accessories: [AccessoryID: AccessoryOptions] = [:]) {
        self.defaults = defaults
        self.accessories = accessories
    }

    /// No options anywhere.
    public var isEmpty: Bool { defaults.isEmpty && accessories.values.allSatisfy(\.isEmpty) }

    /// An accessory's options from this table (its entry over the defaults).
    public func options(of id: AccessoryID) -> AccessoryOptions {
        accessories[id].map(defaults.overlaid(by:)) ?? defaults
    }
}

// MARK: Reading

/// Something options can be read from: a node of the YAML configuration or a JSON value (a
/// request's body, the store). One reader (``AccessoryOptions/init(reading:)``) serves both, so
/// the keys and their rules are written once.
public protocol OptionsSource {
    associatedtype Failure: Error
    /// The entries of a mapping, refusing keys other than `allowed`.
    func entries(allowed: [String]) throws(Failure) -> [String: Self]
    /// The entries of a mapping under keys of the person's choosing, in order.
    func namedEntries() throws(Failure) -> [(key: String, node: Self)]
    /// The items of a list.
    func items() throws(Failure) -> [Self]
    func boolean() throws(Failure) -> Bool
    func wholeNumber(in range: ClosedRange<Int>, unit: String) throws(Failure) -> Int
    func text() throws(Failure) -> String
    /// Whether the value is null (`homeassistant: null`: no entity).
    var isNull: Bool { get }
    /// An error about this value.
    func failure(_ problem: String) -> Failure
}

extension AccessoryOptions {
    /// The keys of an accessory's options.
    public static let keys = ["disabled", "exclude", "characteristics"] + PublishOptions.keys

    /// Reads an accessory's options; every key is checked (an unknown key, a wrong type, a value
    /// out of range is refused, naming the key).
    public init<Source: OptionsSource>(reading source: Source) throws(Source.Failure) {
        let entries = try source.entries(allowed: Self.keys)
        self.init(publish: try PublishOptions(entries, isAccessory: true))
        disabled = try entries["disabled"].map { node throws(Source.Failure) in try node.boolean() }
        if let exclude = entries["exclude"] {
            self.exclude = try exclude.items().map { node throws(Source.Failure) in try Self.path(node) }
        }
        for (path, node) in try entries["characteristics"]?.namedEntries() ?? [] {
            _ = try Self.path(node, text: path)
            characteristics[path] = try PublishOptions(node.entries(allowed: PublishOptions.keys), isAccessory: false)
        }
    }

    /// A path: one or two segments, none empty.
    private static func path<Source: OptionsSource>(_ node: Source, text: String? = nil) throws(Source.Failure) -> String {
        let path: String
        if let text { path = text } else { path = try node.text() }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(segments.count), !segments.contains(where: \.isEmpty) else {
            throw node.failure("\"\(path)\" is not a path below the accessory: \"<service>/<characteristic>\", \"<service>\" or \"<characteristic>\"")
        }
        return path
    }
}

extension PublishOptions {
    /// The keys of a value's options.
    public static let keys = ["retain", "qos", "debounce", "throttle", "homeassistant"]

    init<Source: OptionsSource>(_ entries: [String: Source], isAccessory: Bool) throws(Source.Failure) {
        self.init()
        retain = try entries["retain"].map { node throws(Source.Failure) in try node.boolean() }
        qos = try entries["qos"].map { node throws(Source.Failure) in try node.wholeNumber(in: 0...2, unit: "") }
        debounce = try entries["debounce"].map { node throws(Source.Failure) in
            .milliseconds(try node.wholeNumber(in: AccessoryOptions.intervalRange, unit: "milliseconds"))
        }
        throttle = try entries["throttle"].map { node throws(Source.Failure) in
            .milliseconds(try node.wholeNumber(in: AccessoryOptions.intervalRange, unit: "milliseconds"))
        }
        if let node = entries["homeassistant"] { homeAssistant = try HomeAssistantOverride(node, isAccessory: isAccessory) }
    }
}

extension HomeAssistantOverride {
    init<Source: OptionsSource>(_ node: Source, isAccessory: Bool) throws(Source.Failure) {
        if node.isNull {
            self = .none
            return
        }
        // An accessory's override names its device; a device has no device class.
        let entries = try node.entries(allowed: isAccessory ? ["name"] : ["name", "device_class"])
        let name = try entries["name"].map { node throws(Source.Failure) in try node.text() }
        let deviceClass = try entries["device_class"].map { node throws(Source.Failure) in try node.text() }
        if let name, name.isEmpty { throw node.failure("the name must not be empty") }
        self = .entity(name: name, deviceClass: deviceClass)
    }
}

// MARK: JSON

extension AccessoryOptions {
    /// The options as JSON, in the keys they are read with (nothing said: `{}`).
    public var json: JSON {
        var object = publish.jsonFields
        if let disabled { object["disabled"] = .bool(disabled) }
        if let exclude { object["exclude"] = .array(exclude.map(JSON.string)) }
        if !characteristics.isEmpty { object["characteristics"] = .object(characteristics.mapValues { .object($0.jsonFields) }) }
        return .object(object)
    }
}

extension PublishOptions {
    var jsonFields: [String: JSON] {
        var object: [String: JSON] = [:]
        if let retain { object["retain"] = .bool(retain) }
        if let qos { object["qos"] = .int(Int64(qos)) }
        if let debounce { object["debounce"] = .int(Self.milliseconds(debounce)) }
        if let throttle { object["throttle"] = .int(Self.milliseconds(throttle)) }
        switch homeAssistant {
        case nil: break
        case .none?: object["homeassistant"] = .null
        case .entity(let name, let deviceClass)?:
            var entity: [String: JSON] = [:]
            if let name { entity["name"] = .string(name) }
            if let deviceClass { entity["device_class"] = .string(deviceClass) }
            object["homeassistant"] = .object(entity)
        }
        return object
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

/// A JSON value as a source of options, with the key path that names it in errors
/// (`options.characteristics.battery.qos`).
public struct JSONOptionsSource: OptionsSource {
    /// Why options in JSON were refused: the key and the problem.
    public struct Failure: Error, Hashable, CustomStringConvertible {
        public let keyPath: String
        public let problem: String
        public var description: String { keyPath.isEmpty ? problem : "\(keyPath): \(problem)" }
    }

    let value: JSON
    let keyPath: String

    public init(_ value: JSON, keyPath: String) {
        self.value = value
        self.keyPath = keyPath
    }

    private func child(_ value: JSON, _ key: String) -> JSONOptionsSource {
        JSONOptionsSource(value, keyPath: keyPath.isEmpty ? key : "\(keyPath).\(key)")
    }

    public func entries(allowed: [String]) throws(Failure) -> [String: JSONOptionsSource] {
        guard let object = value.object else { throw failure("expected an object (keys: \(allowed.joined(separator: ", ")))") }
        var entries: [String: JSONOptionsSource] = [:]
        for (key, item) in object {
            guard allowed.contains(key) else {
                throw child(item, key).failure("unknown key (known here: \(allowed.joined(separator: ", ")))")
            }
            entries[key] = child(item, key)
        }
        return entries
    }

    public func namedEntries() throws(Failure) -> [(key: String, node: JSONOptionsSource)] {
        guard let object = value.object else { throw failure("expected an object") }
        return object.sorted { $0.key < $1.key }.map { ($0.key, child($0.value, $0.key)) }
    }

    public func items() throws(Failure) -> [JSONOptionsSource] {
        guard let array = value.array else { throw failure("expected a list") }
        return array.enumerated().map { index, item in JSONOptionsSource(item, keyPath: "\(keyPath)[\(index)]") }
    }

    public func boolean() throws(Failure) -> Bool {
        guard case .bool(let flag) = value else { throw failure("expected true or false") }
        return flag
    }

    public func wholeNumber(in range: ClosedRange<Int>, unit: String) throws(Failure) -> Int {
        guard let number = value.int, let whole = Int(exactly: number) else { throw failure("expected a whole number\(unit.isEmpty ? "" : " of \(unit)")") }
        guard range.contains(whole) else { throw failure("must be within \(range.lowerBound)...\(range.upperBound), got \(whole)") }
        return whole
    }

    public func text() throws(Failure) -> String {
        guard let text = value.string else { throw failure("expected a text") }
        return text
    }

    public var isNull: Bool { value == .null }

    public func failure(_ problem: String) -> Failure { Failure(keyPath: keyPath, problem: problem) }
}

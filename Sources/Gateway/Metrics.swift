import Wire
/// The gateway's counters, for Prometheus: commands received, acknowledgements sent by HAP status,
/// how long acknowledgements took, MQTT reconnects. The engine keeps one and records into it;
/// ``exposition(reachable:accessories:queueDepth:connected:)`` writes it out in the Prometheus
/// text format 0.0.4, with the gauges the caller reads at that moment.
public struct Metrics: Sendable, Equatable {
    /// The upper bounds, in seconds, of the acknowledgement-time histogram's buckets (each
    /// inclusive, as Prometheus's `le`); a last `+Inf` bucket holds everything.
    public static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// The `Content-Type` of ``exposition(reachable:accessories:queueDepth:connected:)``.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Commands received, by kind (`set`, `get`); both kinds are present from the start.
    public private(set) var commands: [String: Int] = ["set": 0, "get": 0]
    /// Acknowledgements sent, by HAP status code (0 for success, present from the start).
    public private(set) var acknowledgements: [Int: Int] = [0: 0]
    /// Acknowledgements per bucket of ``latencyBuckets`` (not cumulative), then those above the
    /// last bound.
    private var bucketCounts = [Int](repeating: 0, count: Metrics.latencyBuckets.count + 1)
    /// The acknowledgement times added up, in seconds.
    public private(set) var latencySum: Double = 0
    /// Acknowledgements timed: the histogram's `_count`.
    public private(set) var latencyCount = 0
    /// Times the MQTT connection was made again after it was lost.
    public private(set) var reconnects = 0

    public init() {}

    /// Counts a command received: `kind` is `set` or `get`.
    public mutating func recordCommand(kind: String) {
        commands[kind, default: 0] += 1
    }

    /// Counts an acknowledgement sent with HAP status `status` (0 for success), which took
    /// `seconds` from the command's arrival. A negative time (a clock stepped back) counts as 0;
    /// an infinite time or one that is not a number is counted under its status but not timed.
    public mutating func recordAcknowledgement(status: Int, seconds: Double) {
        acknowledgements[status, default: 0] += 1
        guard seconds.isFinite else { return }
        let seconds = max(0, seconds)
        let bucket = Self.latencyBuckets.firstIndex { seconds <= $0 } ?? Self.latencyBuckets.count
        bucketCounts[bucket] += 1
        latencySum += seconds
        latencyCount += 1
    }

    /// Counts a reconnection to the MQTT broker.
    public mutating func recordReconnect() {
        reconnects += 1
    }

    /// The histogram's buckets as Prometheus has them: each bound (`+Inf` last) with the number
    /// of acknowledgements that took at most that long.
    public var cumulativeBuckets: [(le: String, count: Int)] {
        var total = 0
        return bucketCounts.enumerated().map { index, count in
            total += count
            let bound = index < Self.latencyBuckets.count ? Self.number(Self.latencyBuckets[index]) : "+Inf"
            return (bound, total)
        }
    }

    /// Everything in the Prometheus text format 0.0.4 (``contentType``), with the gauges given:
    /// accessories reachable, accessories in the tree, commands waiting for a device, and whether
    /// the MQTT connection is up. Label values are sorted (kinds by name, statuses by number).
    public func exposition(reachable: Int, accessories: Int, queueDepth: Int, connected: Bool) -> String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ value: String, labels: String = "") {
            text += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(labels)} \(value)\n"
        }

        family("homegate_commands_total", "counter", "Commands received over MQTT, by kind (set or get).")
        for (kind, count) in commands.sorted(by: { $0.key < $1.key }) {
            sample("homegate_commands_total", "\(count)", labels: "kind=\"\(Self.escape(kind))\"")
        }
        family("homegate_acknowledgements_total", "counter", "Acknowledgements of sets and gets sent, by HAP status code (0 for success).")
        for (status, count) in acknowledgements.sorted(by: { $0.key < $1.key }) {
            sample("homegate_acknowledgements_total", "\(count)", labels: "status=\"\(status)\"")
        }
        family("homegate_acknowledgement_seconds", "histogram", "Time from a set or get's arrival to its acknowledgement, in seconds.")
        for (bound, count) in cumulativeBuckets {
            sample("homegate_acknowledgement_seconds_bucket", "\(count)", labels: "le=\"\(bound)\"")
        }
        sample("homegate_acknowledgement_seconds_sum", Self.number(latencySum))
        sample("homegate_acknowledgement_seconds_count", "\(latencyCount)")
        family("homegate_mqtt_reconnects_total", "counter", "Reconnections to the MQTT broker after the connection was lost.")
        sample("homegate_mqtt_reconnects_total", "\(reconnects)")
        family("homegate_mqtt_connected", "gauge", "Whether the gateway is connected to the MQTT broker (1) or not (0).")
        sample("homegate_mqtt_connected", connected ? "1" : "0")
        family("homegate_accessories", "gauge", "Accessories in the home tree.")
        sample("homegate_accessories", "\(accessories)")
        family("homegate_accessories_reachable", "gauge", "Accessories in the home tree that are reachable.")
        sample("homegate_accessories_reachable", "\(reachable)")
        family("homegate_queue_depth", "gauge", "Sets and gets waiting for a device.")
        sample("homegate_queue_depth", "\(queueDepth)")
        return text
    }

    /// A sample value or bound as Prometheus writes one: `1`, `0.0005`, `2.5`, `+Inf`.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// A label value with `\`, `"` and line feeds escaped.
    static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

import CoreMetrics
import HomeModel
import Synchronization
import Timing
import Wire

/// One of the engine's metrics as a backend must know it before its first value: its name, what
/// it counts (Prometheus's `# HELP` line) and, for the timer, its buckets.
///
/// swift-metrics carries neither help texts nor buckets, so the engine publishes them here
/// (``Gateway/metricDescriptions``) and the executable's factory looks them up by name; the
/// engine itself stays on swift-metrics and knows nothing of Prometheus.
public struct MetricDescription: Sendable, Hashable {
    /// The metric's name, as the engine gives it to swift-metrics (`homegate_commands_total`).
    public let name: String
    /// What it counts, in one sentence.
    public let help: String
    /// A timer's histogram buckets; nil for the others.
    public let buckets: [Duration]?

    public init(name: String, help: String, buckets: [Duration]? = nil) {
        self.name = name
        self.help = help
        self.buckets = buckets
    }
}

/// The engine's metrics, through swift-metrics: the executable gives a factory (Prometheus's);
/// tests give their own; the default records nothing. No global state. Every metric made here
/// has its entry in ``Gateway/metricDescriptions``.
///
/// - `homegate_commands_total{kind}`: sets and gets received;
/// - `homegate_acknowledgements_total{status}`: acknowledgements sent, by HAP status in words
///   (``Wire/HAPStatus/name``: `success`, `busy`, `invalid-value`, ...);
/// - `homegate_acknowledgement_seconds`: from a command's arrival to its acknowledgement;
/// - `homegate_mqtt_reconnects_total`, `homegate_mqtt_connected`;
/// - `homegate_accessories`, `homegate_accessories_reachable`, `homegate_queue_depth`;
/// - `homegate_mqtt_messages_sent_total` (the received ones are the MQTT client's own count);
/// - `homegate_accessory_events_total{accessory}`, `homegate_accessory_failed_writes_total{accessory}`,
///   `homegate_accessory_reachability_changes_total{accessory}`: what `$health` reports, from the
///   same happenings (``Gateway/recordHealth(_:)``).
struct EngineMetrics: Sendable {
    /// The acknowledgement-time histogram's buckets: 0.5 ms to 10 s.
    static let latencyBuckets: [Duration] = [500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000]
        .map { Duration.microseconds($0) }

    static let commands = MetricDescription(name: "homegate_commands_total",
                                            help: "Sets and gets received on the base topic's .../set and .../get topics, by kind.")
    static let acknowledgements = MetricDescription(name: "homegate_acknowledgements_total",
                                                    help: "Acknowledgements of sets and gets sent, by HAP status (success, busy, invalid-value, ...).")
    static let acknowledgementTime = MetricDescription(name: "homegate_acknowledgement_seconds",
                                                       help: "Seconds from a set's or get's arrival to its acknowledgement.", buckets: latencyBuckets)
    static let reconnects = MetricDescription(name: "homegate_mqtt_reconnects_total",
                                              help: "Connections to the MQTT broker after the first one of the process.")
    static let connected = MetricDescription(name: "homegate_mqtt_connected", help: "1 while the gateway is connected to the MQTT broker, else 0.")
    static let accessories = MetricDescription(name: "homegate_accessories",
                                               help: "Accessories in the home tree, bridges and bridged accessories included.")
    static let reachable = MetricDescription(name: "homegate_accessories_reachable", help: "Accessories in the home tree that are reachable.")
    static let queueDepth = MetricDescription(name: "homegate_queue_depth",
                                              help: "Sets and gets waiting for a device, over every characteristic (the one being carried out not counted).")

    static let messagesSent = MetricDescription(name: "homegate_mqtt_messages_sent_total", help: "Messages the gateway handed to the MQTT broker.")
    static let accessoryEvents = MetricDescription(name: "homegate_accessory_events_total",
                                                   help: "Values an accessory's device reported by itself (its events), by accessory.")
    static let accessoryFailedWrites = MetricDescription(name: "homegate_accessory_failed_writes_total",
                                                         help: "Writes an accessory's device refused or did not carry out, by accessory.")
    static let accessoryReachabilityChanges = MetricDescription(name: "homegate_accessory_reachability_changes_total",
                                                                help: "Times an accessory became reachable or unreachable, by accessory.")

    private let factory: any MetricsFactory
    private let sent: Counter
    private let sets: Counter
    private let gets: Counter
    private let successes: Counter
    private let latency: Timer
    private let reconnects: Counter
    private let connected: Gauge
    private let accessories: Gauge
    private let reachable: Gauge
    private let queueDepth: Gauge
    /// The per-accessory counters made so far (``accessoryCounter(_:_:)``). In a box of its
    /// own, so that the metrics are a constant of the engine: a call on a variable struct
    /// would copy it (a dozen retains) at every set.
    private let accessoryCounters = AccessoryCounters()

    init(factory: any MetricsFactory) {
        self.factory = factory
        sets = Counter(label: Self.commands.name, dimensions: [("kind", "set")], factory: factory)
        gets = Counter(label: Self.commands.name, dimensions: [("kind", "get")], factory: factory)
        successes = Self.acknowledgementCounter(.success, factory: factory)
        latency = Timer(label: Self.acknowledgementTime.name, dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
        reconnects = Counter(label: Self.reconnects.name, dimensions: [], factory: factory)
        connected = Gauge(label: Self.connected.name, dimensions: [], factory: factory)
        accessories = Gauge(label: Self.accessories.name, dimensions: [], factory: factory)
        reachable = Gauge(label: Self.reachable.name, dimensions: [], factory: factory)
        queueDepth = Gauge(label: Self.queueDepth.name, dimensions: [], factory: factory)
        sent = Counter(label: Self.messagesSent.name, dimensions: [], factory: factory)
        connected.record(0)
        queueDepth.record(0)
    }

    /// The acknowledgement counter of one status, labelled with its word (`status="busy"`).
    private static func acknowledgementCounter(_ status: HAPStatus, factory: any MetricsFactory) -> Counter {
        Counter(label: acknowledgements.name, dimensions: [("status", status.name)], factory: factory)
    }

    func recordCommand(_ verb: Inbound.Verb) {
        (verb == .set ? sets : gets).increment()
    }

    /// An acknowledgement sent with `status`, `duration` after the command arrived.
    func recordAcknowledgement(_ status: HAPStatus, after duration: Duration) {
        if status == .success {
            successes.increment()
        } else {
            Self.acknowledgementCounter(status, factory: factory).increment()
        }
        latency.recordNanoseconds(max(0, duration.wholeNanoseconds))
    }

    func recordConnection(_ isConnected: Bool, reconnect: Bool) {
        connected.record(isConnected ? 1 : 0)
        if reconnect { reconnects.increment() }
    }

    func recordAccessories(_ count: Int, reachable reachableCount: Int) {
        accessories.record(count)
        reachable.record(reachableCount)
    }

    func recordQueueDepth(_ depth: Int) {
        queueDepth.record(depth)
    }

    /// A happening `$health` reports, counted here too.
    func record(_ happening: HealthCounters.Happening) {
        switch happening {
        case .messageSent: sent.increment()
        case .event(let id): accessoryCounter(Self.accessoryEvents, id).increment()
        case .failedWrite(let id, _): accessoryCounter(Self.accessoryFailedWrites, id).increment()
        case .failedRead: break
        case .reachabilityChanged(let id): accessoryCounter(Self.accessoryReachabilityChanges, id).increment()
        }
    }

    /// An accessory's counter of `metric`, made once: making one asks the factory, which
    /// looks its label and dimensions up under a lock, at every event of an event storm.
    private func accessoryCounter(_ metric: MetricDescription, _ id: AccessoryID) -> Counter {
        accessoryCounters.counter(metric.name, id, factory: factory)
    }
}

/// The per-accessory counters made so far, by metric and accessory.
private final class AccessoryCounters: Sendable {
    private struct Key: Hashable {
        let metric: String
        let accessory: AccessoryID
    }

    private let made = Mutex<[Key: Counter]>([:])

    func counter(_ metric: String, _ id: AccessoryID, factory: any MetricsFactory) -> Counter {
        made.withLock { made in
            let key = Key(metric: metric, accessory: id)
            if let counter = made[key] { return counter }
            let counter = Counter(label: metric, dimensions: [("accessory", id.rawValue)], factory: factory)
            made[key] = counter
            return counter
        }
    }
}

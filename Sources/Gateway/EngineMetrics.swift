import CoreMetrics
import Wire

/// The engine's metrics, through swift-metrics: the executable gives a factory (Prometheus's);
/// tests give their own; the default records nothing. No global state.
///
/// - `homegate_commands_total{kind}`: sets and gets received;
/// - `homegate_acknowledgements_total{status}`: acknowledgements sent, by HAP status (0: success);
/// - `homegate_acknowledgement_seconds`: from a command's arrival to its acknowledgement;
/// - `homegate_mqtt_reconnects_total`, `homegate_mqtt_connected`;
/// - `homegate_accessories`, `homegate_accessories_reachable`, `homegate_queue_depth`.
struct EngineMetrics: Sendable {
    /// The acknowledgement-time histogram's buckets: 0.5 ms to 10 s.
    static let latencyBuckets: [Duration] = [500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000]
        .map { Duration.microseconds($0) }

    private let factory: any MetricsFactory
    private let sets: Counter
    private let gets: Counter
    private let successes: Counter
    private let latency: Timer
    private let reconnects: Counter
    private let connected: Gauge
    private let accessories: Gauge
    private let reachable: Gauge
    private let queueDepth: Gauge

    init(factory: any MetricsFactory) {
        self.factory = factory
        sets = Counter(label: "homegate_commands_total", dimensions: [("kind", "set")], factory: factory)
        gets = Counter(label: "homegate_commands_total", dimensions: [("kind", "get")], factory: factory)
        successes = Counter(label: "homegate_acknowledgements_total", dimensions: [("status", "0")], factory: factory)
        latency = Timer(label: "homegate_acknowledgement_seconds", dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
        reconnects = Counter(label: "homegate_mqtt_reconnects_total", dimensions: [], factory: factory)
        connected = Gauge(label: "homegate_mqtt_connected", dimensions: [], factory: factory)
        accessories = Gauge(label: "homegate_accessories", dimensions: [], factory: factory)
        reachable = Gauge(label: "homegate_accessories_reachable", dimensions: [], factory: factory)
        queueDepth = Gauge(label: "homegate_queue_depth", dimensions: [], factory: factory)
        connected.record(0)
        queueDepth.record(0)
    }

    func recordCommand(_ verb: Inbound.Verb) {
        (verb == .set ? sets : gets).increment()
    }

    /// An acknowledgement sent with `status`, `duration` after the command arrived.
    func recordAcknowledgement(_ status: HAPStatus, after duration: Duration) {
        if status == .success {
            successes.increment()
        } else {
            Counter(label: "homegate_acknowledgements_total", dimensions: [("status", String(status.rawValue))], factory: factory).increment()
        }
        latency.recordNanoseconds(max(0, duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000))
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
}

extension Gateway {
    /// The name of the acknowledgement-time histogram and its buckets, for the metrics factory
    /// (Prometheus needs a histogram's buckets when it is made).
    public static let acknowledgementHistogram = (name: "homegate_acknowledgement_seconds", buckets: EngineMetrics.latencyBuckets)
}

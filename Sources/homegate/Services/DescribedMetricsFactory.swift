import CoreMetrics
import Gateway
import Prometheus

/// swift-metrics onto a Prometheus registry, with every metric's `# HELP` line: the engine's
/// metrics are made through swift-metrics (which passes a name and labels only), and this factory
/// gives each the help text, and a timer the buckets, of its ``MetricDescription``.
///
/// It decorates swift-prometheus's ``PrometheusMetricsFactory``, which writes every family without
/// help text: making goes through the registry's descriptor functions instead, destroying and
/// everything else stays the wrapped factory's.
///
/// Why this and not a protocol of the engine's own: the engine keeps the standard metrics API,
/// its unit tests keep injecting any `MetricsFactory` (no Prometheus needed), and
/// `Gateway.Configuration` is unchanged; the two things Prometheus needs that swift-metrics cannot
/// carry, a family's help text and a histogram's buckets, are data the engine publishes next to
/// the metrics it makes, so they cannot drift apart from the names. A metric without a description is still made,
/// without a HELP line (the engine's unit tests check that none is missing; `promtool check
/// metrics` in the end-to-end test would name it).
struct DescribedMetricsFactory: MetricsFactory {
    private let prometheus: PrometheusMetricsFactory
    private let descriptions: [String: MetricDescription]

    init(registry: PrometheusCollectorRegistry, descriptions: [MetricDescription]) {
        prometheus = PrometheusMetricsFactory(registry: registry)
        self.descriptions = Dictionary(descriptions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private var registry: PrometheusCollectorRegistry { prometheus.registry }

    /// The registry's name for `label`, with its help text.
    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: descriptions[label]?.help ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        let buckets = prometheus.valueHistogramBuckets[label] ?? prometheus.defaultValueHistogramBuckets
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = descriptions[label]?.buckets ?? prometheus.defaultDurationHistogramBuckets
        return registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        prometheus.destroyCounter(handler)
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        prometheus.destroyFloatingPointCounter(handler)
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        prometheus.destroyRecorder(handler)
    }

    func destroyMeter(_ handler: any MeterHandler) {
        prometheus.destroyMeter(handler)
    }

    func destroyTimer(_ handler: any TimerHandler) {
        prometheus.destroyTimer(handler)
    }
}

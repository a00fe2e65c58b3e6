import Foundation
@testable import Gateway
import HomeModel
import Metrics
import Prometheus
import Testing
import Wire

/// The engine's metrics through swift-metrics into a Prometheus registry, read back as the
/// exposition `/metrics` serves.
@Suite("Engine metrics")
struct MetricsTests {
    static func factory() -> (PrometheusCollectorRegistry, PrometheusMetricsFactory) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        for description in Gateway.metricDescriptions {
            if let buckets = description.buckets { factory.durationHistogramBuckets[description.name] = buckets }
        }
        return (registry, factory)
    }

    static func lines(_ registry: PrometheusCollectorRegistry) -> [String] {
        registry.emitToString().split(separator: "\n").map(String.init)
    }

    @Test("commands, acknowledgements by status, the latency histogram in seconds, the connection and accessory gauges")
    func exposition() throws {
        let (registry, factory) = Self.factory()
        let metrics = EngineMetrics(factory: factory)
        metrics.recordCommand(.set)
        metrics.recordCommand(.set)
        metrics.recordCommand(.get)
        metrics.recordAcknowledgement(.success, after: .microseconds(700))
        metrics.recordAcknowledgement(.success, after: .milliseconds(3))
        metrics.recordAcknowledgement(.invalidValue, after: .seconds(20))
        metrics.recordConnection(true, reconnect: false)
        metrics.recordConnection(true, reconnect: true)
        metrics.recordAccessories(11, reachable: 10)
        let lines = Self.lines(registry)
        for expected in [
            #"homegate_commands_total{kind="set"} 2"#, #"homegate_commands_total{kind="get"} 1"#,
            #"homegate_acknowledgements_total{status="success"} 2"#, #"homegate_acknowledgements_total{status="invalid-value"} 1"#,
            #"homegate_acknowledgement_seconds_bucket{le="0.0005"} 0"#, #"homegate_acknowledgement_seconds_bucket{le="0.001"} 1"#,
            #"homegate_acknowledgement_seconds_bucket{le="0.005"} 2"#, #"homegate_acknowledgement_seconds_bucket{le="10.0"} 2"#,
            #"homegate_acknowledgement_seconds_bucket{le="+Inf"} 3"#, "homegate_acknowledgement_seconds_count 3",
            "homegate_mqtt_reconnects_total 1", "homegate_mqtt_connected 1.0", "homegate_accessories 11.0",
            "homegate_accessories_reachable 10.0", "homegate_queue_depth 0.0",
        ] {
            #expect(lines.contains(expected), "\(expected) in:\n\(lines.joined(separator: "\n"))")
        }
        let sum = try #require(lines.first { $0.hasPrefix("homegate_acknowledgement_seconds_sum ") })
        #expect(abs((Double(sum.split(separator: " ")[1]) ?? 0) - 20.0037) < 1e-9, "\(sum)")
    }

    @Test("every metric the engine makes has its description (help text, the timer's buckets), and every description a metric")
    func everyMetricDescribed() throws {
        let (registry, factory) = Self.factory()
        let metrics = EngineMetrics(factory: factory)
        metrics.recordCommand(.set)
        metrics.recordAcknowledgement(.busy, after: .milliseconds(1)) // a status's counter is made at its first use
        metrics.recordConnection(true, reconnect: true)
        metrics.recordAccessories(1, reachable: 1)
        metrics.recordQueueDepth(1)
        // What $health reports: the per-accessory counters are made at an accessory's first happening.
        for happening: HealthCounters.Happening in [.messageSent, .event(AccessoryID("a")), .failedWrite(AccessoryID("a"), "refused"),
                                                    .reachabilityChanged(AccessoryID("a"))] {
            metrics.record(happening)
        }
        let families = Set(Self.lines(registry).compactMap { line -> String? in
            guard line.hasPrefix("# TYPE ") else { return nil }
            return line.split(separator: " ").dropFirst(2).first.map(String.init)
        })
        let described = Set(Gateway.metricDescriptions.map(\.name))
        #expect(families == described)
        #expect(Gateway.metricDescriptions.count == described.count, "one description per name")
        for description in Gateway.metricDescriptions {
            #expect(!description.help.isEmpty && !description.help.contains("\n"), "\(description.name): one line of help")
        }
        let timers = Gateway.metricDescriptions.filter { $0.buckets != nil }.map(\.name)
        #expect(timers == ["homegate_acknowledgement_seconds"])
        #expect(Self.lines(registry).contains(#"homegate_acknowledgements_total{status="busy"} 1"#))
    }

    @Test("the engine's default records nothing and needs no registry")
    func noop() {
        let metrics = EngineMetrics(factory: NOOPMetricsHandler.instance)
        metrics.recordCommand(.set)
        metrics.recordAcknowledgement(.busy, after: .seconds(1))
    }
}

import Gateway
import Prometheus

/// `homegate_build_info{version="..."} 1`: which HomeGate serves the metrics (the version
/// `homegate --version` prints), the Prometheus convention for joining a version to other series.
enum BuildInfoMetric {
    static func record(in registry: PrometheusCollectorRegistry) {
        let descriptor = MetricNameDescriptor(namespace: "homegate", metricName: "build", unitName: "info",
                                              helpText: "Always 1; the version label is the HomeGate version serving the metrics.")
        registry.makeGauge(descriptor: descriptor, labels: [("version", Gateway.version)]).set(to: 1)
    }
}

import MQTT
import Prometheus
import Synchronization

/// The broker connection's own figure on `/metrics`, brought up to date at each scrape from
/// ``MQTT/Client/loopStatistics``: `homegate_mqtt_messages_received_total`, the messages the
/// gateway read from the broker. (The engine takes each message on the network thread as it is
/// read, so none ever waits and reading never pauses for it: the client's backlog figures stay 0
/// for this connection and are not shown.)
final class BrokerConnectionMetrics: Sendable {
    private let client: MQTT.Client
    private let received: Counter
    /// The count as last reported, so the counter moves by what happened since.
    private let reported = Mutex(0)

    init(client: MQTT.Client, registry: PrometheusCollectorRegistry) {
        self.client = client
        received = registry.makeCounter(descriptor: .init(namespace: "homegate", subsystem: "mqtt", metricName: "messages_received", unitName: "total",
                                                           helpText: "Messages the gateway read from the MQTT broker."))
    }

    /// Brings the figure up to date (before each scrape).
    func update() {
        let now = client.loopStatistics.received
        reported.withLock { last in
            received.increment(by: Int64(now - last))
            last = now
        }
    }
}

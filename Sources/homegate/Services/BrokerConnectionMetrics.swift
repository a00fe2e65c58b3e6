import MQTT
import Prometheus
import Synchronization

/// The broker connection's own figures on `/metrics`, brought up to date at each scrape from
/// ``MQTT/Client/loopStatistics``:
///
/// - `homegate_mqtt_messages_received_total`: messages read from the broker;
/// - `homegate_mqtt_messages_waiting`: read and not yet taken by the engine;
/// - `homegate_mqtt_read_pauses_total`: how often the network loop stopped reading because the
///   engine was `mqtt.incoming_buffer` messages behind (backpressure: the broker keeps the rest);
/// - `homegate_mqtt_read_paused_seconds_total`: how long reading was stopped, in all.
final class BrokerConnectionMetrics: Sendable {
    private let client: MQTT.Client
    private let received: Counter
    private let waiting: Gauge
    private let pauses: Counter
    private let pausedSeconds: Counter
    /// The figures as last reported, so the counters move by what happened since.
    private let reported = Mutex(LoopStatistics())

    init(client: MQTT.Client, registry: PrometheusCollectorRegistry) {
        self.client = client
        received = registry.makeCounter(descriptor: .init(namespace: "homegate", subsystem: "mqtt", metricName: "messages_received", unitName: "total",
                                                           helpText: "Messages the gateway read from the MQTT broker."))
        waiting = registry.makeGauge(descriptor: .init(namespace: "homegate", subsystem: "mqtt", metricName: "messages", unitName: "waiting",
                                                       helpText: "Messages read from the broker that the engine has not taken yet."))
        pauses = registry.makeCounter(descriptor: .init(namespace: "homegate", subsystem: "mqtt", metricName: "read_pauses", unitName: "total",
                                                        helpText: "Times the gateway stopped reading from the broker because the engine was mqtt.incoming_buffer messages behind."))
        pausedSeconds = registry.makeCounter(descriptor: .init(namespace: "homegate", subsystem: "mqtt", metricName: "read_paused_seconds", unitName: "total",
                                                               helpText: "Seconds the gateway did not read from the broker because the engine was behind (backpressure)."))
    }

    /// Brings the figures up to date (before each scrape).
    func update() {
        let now = client.loopStatistics
        reported.withLock { last in
            received.increment(by: Int64(now.received - last.received))
            pauses.increment(by: Int64(now.pauses - last.pauses))
            let seconds = (now.pausedTime - last.pausedTime) / .seconds(1)
            if seconds > 0 { pausedSeconds.increment(by: seconds) }
            last = now
        }
        waiting.set(to: Double(now.waiting))
    }
}

import Foundation
import HomeModel
import Timing
import Wire

/// `<base>/$health`, as zigbee2mqtt's `bridge/health`: every ``Configuration/healthInterval``
/// (default ten minutes), retained, how the gateway is doing: its uptime, memory and CPU time,
/// the MQTT session, and per accessory the events per minute, failed writes, reachability
/// changes and last error (docs/mqtt-api.md, "Health"). The figures are those `/metrics` serves,
/// from the same counters.
extension Gateway {
    /// Records a happening for `$health` and the metrics at once.
    func recordHealth(_ happening: HealthCounters.Happening) {
        health.record(happening)
        metrics.record(happening)
    }

    /// Publishes `$health` every interval, the first one interval after the start
    /// (``HealthCounters/report(of:now:time:mqtt:process:)``, which starts the next period of
    /// the events per minute).
    func publishHealthPeriodically() async throws {
        while true {
            try await Task.sleep(for: configuration.healthInterval)
            let mqtt: [String: JSON] = [
                "connected": .bool(connected), "messagesReceived": .int(Int64(bus.messagesReceived)),
                "messagesSent": .int(Int64(health.messagesSent)), "reconnects": .int(Int64(max(0, connections - 1))),
                "commandsWaiting": .int(Int64(machine.waitingCount)),
            ]
            let report = health.report(of: tree.homes, now: .now, time: configuration.now(), mqtt: mqtt, process: configuration.processFigures())
            send(TopicGrammar.topic(base, .health), report.encoded(), retain: true)
        }
    }
}

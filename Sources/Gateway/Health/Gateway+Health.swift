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

    /// Publishes `$health` every interval, the first one interval after the start.
    func publishHealthPeriodically() async throws {
        while true {
            try await Task.sleep(for: configuration.healthInterval)
            send(TopicGrammar.topic(base, .health), healthReport(now: .now).encoded(), retain: true)
        }
    }

    /// The health message; starts the next period of the events per minute.
    func healthReport(now: ContinuousClock.Instant) -> JSON {
        let rates = health.eventsPerMinute(now: now)
        var accessories: [String: JSON] = [:]
        for home in tree.homes {
            for accessory in home.accessories {
                let counts = health.accessories[accessory.id] ?? HealthCounters.Accessory()
                var entry: [String: JSON] = [
                    "name": .string(accessory.name), "reachable": .bool(accessory.isReachable),
                    "eventsPerMinute": .double(((rates[accessory.id] ?? 0) * 100).rounded() / 100), "events": .int(Int64(counts.events)),
                    "failedWrites": .int(Int64(counts.failedWrites)), "reachabilityChanges": .int(Int64(counts.reachabilityChanges)),
                ]
                if let error = counts.lastError { entry["lastError"] = .string(error) }
                accessories[accessory.id.rawValue] = .object(entry)
            }
        }
        let mqtt: [String: JSON] = [
            "connected": .bool(connected), "messagesReceived": .int(Int64(bus.messagesReceived)),
            "messagesSent": .int(Int64(health.messagesSent)), "reconnects": .int(Int64(max(0, connections - 1))),
            "commandsWaiting": .int(Int64(machine.waitingCount)),
        ]
        var body: [String: JSON] = ["time": .string(ISODate.text(configuration.now())), "mqtt": .object(mqtt),
                                    "accessories": .object(accessories)]
        let process = configuration.processFigures()
        if let uptime = process.uptimeSeconds { body["uptimeSeconds"] = .double((uptime * 10).rounded() / 10) }
        if let resident = process.residentBytes { body["residentBytes"] = .int(Int64(resident)) }
        if let cpu = process.cpuSeconds { body["cpuSeconds"] = .double((cpu * 100).rounded() / 100) }
        return .object(body)
    }
}

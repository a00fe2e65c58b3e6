import Foundation
import HomeModel
import Timing
import Wire

/// What `$health` reports and `/metrics` counts, kept once: the messages the gateway sent and, per
/// accessory, the events heard from it, the writes it failed, its reachability changes and its
/// last error in words. The engine records each happening here and in its metrics at the same
/// place (``Gateway/recordHealth(_:)``), so the two always agree.
struct HealthCounters: Sendable {
    /// One accessory's counts since the start.
    struct Accessory: Sendable, Equatable {
        var events = 0
        var failedWrites = 0
        var reachabilityChanges = 0
        var lastError: String?
    }

    /// What happened, as the engine records it.
    enum Happening: Sendable {
        case messageSent
        case event(AccessoryID)
        case failedWrite(AccessoryID, String)
        case failedRead(AccessoryID, String)
        case reachabilityChanged(AccessoryID)
    }

    private(set) var messagesSent = 0
    private(set) var accessories: [AccessoryID: Accessory] = [:]
    /// Each accessory's events at the last report, and when it was (for events per minute).
    private var eventsAtLastReport: [AccessoryID: Int] = [:]
    private var lastReport: ContinuousClock.Instant

    init(now: ContinuousClock.Instant = .now) {
        lastReport = now
    }

    mutating func record(_ happening: Happening) {
        switch happening {
        case .messageSent: messagesSent += 1
        case .event(let id): accessories[id, default: Accessory()].events += 1
        case .failedWrite(let id, let message):
            accessories[id, default: Accessory()].failedWrites += 1
            accessories[id, default: Accessory()].lastError = message
        case .failedRead(let id, let message): accessories[id, default: Accessory()].lastError = message
        case .reachabilityChanged(let id): accessories[id, default: Accessory()].reachabilityChanges += 1
        }
    }

    /// Each accessory's events per minute since the last report (the start, for the first), and
    /// starts the next period.
    mutating func eventsPerMinute(now: ContinuousClock.Instant) -> [AccessoryID: Double] {
        let minutes = max(lastReport.duration(to: now).secondsValue / 60, 1.0 / 60)
        var rates: [AccessoryID: Double] = [:]
        for (id, counts) in accessories {
            rates[id] = Double(counts.events - eventsAtLastReport[id, default: 0]) / minutes
        }
        eventsAtLastReport = accessories.mapValues(\.events)
        lastReport = now
        return rates
    }

    /// The `$health` message at `now` (`time` the wall clock's): per accessory of `homes` its
    /// counts, with the MQTT session's figures and the process's; starts the next period of the
    /// events per minute.
    mutating func report(of homes: [Home], now: ContinuousClock.Instant, time: Date, mqtt: [String: JSON], process: ProcessFigures) -> JSON {
        let rates = eventsPerMinute(now: now)
        var entries: [String: JSON] = [:]
        for accessory in homes.flatMap(\.accessories) {
            let counts = accessories[accessory.id] ?? Accessory()
            var entry: [String: JSON] = [
                "name": .string(accessory.name), "reachable": .bool(accessory.isReachable),
                "eventsPerMinute": .double(((rates[accessory.id] ?? 0) * 100).rounded() / 100), "events": .int(Int64(counts.events)),
                "failedWrites": .int(Int64(counts.failedWrites)), "reachabilityChanges": .int(Int64(counts.reachabilityChanges)),
            ]
            if let error = counts.lastError { entry["lastError"] = .string(error) }
            entries[accessory.id.rawValue] = .object(entry)
        }
        var body: [String: JSON] = ["time": .string(ISODate.text(time)), "mqtt": .object(mqtt), "accessories": .object(entries)]
        if let uptime = process.uptimeSeconds { body["uptimeSeconds"] = .double((uptime * 10).rounded() / 10) }
        if let resident = process.residentBytes { body["residentBytes"] = .int(Int64(resident)) }
        if let cpu = process.cpuSeconds { body["cpuSeconds"] = .double((cpu * 100).rounded() / 100) }
        return .object(body)
    }
}

/// The process's own figures for `$health`, read the way `/metrics` reads them.
public struct ProcessFigures: Sendable, Equatable {
    /// Seconds since the process started.
    public var uptimeSeconds: Double?
    public var residentBytes: Int?
    /// User and system CPU time, in seconds.
    public var cpuSeconds: Double?

    public init(uptimeSeconds: Double? = nil, residentBytes: Int? = nil, cpuSeconds: Double? = nil) {
        self.uptimeSeconds = uptimeSeconds
        self.residentBytes = residentBytes
        self.cpuSeconds = cpuSeconds
    }
}

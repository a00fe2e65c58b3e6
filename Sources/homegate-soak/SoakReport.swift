import Foundation
import Harness

/// Every command the soak sent, by correlation id, and the acknowledgements that came back.
final class AckLedger: @unchecked Sendable {
    struct Counts {
        var sent = 0
        /// Commands the client could not hand over (it was disconnected: the broker restarting).
        var notSent = 0
        var acknowledged = 0
        var refused = 0
        var duplicates = 0
        /// Acknowledgements for an id never sent.
        var unknown = 0
    }

    private let lock = NSLock()
    private var next = 0
    private var sentAt: [Int: ContinuousClock.Instant] = [:]
    private var topics: [Int: String] = [:]
    private var acknowledgedIDs: Set<Int> = []
    private var acknowledgedTopics: [Int: String] = [:]
    private var totals = Counts()
    private var latencies: [Duration] = []

    func nextID() -> Int {
        lock.withLock {
            next += 1
            return next
        }
    }

    func sent(_ id: Int, topic: String) {
        lock.withLock {
            sentAt[id] = .now
            topics[id] = topic
            totals.sent += 1
        }
    }

    func notSent(_ id: Int) {
        lock.withLock {
            sentAt[id] = nil
            topics[id] = nil
            totals.sent -= 1
            totals.notSent += 1
        }
    }

    func acknowledged(_ id: Int, ok: Bool) {
        lock.withLock {
            guard let sent = sentAt[id] else {
                if acknowledgedIDs.contains(id) { totals.duplicates += 1 } else { totals.unknown += 1 }
                Soak.log("acknowledgement again for #\(id) (\(acknowledgedTopics[id] ?? "never sent"))")
                return
            }
            sentAt[id] = nil
            acknowledgedTopics[id] = topics.removeValue(forKey: id)
            acknowledgedIDs.insert(id)
            totals.acknowledged += 1
            if !ok { totals.refused += 1 }
            latencies.append(sent.duration(to: .now))
        }
    }

    func counts() -> Counts {
        lock.withLock { totals }
    }

    /// The latencies since the last call.
    func takeLatencies() -> [Duration] {
        lock.withLock {
            defer { latencies.removeAll(keepingCapacity: true) }
            return latencies
        }
    }

    /// Waits until every command sent is acknowledged, or `timeout` passed.
    func waitUntilSettled(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if lock.withLock({ sentAt.isEmpty }) { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// The commands not acknowledged: id, topic and how long ago they were sent.
    func unacknowledged() -> [String] {
        lock.withLock { sentAt.keys.sorted().map { "#\($0) \(topics[$0] ?? "?")" } }
    }
}

/// The gateway at one moment of the soak.
struct SoakSample {
    let seconds: Double
    let residentMegabytes: Double
    let descriptors: Int
    let threads: Int
    let acknowledged: Int
    /// The acknowledgement latency of the commands acknowledged since the previous sample.
    let latency: Latencies

    var line: String {
        String(format: "%6.0f s  resident %.1f MB  %d descriptors  %d threads  %d acknowledged  ack p50 %.0f µs p99 %.0f µs",
               seconds, residentMegabytes, descriptors, threads, acknowledged, latency.p50, latency.p99)
    }
}

/// What the soak found, as Markdown for BENCHMARKS.md.
struct SoakReport {
    let options: Soak.Options
    let samples: [SoakSample]
    let counts: AckLedger.Counts
    let brokerRestarts: Int

    var duplicates: Int { counts.duplicates + counts.unknown }
    var missing: Int { counts.sent - counts.acknowledged }
    var exactlyOnce: Bool { duplicates == 0 && missing == 0 }

    /// The samples after the warm-up (the first tenth of the run, at least two minutes when the
    /// run is long enough to leave half of it).
    var steady: [SoakSample] {
        guard let last = samples.last?.seconds else { return [] }
        let warmUp = max(last / 10, min(120, last / 2))
        return samples.filter { $0.seconds >= warmUp }
    }

    /// Least-squares slope of `value` over time, per hour.
    static func slopePerHour(_ samples: [SoakSample], _ value: (SoakSample) -> Double) -> Double {
        guard samples.count >= 2 else { return 0 }
        let xs = samples.map(\.seconds), ys = samples.map(value)
        let meanX = xs.reduce(0, +) / Double(xs.count), meanY = ys.reduce(0, +) / Double(ys.count)
        let numerator = zip(xs, ys).map { ($0 - meanX) * ($1 - meanY) }.reduce(0, +)
        let denominator = xs.map { ($0 - meanX) * ($0 - meanX) }.reduce(0, +)
        return denominator == 0 ? 0 : numerator / denominator * 3600
    }

    var markdown: String {
        let memorySlope = Self.slopePerHour(steady) { $0.residentMegabytes }
        let descriptorSlope = Self.slopePerHour(steady) { Double($0.descriptors) }
        var lines = [
            "<!-- soak -->",
            "## Soak (`scripts/soak`)",
            "",
            "- date: \(ISO8601DateFormatter().string(from: Date())); commit: \(ProcessInfo.processInfo.environment["HOMEGATE_COMMIT"] ?? "unknown")",
            String(format: "- %.0f minutes on the demo home: %d sets per second, a get every 2 s, a device event every 5 s, a reachability flip every 30 s, a rename every 60 s, a broker restart every %.0f s (%d restarts; Mosquitto with persistence)",
                   options.minutes, options.rate, options.brokerRestartEvery, brokerRestarts),
            "- commands sent \(counts.sent), acknowledged \(counts.acknowledged) (\(counts.refused) of them refused by the device, as a set on an unreachable accessory is), duplicates \(duplicates), missing \(missing); not handed over while the broker restarted: \(counts.notSent)",
            String(format: "- after the warm-up (%d samples): resident memory %.2f MB per hour (target under 1), file descriptors %.2f per hour", steady.count, memorySlope, descriptorSlope),
            "- exactly once: \(exactlyOnce ? "yes" : "NO"); memory flat: \(memorySlope < 1 ? "yes" : "NO")",
            "",
            "| time | resident MB | descriptors | threads | acknowledged | ack p50 | ack p99 |",
            "|---|---|---|---|---|---|---|",
        ]
        let every = max(1, samples.count / 30)
        for (index, sample) in samples.enumerated() where index % every == 0 || index == samples.count - 1 {
            lines.append(String(format: "| %.0f s | %.1f | %d | %d | %d | %.0f µs | %.0f µs |", sample.seconds, sample.residentMegabytes, sample.descriptors,
                                sample.threads, sample.acknowledged, sample.latency.p50, sample.latency.p99))
        }
        lines.append("<!-- /soak -->")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Prints the figures (`-`) or puts them in place of the previous soak section of `file`.
    func write(to file: String) throws {
        guard file != "-" else {
            print(markdown)
            return
        }
        var text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        if let start = text.range(of: "<!-- soak -->"), let end = text.range(of: "<!-- /soak -->\n", range: start.upperBound..<text.endIndex) {
            text.replaceSubrange(start.lowerBound..<end.upperBound, with: markdown)
        } else {
            text += (text.hasSuffix("\n\n") ? "" : "\n") + markdown
        }
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        Soak.log("wrote \(file)")
    }
}

import Wire
/// How long the gateway itself takes per command: from the message's arrival at the MQTT client
/// to its acknowledgement handed back to it. Keeps the most recent ``capacity`` figures.
struct CommandTimings: Sendable {
    static let capacity = 100_000
    private var samples: [Duration] = []
    private var next = 0
    /// Commands measured since the start (or the last reset).
    private(set) var count = 0

    mutating func record(_ duration: Duration) {
        count += 1
        if samples.count < Self.capacity {
            samples.append(duration)
        } else {
            samples[next] = duration
            next = (next + 1) % Self.capacity
        }
    }

    mutating func reset() {
        self = CommandTimings()
    }

    /// `count`, and p50, p90, p99 and the maximum in microseconds.
    var summary: [String: JSON] {
        let sorted = samples.sorted()
        func percentile(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return microseconds(sorted[max(0, index)])
        }
        return [
            "count": .int(count), "p50Microseconds": .double(percentile(0.5)), "p90Microseconds": .double(percentile(0.9)),
            "p99Microseconds": .double(percentile(0.99)), "maxMicroseconds": .double(sorted.last.map(microseconds) ?? 0),
        ]
    }

    private func microseconds(_ duration: Duration) -> Double {
        let value = Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
        return (value * 10).rounded() / 10
    }
}

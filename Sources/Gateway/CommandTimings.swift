import Timing
import Wire
/// How long the gateway itself takes per command: from the message's arrival at the MQTT client
/// to its acknowledgement handed back to it. Keeps the most recent ``capacity`` figures.
///
/// The window is allocated and written whole at the start (1.6 MB), so the gateway's memory does
/// not creep up over its first 100,000 commands (the soak measures memory over time).
struct CommandTimings: Sendable {
    static let capacity = 100_000
    private var samples = [Duration](repeating: .zero, count: capacity)
    /// How many of `samples` hold figures (the rest are the initial zeros).
    private var filled = 0
    private var next = 0
    /// Commands measured since the start (or the last reset).
    private(set) var count = 0

    mutating func record(_ duration: Duration) {
        count += 1
        samples[next] = duration
        next = (next + 1) % Self.capacity
        filled = min(filled + 1, Self.capacity)
    }

    mutating func reset() {
        count = 0
        filled = 0
        next = 0
    }

    /// `count`, and p50, p90, p99 and the maximum in microseconds.
    var summary: [String: JSON] {
        let sorted = samples.prefix(filled).sorted()
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
        let value = duration.microsecondsValue
        return (value * 10).rounded() / 10
    }
}

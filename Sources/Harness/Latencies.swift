import Foundation
import Timing

/// Latency figures of one series, in microseconds.
public struct Latencies: Codable, Sendable {
    public let count: Int
    public let p50: Double
    public let p90: Double
    public let p99: Double

    /// Figures measured elsewhere (another program's percentiles, in microseconds).
    public init(count: Int, p50: Double, p90: Double, p99: Double) {
        self.count = count
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
    }

    public init(_ durations: [Duration]) {
        let sorted = durations.map(\.microsecondsValue).sorted()
        func percentile(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))
            return (sorted[index] * 10).rounded() / 10
        }
        count = sorted.count
        p50 = percentile(0.5)
        p90 = percentile(0.9)
        p99 = percentile(0.99)
    }
}

/// The reconnect delay policy: capped exponential backoff with jitter.
///
/// The first retry's ceiling is `initial`; each following one doubles it, up to `maximum`. The
/// wait itself is half the ceiling plus a random part of the other half ("equal jitter"), so
/// gateways that lost the broker together do not all retry at the same moment, and none retries
/// sooner than half the ceiling. A successful connection resets it. A value type with no clock of its own: the caller decides
/// when a delay has passed, so tests need no waiting.
public struct Backoff: Sendable, Equatable {
    /// The wait before the first retry.
    public let initial: Duration
    /// The longest wait between two attempts.
    public let maximum: Duration
    /// Failed attempts since the last success.
    public private(set) var attempts = 0

    /// - Throws: ``ConfigurationError`` unless `initial` is positive and not above `maximum`.
    public init(initial: Duration, maximum: Duration) throws(ConfigurationError) {
        guard initial > .zero else { throw ConfigurationError("the initial reconnect delay must be positive, got \(Library.format(initial))") }
        guard maximum >= initial else {
            throw ConfigurationError("the maximum reconnect delay (\(Library.format(maximum))) must not be below the initial one (\(Library.format(initial)))")
        }
        self.initial = initial
        self.maximum = maximum
    }

    /// One second, doubling up to thirty seconds.
    public static let standard = Backoff(checkedInitial: .seconds(1), maximum: .seconds(30))

    private init(checkedInitial initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
    }

    /// Records a failed attempt and returns how long to wait before the next one: half the
    /// ceiling (``nextCeiling()``) plus a random part of the other half.
    public mutating func nextDelay() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return nextDelay(using: &generator)
    }

    /// ``nextDelay()`` with the random numbers from `generator` (tests give a seeded one).
    public mutating func nextDelay<Generator: RandomNumberGenerator>(using generator: inout Generator) -> Duration {
        let ceiling = nextCeiling()
        return ceiling / 2 + ceiling / 2 * Double.random(in: 0...1, using: &generator)
    }

    /// Records a failed attempt and returns the ceiling of the wait before the next one:
    /// `initial`, doubling up to `maximum`.
    public mutating func nextCeiling() -> Duration {
        let exponent = min(attempts, 62)
        attempts += 1
        var delay = initial
        for _ in 0..<exponent {
            delay = delay * 2
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }

    /// Records a successful connection: the next failure waits `initial` again.
    public mutating func reset() {
        attempts = 0
    }
}

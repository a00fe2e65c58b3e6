/// Waits between attempts that keep failing: capped exponential backoff, with or without jitter.
///
/// The first retry's ceiling is `initial`; each following one doubles it, up to `maximum`. With
/// ``Jitter/equal`` the wait itself is half the ceiling plus a random part of the other half, so
/// clients that lost their peer together do not all retry at the same moment, and none retries
/// sooner than half the ceiling; with ``Jitter/none`` the wait is the ceiling. A success resets
/// it. A value type with no clock of its own: the caller decides when a delay has passed, so
/// tests need no waiting.
public struct Backoff: Sendable, Equatable {
    /// How a wait is drawn from its ceiling.
    public enum Jitter: Sendable, Equatable {
        /// The wait is the ceiling.
        case none
        /// Half the ceiling plus a random part of the other half ("equal jitter").
        case equal
    }

    /// The wait before the first retry.
    public let initial: Duration
    /// The longest wait between two attempts.
    public let maximum: Duration
    /// How each wait is drawn from its ceiling.
    public let jitter: Jitter
    /// Failed attempts since the last success.
    public private(set) var attempts = 0

    /// Bounds are taken as given: callers that read them from a user check them first (a
    /// `maximum` below `initial` makes every ceiling `maximum`).
    public init(initial: Duration, maximum: Duration, jitter: Jitter) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// Records a failed attempt and returns how long to wait before the next one, drawn from
    /// the ceiling (``nextCeiling()``) as ``jitter`` says.
    public mutating func nextDelay() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return nextDelay(using: &generator)
    }

    /// ``nextDelay()`` with the random numbers from `generator` (tests give a seeded one).
    public mutating func nextDelay<Generator: RandomNumberGenerator>(using generator: inout Generator) -> Duration {
        let ceiling = nextCeiling()
        switch jitter {
        case .none:
            return ceiling
        case .equal:
            return ceiling / 2 + ceiling / 2 * Double.random(in: 0...1, using: &generator)
        }
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

    /// Records a success: the next failure waits `initial` again.
    public mutating func reset() {
        attempts = 0
    }
}

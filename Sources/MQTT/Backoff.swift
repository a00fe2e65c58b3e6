/// The reconnect delay policy: capped exponential backoff.
///
/// The first retry waits `initial`; each following one doubles the wait, up to `maximum`.
/// A successful connection resets it. A value type with no clock of its own: the caller decides
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

    /// Records a failed attempt and returns how long to wait before the next one.
    public mutating func nextDelay() -> Duration {
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

import Timing

/// The reconnect delay policy: ``Timing/Backoff`` (capped exponential backoff with jitter), here
/// with bounds checked as a configuration's and equal jitter, so clients that lost the broker
/// together spread their retries out.
public typealias Backoff = Timing.Backoff

extension Backoff {
    /// Equal jitter: a wait is half its ceiling plus a random part of the other half.
    /// - Throws: ``ConfigurationError`` unless `initial` is positive and not above `maximum`.
    public init(initial: Duration, maximum: Duration) throws(ConfigurationError) {
        guard initial > .zero else { throw ConfigurationError("the initial reconnect delay must be positive, got \(Library.format(initial))") }
        guard maximum >= initial else {
            throw ConfigurationError("the maximum reconnect delay (\(Library.format(maximum))) must not be below the initial one (\(Library.format(initial)))")
        }
        self.init(initial: initial, maximum: maximum, jitter: .equal)
    }

    /// One second, doubling up to thirty seconds, with equal jitter.
    public static let standard = Backoff(initial: .seconds(1), maximum: .seconds(30), jitter: .equal)
}

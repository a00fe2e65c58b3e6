/// When to try a dropped device again: at once after a connection that worked, then doubling
/// waits up to a ceiling while attempts keep failing.
struct ReconnectPolicy: Sendable {
    let initial: Duration
    let maximum: Duration
    private var next: Duration

    init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
        self.next = initial
    }

    /// The wait before the next attempt; each call doubles the following one, up to the ceiling.
    mutating func nextDelay() -> Duration {
        defer { next = min(next * 2, maximum) }
        return next
    }

    /// A connection worked: the next drop is retried after the initial wait.
    mutating func reset() {
        next = initial
    }
}

/// The engine's time: an injected clock (tests use a manual one), its instants counted from
/// when the engine was made. Command deadlines, the trigger scheduler's sleeps and the device
/// calls' deadlines all run on it, through ``Timing``'s deadline race and alarm.
struct EngineClock: Clock {
    /// A moment of the engine's time: how long since the engine was made.
    struct Instant: InstantProtocol {
        let sinceStart: Duration

        init(_ sinceStart: Duration) {
            self.sinceStart = sinceStart
        }

        func advanced(by duration: Duration) -> Instant { Instant(sinceStart + duration) }
        func duration(to other: Instant) -> Duration { other.sinceStart - sinceStart }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceStart < rhs.sinceStart }
    }

    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration, Duration?) async throws -> Void
    let minimumResolution: Duration

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { deadline, tolerance in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: tolerance) }
        minimumResolution = clock.minimumResolution
    }

    var now: Instant { Instant(read()) }

    /// Time since the engine was made.
    var elapsed: Duration { read() }

    /// Sleeps until `deadline`.
    /// - Throws: `CancellationError` when cancelled.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await sleeper(deadline.sinceStart, tolerance)
    }
}

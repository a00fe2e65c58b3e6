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

/// The engine's device work (calls to drivers, management requests that wait for devices,
/// simulator controls, trigger fires): each piece a child task of one task group that the
/// engine's `run()` owns, so all of it ends, cancelled, when the engine stops.
final class DeviceWork: Sendable {
    private typealias Piece = (executor: (any TaskExecutor)?, work: @Sendable () async -> Void)
    private let stream: AsyncStream<Piece>
    private let continuation: AsyncStream<Piece>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    /// Starts `work` in the group (it runs once ``run()`` takes it), on `executor` when one is
    /// given (a device connection's event loop: the request and its answer then stay on its thread).
    func start(on executor: (any TaskExecutor)? = nil, _ work: @escaping @Sendable () async -> Void) {
        continuation.yield((executor, work))
    }

    /// Runs the work handed over until cancelled; then cancels what still runs and waits for it.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await piece in stream {
                group.addTask(executorPreference: piece.executor) { await piece.work() }
            }
            group.cancelAll()
        }
    }
}

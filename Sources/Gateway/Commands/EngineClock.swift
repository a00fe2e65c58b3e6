import Synchronization

/// The engine's time: an injected clock (tests use a manual one), read as how long since the
/// engine was made. Command deadlines, the trigger scheduler's sleeps and the device calls'
/// deadlines all run on it.
struct EngineClock: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// Time since the engine was made.
    var now: Duration { read() }

    /// Sleeps until `deadline` (time since the engine was made).
    /// - Throws: `CancellationError` when cancelled.
    func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }
}

/// Runs `operation` until `deadline` on `clock`: its result, or nil when the deadline came first,
/// and then the operation has been cancelled (cancellation reaches a driver's call: the simulator
/// stops its latency, the HAP client stops waiting for the answer). The engine's one timeout.
func withDeadline<T: Sendable>(_ deadline: Duration, on clock: EngineClock, _ operation: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await clock.sleep(until: deadline)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}

/// Wakes a sleeping loop (the trigger scheduler, the command deadlines): each ``ring()`` starts
/// a new generation; a sleep for a generation ends as soon as a later one begins (at once if it
/// already has).
final class Alarm: Sendable {
    private struct State {
        var generation = 0
        var nextID = 0
        var sleepers: [Int: CheckedContinuation<Void, Never>] = [:]
        var latestSleep: Int?
    }

    private let state = Mutex(State())

    /// The current generation.
    var generation: Int { state.withLock { $0.generation } }

    /// The generation the latest sleep began in (nil before the first): once it is at least a
    /// generation, the sleeper has looked since that generation began.
    var latestSleep: Int? { state.withLock { $0.latestSleep } }

    /// Starts a new generation: every sleeper wakes.
    func ring() {
        let sleepers = state.withLock { state in
            state.generation += 1
            defer { state.sleepers.removeAll() }
            return Array(state.sleepers.values)
        }
        for sleeper in sleepers { sleeper.resume() }
    }

    /// Sleeps until `deadline` on `clock` (forever when nil), or until a generation after
    /// `generation` begins.
    /// - Throws: `CancellationError` when cancelled.
    func sleep(until deadline: Duration?, on clock: EngineClock, unlessRungAfter generation: Int) async throws {
        state.withLock { $0.latestSleep = generation }
        if let deadline {
            _ = await withDeadline(deadline, on: clock) { await self.ringing(after: generation) }
        } else {
            await ringing(after: generation)
        }
        try Task.checkCancellation()
    }

    /// Waits until a generation after `generation` begins, or the task is cancelled.
    func wait(unlessRungAfter generation: Int) async {
        await ringing(after: generation)
    }

    /// Returns when a generation after `generation` begins, or when cancelled.
    private func ringing(after generation: Int) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.sleepers[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.resume()
        }
    }
}

/// The engine's device work (calls to drivers, management requests that wait for devices,
/// simulator controls, trigger fires): each piece a child task of one task group that the
/// engine's `run()` owns, so all of it ends, cancelled, when the engine stops.
final class DeviceWork: Sendable {
    private let stream: AsyncStream<@Sendable () async -> Void>
    private let continuation: AsyncStream<@Sendable () async -> Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    /// Starts `work` in the group (it runs once ``run()`` takes it).
    func start(_ work: @escaping @Sendable () async -> Void) {
        continuation.yield(work)
    }

    /// Runs the work handed over until cancelled; then cancels what still runs and waits for it.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await work in stream {
                group.addTask { await work() }
            }
            group.cancelAll()
        }
    }
}

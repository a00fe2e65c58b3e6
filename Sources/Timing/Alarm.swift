import Synchronization

/// The wake-up call for async loops: each ``ring()`` begins a new generation, and a wait for a
/// generation ends as soon as a later one has begun (at once if one already has).
///
/// A waiter names the generation it has seen, so nothing rung after it looked is lost:
/// - a loop that must not miss a change reads ``generation`` before it looks at its work, then
///   waits `unlessRungAfter:` that generation;
/// - a wake-up remembered until the next wait (one ring, however many, ends the next wait at
///   once) is a loop that keeps the generation its last wait ended in;
/// - a one-shot event (everyone waiting, before or after, returns) is a wait
///   `unlessRungAfter:` ``initialGeneration``.
public final class Alarm: Sendable {
    private struct State {
        var generation = Alarm.initialGeneration
        var nextID = 0
        var sleepers: [Int: CheckedContinuation<Void, Never>] = [:]
        var latestSleep: Int?
    }

    /// The generation of an alarm never rung.
    public static let initialGeneration = 0

    private let state = Mutex(State())

    public init() {}

    /// The current generation.
    public var generation: Int { state.withLock { $0.generation } }

    /// The generation the latest wait began in (nil before the first): once it is at least a
    /// generation, the waiter has looked since that generation began.
    public var latestSleep: Int? { state.withLock { $0.latestSleep } }

    /// Begins a new generation: every waiter wakes.
    public func ring() {
        let sleepers = state.withLock { state in
            state.generation += 1
            defer { state.sleepers.removeAll() }
            return Array(state.sleepers.values)
        }
        for sleeper in sleepers { sleeper.resume() }
    }

    /// Returns when a generation after `generation` has begun, or when the task is cancelled.
    public func wait(unlessRungAfter generation: Int) async {
        state.withLock { $0.latestSleep = generation }
        await ringing(after: generation)
    }

    /// Sleeps until `deadline` on `clock` (forever when nil), or until a generation after
    /// `generation` has begun.
    /// - Throws: `CancellationError` when cancelled.
    public func sleep<C: Clock>(until deadline: C.Instant?, on clock: C, unlessRungAfter generation: Int) async throws
    where C.Duration == Duration {
        state.withLock { $0.latestSleep = generation }
        if let deadline {
            _ = await withDeadline(deadline, on: clock) { await self.ringing(after: generation) }
        } else {
            await ringing(after: generation)
        }
        try Task.checkCancellation()
    }

    /// Sleeps for `interval` on the continuous clock (the clock of `Task.sleep(for:)`), or until
    /// a generation after `generation` has begun.
    /// - Throws: `CancellationError` when cancelled.
    public func sleep(for interval: Duration, unlessRungAfter generation: Int) async throws {
        let clock = ContinuousClock()
        try await sleep(until: clock.now.advanced(by: interval), on: clock, unlessRungAfter: generation)
    }

    /// Returns when a generation after `generation` has begun, or when cancelled.
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

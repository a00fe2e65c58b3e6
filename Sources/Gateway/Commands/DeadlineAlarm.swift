import Synchronization
import Timing

/// The wake-up call of an engine loop that sleeps until the earliest deadline of its work (the
/// commands' deadlines, the held values' releases, the Adaptive Lighting renewals): the loop
/// sleeps until the deadline it saw, and new work wakes it only when its deadline is earlier
/// than that one (``wake(for:)``), so work that comes later costs no wake-up.
final class DeadlineAlarm: Sendable {
    /// The generation the loop saw and the deadline it sleeps until.
    struct Sleep {
        let generation: Int
        let deadline: Duration?
    }

    private let alarm = Alarm()
    /// What the loop sleeps until: nil while it is awake or sleeps with no deadline.
    private let sleepingUntil = Mutex<Duration?>(nil)

    /// The loop is about to sleep until `deadline` (nil: until woken). Read before it sleeps,
    /// with nothing suspending in between, so no wake-up after it looked is lost.
    func sleep(until deadline: Duration?) -> Sleep {
        let generation = alarm.generation
        sleepingUntil.withLock { $0 = deadline }
        return Sleep(generation: generation, deadline: deadline)
    }

    /// Sleeps as ``sleep(until:)`` said, on the engine's clock, until the deadline or a wake-up.
    /// - Throws: `CancellationError` when cancelled.
    func wait(_ sleep: Sleep, on clock: EngineClock) async throws {
        defer { sleepingUntil.withLock { $0 = nil } }
        try await alarm.sleep(until: sleep.deadline.map(EngineClock.Instant.init), on: clock, unlessRungAfter: sleep.generation)
    }

    /// Work with the deadline `next` came: the loop wakes if it sleeps until later (or until woken).
    func wake(for next: Duration?) {
        guard let next else { return }
        let earlier = sleepingUntil.withLock { sleepingUntil in
            if let until = sleepingUntil, until <= next { return false }
            sleepingUntil = next
            return true
        }
        if earlier { alarm.ring() }
    }
}

import Synchronization
import Testing
import TestSupport
@testable import Gateway

/// The engine loops' wake-up: a later deadline leaves the sleeper alone, an earlier one wakes it.
@Suite("deadline alarm")
struct DeadlineAlarmTests {
    @Test("a sleeper until 10 s is not woken by work due at 20 s, but is by work due at 5 s; with no deadline, any work wakes it")
    func wakesOnlyForEarlier() async throws {
        let manual = ManualClock()
        let clock = EngineClock(manual)
        let alarm = DeadlineAlarm()
        let woken = Mutex(false)
        let sleeper = Task {
            try await alarm.wait(alarm.sleep(until: .seconds(10)), on: clock)
            woken.withLock { $0 = true }
        }
        await manual.waitForSleepers(1)
        alarm.wake(for: .seconds(20))
        alarm.wake(for: nil)
        await Task.yield()
        #expect(!woken.withLock { $0 } && manual.sleeperCount == 1, "a later deadline leaves it asleep")
        alarm.wake(for: .seconds(5))
        try await sleeper.value
        #expect(woken.withLock { $0 })

        // The loop looks (no deadline), work comes before it sleeps: the sleep ends at once.
        let forever = alarm.sleep(until: nil)
        alarm.wake(for: .seconds(3600))
        try await alarm.wait(forever, on: clock)
    }
}

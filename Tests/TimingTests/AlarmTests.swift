import Synchronization
import Testing
import TestSupport
import Timing

@Suite("The alarm: a wake-up for async loops")
struct AlarmTests {
    @Test("a ring begins a new generation and wakes the waiter of the current one")
    func ringWakes() async {
        let alarm = Alarm()
        #expect(alarm.generation == Alarm.initialGeneration)
        let generation = alarm.generation
        let waiter = Task { await alarm.wait(unlessRungAfter: generation) }
        alarm.ring()
        await waiter.value
        #expect(alarm.generation == generation + 1)
    }

    @Test("a ring after the generation the waiter names is remembered: the wait ends at once")
    func remembered() async {
        let alarm = Alarm()
        let seen = alarm.generation
        alarm.ring()
        alarm.ring()
        await alarm.wait(unlessRungAfter: seen) // would hang if the rings were lost
        #expect(alarm.generation == seen + 2)
    }

    @Test("as a one-shot event, every wait for the first generation ends, before or after the ring")
    func oneShot() async {
        let alarm = Alarm()
        let before = (0..<3).map { _ in Task { await alarm.wait(unlessRungAfter: Alarm.initialGeneration) } }
        alarm.ring()
        for waiter in before { await waiter.value }
        await alarm.wait(unlessRungAfter: Alarm.initialGeneration)
        let clock = ManualClock()
        try? await alarm.sleep(until: clock.now.advanced(by: .seconds(1)), on: clock, unlessRungAfter: Alarm.initialGeneration)
        #expect(clock.now.offset == .zero, "ended without the clock moving")
    }

    @Test("a sleep ends at its deadline without a ring, and not before")
    func sleepUntilDeadline() async throws {
        let alarm = Alarm()
        let clock = ManualClock()
        let generation = alarm.generation
        async let slept: Void = alarm.sleep(until: clock.now.advanced(by: .seconds(2)), on: clock, unlessRungAfter: generation)
        await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        #expect(clock.sleeperCount == 1, "one second is left")
        clock.advance(by: .seconds(1))
        try await slept
        #expect(alarm.generation == generation)
        #expect(alarm.latestSleep == generation)
    }

    @Test("a ring ends a sleep before its deadline, and its clock sleep is gone")
    func ringEndsSleep() async throws {
        let alarm = Alarm()
        let clock = ManualClock()
        async let slept: Void = alarm.sleep(until: clock.now.advanced(by: .seconds(60)), on: clock, unlessRungAfter: alarm.generation)
        await clock.waitForSleepers()
        alarm.ring()
        try await slept
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test("a sleep without a deadline ends only at a ring")
    func sleepForever() async throws {
        let alarm = Alarm()
        let clock = ManualClock()
        let sleeping = Task { try await alarm.sleep(until: nil, on: clock, unlessRungAfter: Alarm.initialGeneration) }
        while alarm.latestSleep == nil { await Task.yield() }
        #expect(clock.sleeperCount == 0, "no deadline to sleep until")
        alarm.ring()
        try await sleeping.value
    }

    @Test("cancelled: a wait returns, a sleep throws CancellationError")
    func cancellation() async {
        let alarm = Alarm()
        let clock = ManualClock()
        let waiting = Task { await alarm.wait(unlessRungAfter: Alarm.initialGeneration) }
        let sleeping = Task { try await alarm.sleep(until: clock.now.advanced(by: .seconds(60)), on: clock, unlessRungAfter: Alarm.initialGeneration) }
        waiting.cancel()
        sleeping.cancel()
        await waiting.value
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(alarm.generation == Alarm.initialGeneration)
    }

    @Test("latestSleep tells the generation the latest wait began in")
    func latestSleep() async {
        let alarm = Alarm()
        #expect(alarm.latestSleep == nil)
        alarm.ring()
        await alarm.wait(unlessRungAfter: Alarm.initialGeneration)
        #expect(alarm.latestSleep == Alarm.initialGeneration)
        let generation = alarm.generation
        let waiter = Task { await alarm.wait(unlessRungAfter: generation) }
        while alarm.latestSleep != generation { await Task.yield() }
        alarm.ring()
        await waiter.value
    }
}

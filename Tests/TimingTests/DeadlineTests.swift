import Synchronization
import Testing
import TestSupport
import Timing

@Suite("The deadline race")
struct DeadlineTests {
    @Test("an operation that ends first gives its result, and the deadline's sleep is gone")
    func operationFirst() async {
        let clock = ManualClock()
        let result = await withDeadline(clock.now.advanced(by: .seconds(5)), on: clock) { 42 }
        #expect(result == 42)
        #expect(clock.sleeperCount == 0)
    }

    @Test("the deadline first: nil, and the operation was cancelled and has ended")
    func deadlineFirst() async {
        let clock = ManualClock()
        let sawCancellation = Mutex(false)
        async let result = withDeadline(clock.now.advanced(by: .seconds(5)), on: clock) { () async -> Int in
            await Alarm().wait(unlessRungAfter: Alarm.initialGeneration) // returns only when cancelled
            sawCancellation.withLock { $0 = Task.isCancelled }
            return 1
        }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        #expect(await result == nil)
        #expect(sawCancellation.withLock { $0 })
    }

    @Test("time short of the deadline does not end the operation")
    func shortOfDeadline() async {
        let clock = ManualClock()
        let finish = Alarm()
        async let result = withDeadline(clock.now.advanced(by: .seconds(5)), on: clock) { () async -> String in
            await finish.wait(unlessRungAfter: Alarm.initialGeneration)
            return "done"
        }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(4999))
        #expect(clock.sleeperCount == 1, "the deadline is still ahead")
        finish.ring()
        #expect(await result == "done")
        #expect(clock.sleeperCount == 0)
    }

    @Test("a deadline already past ends the race at once")
    func pastDeadline() async {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        let result = await withDeadline(clock.now.advanced(by: .seconds(-1)), on: clock) { () async -> Int in
            await Alarm().wait(unlessRungAfter: Alarm.initialGeneration)
            return 1
        }
        #expect(result == nil)
    }

    @Test("cancelling the caller cancels the operation")
    func callerCancelled() async {
        let clock = ManualClock()
        let started = Alarm()
        let task = Task {
            await withDeadline(clock.now.advanced(by: .seconds(5)), on: clock) { () async -> Bool in
                started.ring()
                await Alarm().wait(unlessRungAfter: Alarm.initialGeneration)
                return Task.isCancelled
            }
        }
        await started.wait(unlessRungAfter: Alarm.initialGeneration)
        task.cancel()
        let result = await task.value
        #expect(result != false, "nil, or the operation's word that it was cancelled")
    }
}

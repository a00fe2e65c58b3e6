import Testing
import TestSupport
import Timing

@Suite("Backoff")
struct BackoffTests {
    @Test("without jitter each wait is the ceiling: the initial delay doubling to the cap")
    func withoutJitter() {
        var backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(30), jitter: .none)
        let delays = (0..<9).map { _ in backoff.nextDelay() }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16),
                           .seconds(30), .seconds(30)])
        #expect(backoff.attempts == 9)
    }

    @Test("with equal jitter each wait lies between half its ceiling and the ceiling, and draws differ")
    func equalJitter() {
        var jittered = Backoff(initial: .seconds(1), maximum: .seconds(30), jitter: .equal)
        var other = jittered
        var ceilings = jittered
        var one = SeededGenerator(seed: 7)
        var two = SeededGenerator(seed: 8)
        var differ = false
        for _ in 0..<20 {
            let ceiling = ceilings.nextCeiling()
            let a = jittered.nextDelay(using: &one)
            let b = other.nextDelay(using: &two)
            #expect(a >= ceiling / 2 && a <= ceiling, "\(a) for a ceiling of \(ceiling)")
            #expect(b >= ceiling / 2 && b <= ceiling, "\(b) for a ceiling of \(ceiling)")
            if a != b { differ = true }
        }
        #expect(differ)
    }

    @Test("a success resets the sequence")
    func reset() {
        var backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(30), jitter: .none)
        _ = backoff.nextDelay()
        _ = backoff.nextDelay()
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.nextDelay() == .milliseconds(250))
    }

    @Test("stays at the cap after very many failures, without overflow")
    func manyFailures() {
        var backoff = Backoff(initial: .nanoseconds(1), maximum: .seconds(86_400), jitter: .none)
        for _ in 0..<10_000 { _ = backoff.nextDelay() }
        #expect(backoff.nextDelay() == .seconds(86_400))
    }

    @Test("a maximum below the initial delay caps every wait")
    func maximumBelowInitial() {
        var backoff = Backoff(initial: .seconds(5), maximum: .seconds(1), jitter: .none)
        #expect(backoff.nextDelay() == .seconds(1))
        #expect(backoff.nextDelay() == .seconds(1))
    }
}

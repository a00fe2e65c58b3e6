import Testing
import TestSupport
@testable import MQTT

@Suite("Reconnect backoff")
struct BackoffTests {
    @Test("the ceiling doubles from the initial delay up to the cap")
    func doublesUpToCap() throws {
        var backoff = try Backoff(initial: .milliseconds(100), maximum: .seconds(1))
        let delays = (0..<7).map { _ in backoff.nextCeiling() }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1), .seconds(1)])
        #expect(backoff.attempts == 7)
    }

    @Test("each wait lies between half its ceiling and the ceiling, and two gateways' waits differ")
    func jitter() throws {
        var first = try Backoff(initial: .seconds(1), maximum: .seconds(30))
        var second = first
        var ceilings = first
        var one = SeededGenerator(seed: 1)
        var two = SeededGenerator(seed: 2)
        var differ = false
        for _ in 0..<20 {
            let ceiling = ceilings.nextCeiling()
            let a = first.nextDelay(using: &one)
            let b = second.nextDelay(using: &two)
            #expect(a >= ceiling / 2 && a <= ceiling, "\(a) for a ceiling of \(ceiling)")
            #expect(b >= ceiling / 2 && b <= ceiling, "\(b) for a ceiling of \(ceiling)")
            if a != b { differ = true }
        }
        #expect(differ, "gateways restarted together do not retry together")
    }

    @Test("a success resets it")
    func resets() throws {
        var backoff = try Backoff(initial: .seconds(1), maximum: .seconds(30))
        _ = backoff.nextDelay()
        _ = backoff.nextDelay()
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.nextCeiling() == .seconds(1))
    }

    @Test("stays at the cap after very many failures, without overflow")
    func manyFailures() throws {
        var backoff = try Backoff(initial: .seconds(1), maximum: .seconds(30))
        for _ in 0..<10_000 { _ = backoff.nextDelay() }
        #expect(backoff.nextCeiling() == .seconds(30))
    }

    @Test("the standard policy is 1 s doubling to 30 s")
    func standard() {
        var backoff = Backoff.standard
        #expect(backoff.nextCeiling() == .seconds(1))
        #expect(backoff.maximum == .seconds(30))
    }

    @Test("bad bounds are refused", arguments: [
        (Duration.zero, Duration.seconds(1), "must be positive"),
        (.seconds(-1), .seconds(1), "must be positive"),
        (.seconds(5), .seconds(1), "must not be below"),
    ])
    func badBounds(initial: Duration, maximum: Duration, reason: String) {
        #expect {
            try Backoff(initial: initial, maximum: maximum)
        } throws: { error in
            (error as? ConfigurationError)?.message.contains(reason) == true
        }
    }
}

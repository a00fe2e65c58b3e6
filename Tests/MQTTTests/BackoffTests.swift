import Testing
@testable import MQTT

@Suite("Reconnect backoff")
struct BackoffTests {
    @Test("doubles from the initial delay up to the cap")
    func doublesUpToCap() throws {
        var backoff = try Backoff(initial: .milliseconds(100), maximum: .seconds(1))
        let delays = (0..<7).map { _ in backoff.nextDelay() }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1), .seconds(1)])
        #expect(backoff.attempts == 7)
    }

    @Test("a success resets it")
    func resets() throws {
        var backoff = try Backoff(initial: .seconds(1), maximum: .seconds(30))
        _ = backoff.nextDelay()
        _ = backoff.nextDelay()
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.nextDelay() == .seconds(1))
    }

    @Test("stays at the cap after very many failures, without overflow")
    func manyFailures() throws {
        var backoff = try Backoff(initial: .seconds(1), maximum: .seconds(30))
        for _ in 0..<10_000 { _ = backoff.nextDelay() }
        #expect(backoff.nextDelay() == .seconds(30))
    }

    @Test("the standard policy is 1 s doubling to 30 s")
    func standard() {
        var backoff = Backoff.standard
        #expect(backoff.nextDelay() == .seconds(1))
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

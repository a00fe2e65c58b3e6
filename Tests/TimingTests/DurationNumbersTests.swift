import Testing
import Timing

@Suite("Duration as numbers")
struct DurationNumbersTests {
    @Test("fractional values", arguments: [
        (Duration.milliseconds(1500), 1.5, 1500.0, 1_500_000.0),
        (.microseconds(250), 0.000_25, 0.25, 250.0),
        (.milliseconds(-2250), -2.25, -2250.0, -2_250_000.0),
        (.zero, 0, 0, 0),
    ])
    func fractional(duration: Duration, seconds: Double, milliseconds: Double, microseconds: Double) {
        #expect(abs(duration.secondsValue - seconds) < 1e-12)
        #expect(abs(duration.millisecondsValue - milliseconds) < 1e-9)
        #expect(abs(duration.microsecondsValue - microseconds) < 1e-6)
    }

    @Test("whole units truncate toward zero", arguments: [
        (Duration.milliseconds(1999), Int64(1), Int64(1999), Int64(1_999_000_000)),
        (.nanoseconds(1_500_001), 0, 1, 1_500_001),
        (.nanoseconds(-1_500_001), 0, -1, -1_500_001),
        (.milliseconds(-2500), -2, -2500, -2_500_000_000),
        (.seconds(3), 3, 3000, 3_000_000_000),
    ])
    func whole(duration: Duration, seconds: Int64, milliseconds: Int64, nanoseconds: Int64) {
        #expect(duration.wholeSeconds == seconds)
        #expect(duration.wholeMilliseconds == milliseconds)
        #expect(duration.wholeNanoseconds == nanoseconds)
    }

    @Test("a timeout in milliseconds rounds up, so it never ends early", arguments: [
        (Duration.nanoseconds(1), Int64(1)),
        (.microseconds(1500), 2),
        (.milliseconds(2), 2),
        (.seconds(1) + .nanoseconds(1), 1001),
        (.zero, 0),
        (.microseconds(-1500), -1),
        (.microseconds(-500), 0),
    ])
    func roundedUp(duration: Duration, milliseconds: Int64) {
        #expect(duration.millisecondsRoundedUp == milliseconds)
    }

    @Test("whole units saturate instead of overflowing")
    func saturates() {
        let long = Duration.seconds(Int64.max / 10)
        #expect(long.wholeMilliseconds == .max)
        #expect(long.wholeNanoseconds == .max)
        #expect(long.millisecondsRoundedUp == .max)
        #expect((.zero - long).wholeNanoseconds == .min)
        #expect(Duration.seconds(9_223_372_036).wholeNanoseconds == 9_223_372_036_000_000_000, "just below Int64's bound")
        #expect(Duration.seconds(9_223_372_037).wholeNanoseconds == .max, "just past it")
    }
}

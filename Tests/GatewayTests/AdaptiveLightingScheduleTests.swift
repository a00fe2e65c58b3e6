import Testing
@testable import Gateway
import HomeModel

/// Which bulbs follow Adaptive Lighting and when each transition is renewed
/// (``AdaptiveLightingSchedule``), on the engine's time.
@Suite struct AdaptiveLightingScheduleTests {
    static let strip = ServiceReference(accessoryID: "strip", serviceIID: 19)
    static let bulb = ServiceReference(accessoryID: "bulb", serviceIID: 48)
    static let day = Duration.seconds(86_400)

    @Test func renewedAnHourBeforeTheCurveEnds() {
        var schedule = AdaptiveLightingSchedule()
        #expect(!schedule.isOn(Self.strip) && schedule.nextRenewal == nil)
        schedule.confirmed(Self.strip, span: Self.day, now: .seconds(10))
        #expect(schedule.isOn(Self.strip) && schedule.wanted == [Self.strip])
        #expect(schedule.nextRenewal == .seconds(10 + 23 * 3600))
        #expect(schedule.due(now: .seconds(10 + 23 * 3600 - 1)).isEmpty)
        #expect(schedule.due(now: .seconds(10 + 23 * 3600)) == [Self.strip])
        // While the renewal is written it is not due again; the bulb's confirmation moves it a day on.
        schedule.renewing(Self.strip, now: .seconds(10 + 23 * 3600))
        #expect(schedule.due(now: .seconds(10 + 23 * 3600 + 59)).isEmpty)
        schedule.confirmed(Self.strip, span: Self.day, now: .seconds(10 + 23 * 3600 + 1))
        #expect(schedule.nextRenewal == .seconds(10 + 46 * 3600 + 1))
    }

    @Test func aFailedRenewalIsTriedAgainAMinuteLaterAndStaysOn() {
        var schedule = AdaptiveLightingSchedule()
        schedule.confirmed(Self.strip, span: Self.day, now: .zero)
        schedule.renewalFailed(Self.strip, now: .seconds(82_800))
        #expect(schedule.isOn(Self.strip) && schedule.nextRenewal == .seconds(82_860))
        schedule.renewalFailed(Self.bulb, now: .zero)
        #expect(!schedule.isOn(Self.bulb), "a bulb that was never on is not made on by a failure")
    }

    @Test func endedIsNeitherOnNorWantedAndAStartResumesWhatWasWanted() {
        var schedule = AdaptiveLightingSchedule(wanted: [Self.strip, Self.bulb])
        #expect(!schedule.isOn(Self.strip), "wanted after a restart, on once the bulb took a curve")
        schedule.confirmed(Self.bulb, span: Self.day, now: .zero)
        let first = schedule.ended(Self.bulb)
        let second = schedule.ended(Self.bulb)
        #expect(first && !second, "ended once")
        #expect(schedule.wanted == [Self.strip] && schedule.nextRenewal == nil)
        // A curve shorter than the renewal margin is renewed a minute on, not in the past.
        schedule.confirmed(Self.strip, span: .seconds(1800), now: .seconds(5))
        #expect(schedule.nextRenewal == .seconds(65))
    }
}

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

    /// A tree with one Adaptive Lighting bulb (the characteristics HomeKit's switch needs).
    static func bulbTree() throws -> HomeTree {
        let bulb = try AccessoryBlueprint(id: "bulb", name: "Bulb", category: .lightbulb, roomID: "office", services: [
            .init(type: "lightbulb", characteristics: ["on": .bool(true), "brightness": .int(50), "color-temperature": .uint(300), "hue": .float(0),
                                                        "transition-control": .data([]), "supported-transition-configuration": .data([]),
                                                        "active-transition-count": .uint(1)]),
        ]).build()
        var tree = HomeTree(base: "homegate", homes: [Home(id: "home", name: "Home", isPrimary: true, rooms: [Room(id: "office", name: "Office")], accessories: [bulb])])
        tree.reindex()
        return tree
    }

    @Test("a colour written by hand ends it, a brightness does not; the bulb's active transition count at 0 ends it")
    func whatEndsIt() throws {
        let tree = try Self.bulbTree()
        let accessory = try #require(tree.accessory("bulb")?.accessory)
        let service = try #require(AdaptiveLightingBulb.all(of: accessory).first)
        func reference(_ type: String) throws -> CharacteristicReference {
            let found = try #require(tree.accessory("bulb")?.accessory.services.flatMap(\.characteristics).first { $0.type == type })
            return CharacteristicReference(accessoryID: "bulb", iid: found.iid)
        }
        var schedule = AdaptiveLightingSchedule()
        schedule.confirmed(service.service, span: Self.day, now: .zero)
        let brightness = CommandMachine.Result(item: CommandMachine.Item(try reference("brightness"), .write(.int(10))), outcome: .written(.int(10)))
        #expect(schedule.endByHand([brightness], in: tree).isEmpty && schedule.isOn(service.service))
        let hue = CommandMachine.Result(item: CommandMachine.Item(try reference("hue"), .write(.float(120))), outcome: .written(.float(120)))
        #expect(schedule.endByHand([hue], in: tree) == [service.service] && !schedule.isOn(service.service))
        schedule.confirmed(service.service, span: Self.day, now: .zero)
        #expect(schedule.endByBulb(.uint(1), at: try reference("active-transition-count"), in: tree) == nil)
        #expect(schedule.endByBulb(.uint(0), at: try reference("active-transition-count"), in: tree) == service.service)
        #expect(!schedule.isOn(service.service) && schedule.wanted.isEmpty)
    }
}

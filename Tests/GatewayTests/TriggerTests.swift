import Accessories
import Foundation
import HomeModel
import Logging
import MQTT
import Synchronization
import Testing
import TestSupport
@testable import Gateway
import Wire

/// Timer triggers in the engine: a simulated lamp, an in-memory bus, a manual clock for the
/// scheduler's sleeps and a wall clock the test sets. No test waits for a trigger in real time.
@Suite("Timer triggers in the gateway")
struct TriggerTests {
    static let t0 = Date(timeIntervalSince1970: 1_790_000_000) // 2026-09-21T14:13:20Z
    static let lampID: AccessoryID = "lamp"

    /// A running gateway with one home: a lamp and the action sets "Lights On" (on, brightness
    /// 80) and "Dim" (brightness 5).
    final class Harness: Sendable {
        let gateway: Gateway
        let bus = MemoryBus()
        let clock = ManualClock()
        let wall: TriggerTestWallClock
        let simulator: Simulator
        let lamp: Accessory
        let home: Home
        private let task: Task<Void, any Error>

        static func lampAccessory() throws -> Accessory {
            try AccessoryBlueprint(id: TriggerTests.lampID, name: "Lamp", category: .lightbulb, services: [
                .init(type: "lightbulb", name: "Lamp", characteristics: ["on": .bool(false), "brightness": .int(10)]),
            ]).build()
        }

        static func reference(_ type: String, of lamp: Accessory) -> CharacteristicReference {
            let iid = lamp.services.compactMap { $0.characteristic(ofType: type) }.first!.iid
            return CharacteristicReference(accessoryID: lamp.id, iid: iid)
        }

        static func home(triggers: [TimerTrigger]) throws -> Home {
            let lamp = try lampAccessory()
            return Home(id: "home", name: "Home", isPrimary: true, accessories: [lamp], actionSets: [
                ActionSet(id: "lights-on", name: "Lights On", actions: [
                    .init(characteristic: reference("on", of: lamp), value: .bool(true)),
                    .init(characteristic: reference("brightness", of: lamp), value: .int(80)),
                ]),
                ActionSet(id: "dim", name: "Dim", actions: [.init(characteristic: reference("brightness", of: lamp), value: .int(5))]),
            ], triggers: triggers)
        }

        /// Starts a gateway on `homes` (a home of ``home(triggers:)`` if nil) at wall time `now`.
        init(triggers: [TimerTrigger] = [], homes: [Home]? = nil, now: Date = TriggerTests.t0, grace: Duration = .seconds(300)) throws {
            let homes = try homes ?? [Self.home(triggers: triggers)]
            home = homes[0]
            lamp = try Self.lampAccessory()
            simulator = Simulator(devices: [Simulator.Device(accessory: lamp)], seed: 1)
            let wall = TriggerTestWallClock(now)
            self.wall = wall
            let configuration = Gateway.Configuration(baseTopic: try TopicName("homegate"), missedTriggerGrace: grace, clock: clock,
                                                      now: { wall.now }, calendar: TriggerSchedule.calendar(in: TimeZone(identifier: "UTC")!))
            gateway = Gateway(configuration: configuration, bus: bus, driver: simulator, simulator: simulator, store: nil, homes: homes,
                              logger: Logger(label: "trigger-tests") { _ in SwiftLogNoOpLogHandler() })
            let gateway = gateway
            task = Task { try await gateway.run() }
        }

        deinit { task.cancel() }

        func stop() async {
            task.cancel()
            _ = await task.result
        }

        var now: Date { wall.now }

        /// Moves the wall clock and the scheduler's clock on by `seconds` (`monotonic`: the
        /// scheduler's clock by a different amount, as when the machine slept or the wall clock
        /// was set). The wall clock moves first: the scheduler reads its clock before the wall
        /// clock, so a look that falls between the two moves sees the new time or wakes at once.
        func advance(by seconds: TimeInterval, monotonic: TimeInterval? = nil) {
            wall.advance(by: seconds)
            clock.advance(by: .milliseconds(Int64(((monotonic ?? seconds) * 1000).rounded())))
        }

        /// Returns once the scheduler sleeps after a look at the triggers that saw everything
        /// done before this call: a change rang the alarm (a sleep of a later generation has
        /// begun), the clock moved (the earlier sleeper has left the clock).
        func schedulerAsleep() async {
            let generation = await gateway.triggerAlarm.generation
            let deadline = ContinuousClock.now + HangGuard.standard
            while ContinuousClock.now < deadline {
                if let latest = await gateway.triggerAlarm.latestSleep, latest >= generation, clock.sleeperCount >= 1 { return }
                try? await Task.sleep(for: .milliseconds(1))
            }
            Issue.record("the trigger scheduler did not go to sleep within \(HangGuard.standard)")
        }

        /// The `$events` of kind `kind`, decoded, once there are at least `count`.
        func events(_ kind: String, count: Int = 1) async throws -> [[String: Any]] {
            let messages = try await bus.waitFor(count) { message in
                message.topic.string == "homegate/$events" && (try? Self.decode(message))?["event"] as? String == kind
            }
            return try messages.map(Self.decode)
        }

        /// Every `$events` message so far, decoded.
        func allEvents() throws -> [[String: Any]] {
            try bus.sent.value.filter { $0.topic.string == "homegate/$events" }.map(Self.decode)
        }

        static func decode(_ message: Message) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
        }

        func triggers() async -> [TimerTrigger] {
            await gateway.tree.homes[0].triggers
        }

        func value(_ type: String) async throws -> Value {
            try await simulator.read(Self.reference(type, of: lamp))
        }

        /// The topic of the lamp's characteristic `type`.
        func topic(_ type: String) -> String? {
            TopicMap(base: "homegate", homes: [home]).topic(of: .characteristic(home.id, Self.reference(type, of: lamp)))
        }

        /// The retained value last published for the lamp's characteristic `type`.
        func publishedValue(_ type: String) -> String? {
            let topic = topic(type)
            return bus.sent.value.last { $0.topic.string == topic && $0.retain }?.payloadString
        }
    }

    static func iso(_ date: Date) -> String {
        date.ISO8601Format()
    }

    // MARK: Firing

    @Test("a trigger fires its action sets at its date and announces trigger-fired with their results")
    func firesAtItsDate() async throws {
        let wake = TimerTrigger(id: "wake", name: "Wake Up", fireDate: Self.t0.addingTimeInterval(30), actionSetIDs: ["lights-on", "dim"])
        let harness = try Harness(triggers: [wake])
        await harness.schedulerAsleep()
        #expect(try harness.allEvents().isEmpty)
        #expect(try await harness.value("on") == .bool(false))

        harness.advance(by: 30)
        let fired = try #require(try await harness.events("trigger-fired").first)
        #expect(fired["home"] as? String == "Home")
        #expect(fired["trigger"] as? String == "Wake Up")
        #expect(fired["fireDate"] as? String == Self.iso(wake.fireDate))
        #expect(fired["late"] as? Bool == false)
        #expect(fired["lateSeconds"] == nil)
        #expect(fired["missed"] as? Int == 0)
        #expect(fired["next"] is NSNull, "a one-time trigger has no next occurrence")
        #expect(fired["ok"] as? Bool == true)
        let results = try #require(fired["results"] as? [[String: Any]])
        #expect(results.map { $0["actionSet"] as? String } == ["Lights On", "Dim"])
        #expect(results.map { $0["ok"] as? Bool } == [true, true])
        let writes = try #require(results.first?["results"] as? [[String: Any]])
        #expect(writes.count == 2)
        #expect(writes.allSatisfy { $0["ok"] as? Bool == true && $0["accessory"] as? String == "lamp" && $0["status"] as? Int == 0 })
        #expect(writes.compactMap { $0["topic"] as? String }.sorted() == [harness.topic("brightness"), harness.topic("on")].compactMap(\.self).sorted())
        #expect(writes.count == 2)

        // The action sets ran (each announced on its own too, with the cause).
        let executed = try await harness.events("action-set-executed", count: 2)
        #expect(Set(executed.compactMap { $0["actionSet"] as? String }) == ["Lights On", "Dim"])
        #expect(executed.allSatisfy { $0["cause"] as? String == "trigger" })
        #expect(try await harness.value("on") == .bool(true))
        #expect(harness.publishedValue("on") == "true")
        // The fire is recorded; a one-time trigger is then done.
        #expect(await harness.triggers().first?.lastFireDate == wake.fireDate)
        await harness.schedulerAsleep()
        harness.advance(by: 3600)
        await harness.schedulerAsleep()
        #expect(try harness.allEvents().filter { $0["event"] as? String == "trigger-fired" }.count == 1)
        await harness.stop()
    }

    @Test("a recurring trigger fires again at each occurrence")
    func recurring() async throws {
        let every = TimerTrigger(id: "every", name: "Every Minute", fireDate: Self.t0.addingTimeInterval(60),
                                 recurrence: .init(unit: .minute, every: 1), actionSetIDs: ["dim"])
        let harness = try Harness(triggers: [every])
        for occurrence in 1...3 {
            await harness.schedulerAsleep()
            harness.advance(by: 60)
            let fired = try await harness.events("trigger-fired", count: occurrence)
            let date = Self.t0.addingTimeInterval(60 * Double(occurrence))
            #expect(fired.last?["fireDate"] as? String == Self.iso(date))
            #expect(fired.last?["next"] as? String == Self.iso(date.addingTimeInterval(60)))
            #expect(fired.last?["late"] as? Bool == false)
        }
        #expect(await harness.triggers().first?.lastFireDate == Self.t0.addingTimeInterval(180))
        await harness.stop()
    }

    @Test("a disabled trigger does not fire; an enabled one beside it does")
    func disabled() async throws {
        let off = TimerTrigger(id: "off", name: "Off", fireDate: Self.t0.addingTimeInterval(30), actionSetIDs: ["lights-on"], isEnabled: false)
        let on = TimerTrigger(id: "on", name: "On", fireDate: Self.t0.addingTimeInterval(60), actionSetIDs: ["dim"])
        let harness = try Harness(triggers: [off, on])
        await harness.schedulerAsleep()
        harness.advance(by: 60)
        let fired = try await harness.events("trigger-fired")
        #expect(fired.map { $0["trigger"] as? String } == ["On"])
        await harness.schedulerAsleep()
        #expect(try harness.allEvents().filter { ($0["event"] as? String)?.hasPrefix("trigger-") == true }.count == 1)
        #expect(await harness.triggers().map(\.lastFireDate) == [nil, on.fireDate])
        #expect(try await harness.value("on") == .bool(false), "Lights On never ran")
        await harness.stop()
    }

    @Test("a failing write makes the fire not ok, with the device's status")
    func failingWrite() async throws {
        let wake = TimerTrigger(id: "wake", name: "Wake Up", fireDate: Self.t0.addingTimeInterval(10), actionSetIDs: ["dim", "gone"])
        let harness = try Harness(triggers: [wake])
        try await harness.simulator.setReachable(Self.lampID, false)
        await harness.schedulerAsleep()
        harness.advance(by: 10)
        let fired = try #require(try await harness.events("trigger-fired").first)
        #expect(fired["ok"] as? Bool == false)
        let results = try #require(fired["results"] as? [[String: Any]])
        #expect(results.map { $0["actionSet"] as? String } == ["Dim", "gone"])
        #expect(results.map { $0["ok"] as? Bool } == [false, false])
        #expect((results[0]["results"] as? [[String: Any]])?.first?["status"] as? Int == HAPStatus.communicationFailure.rawValue)
        #expect(results[1]["message"] as? String == "no such action set")
        await harness.stop()
    }

    // MARK: Changes while running

    @Test("a trigger added while the gateway runs wakes the scheduler; past occurrences of a new or re-enabled trigger are not missed fires")
    func changesWakeTheScheduler() async throws {
        let paused = TimerTrigger(id: "paused", name: "Paused", fireDate: Self.t0.addingTimeInterval(-7200),
                                  recurrence: .init(unit: .hour, every: 1), actionSetIDs: ["dim"], isEnabled: false)
        let harness = try Harness(triggers: [paused])
        await harness.schedulerAsleep() // nothing ahead: it sleeps the longest sleep, 60 s

        // Added with a date 5 s ahead: without a wake-up the scheduler would sleep on for 60 s.
        let soon = TimerTrigger(id: "soon", name: "Soon", fireDate: Self.t0.addingTimeInterval(5), actionSetIDs: ["lights-on"])
        // Added with a past date, recurring (its occurrences: t0 - 3535 s, t0 + 65 s, ...): it
        // waits for its next occurrence, nothing missed.
        let past = TimerTrigger(id: "past", name: "Past", fireDate: Self.t0.addingTimeInterval(-3535),
                                recurrence: .init(unit: .hour, every: 1), actionSetIDs: ["dim"])
        await harness.gateway.changeTriggers { $0.append(contentsOf: [soon, past]) }
        // Enabled again long after its last occurrence.
        await harness.gateway.changeTriggers { $0[0].isEnabled = true }
        await harness.schedulerAsleep()
        #expect(try harness.allEvents().isEmpty, "no trigger-fired, no trigger-missed")
        let armed = await harness.triggers()
        #expect(armed.map(\.lastFireDate) == [Self.t0, nil, Self.t0])

        harness.advance(by: 5)
        let fired = try await harness.events("trigger-fired")
        #expect(fired.map { $0["trigger"] as? String } == ["Soon"])
        #expect(fired.first?["late"] as? Bool == false)

        // The one added with a past date fires at its next occurrence, on time.
        await harness.schedulerAsleep()
        harness.advance(by: 60)
        let more = try await harness.events("trigger-fired", count: 2)
        #expect(more.last?["trigger"] as? String == "Past")
        #expect(more.last?["fireDate"] as? String == Self.iso(Self.t0.addingTimeInterval(65)))
        #expect(more.last?["late"] as? Bool == false)
        // The re-enabled one waits for its next hour (t0 is on its grid; next: t0 + 1 h).
        #expect(await harness.triggers().first?.lastFireDate == Self.t0)
        #expect(try harness.allEvents().allSatisfy { $0["event"] as? String != "trigger-missed" })
        await harness.stop()
    }

    @Test("the scheduler sleeps at most a minute: a wall clock that jumped (a machine that slept) does not hold a trigger back")
    func wallClockJump() async throws {
        let later = TimerTrigger(id: "later", name: "Later", fireDate: Self.t0.addingTimeInterval(7200), actionSetIDs: ["dim"])
        let harness = try Harness(triggers: [later])
        await harness.schedulerAsleep()
        // Two hours pass on the wall clock, one minute on the scheduler's clock.
        harness.advance(by: 7200, monotonic: 60)
        let fired = try await harness.events("trigger-fired")
        #expect(fired.first?["trigger"] as? String == "Later")
        #expect(fired.first?["late"] as? Bool == false)
        await harness.stop()
    }

    // MARK: The missed-fire policy at start, and a restart

    @Test("at start: one missed a minute ago fires late, one missed an hour ago is skipped, several missed fire once; after a restart none again")
    func missedWhileDown() async throws {
        let t0 = Self.t0
        let triggers = [
            TimerTrigger(id: "minute-ago", name: "Minute Ago", fireDate: t0.addingTimeInterval(-60), actionSetIDs: ["lights-on"]),
            TimerTrigger(id: "hour-ago", name: "Hour Ago", fireDate: t0.addingTimeInterval(-3600), actionSetIDs: ["dim"]),
            // Every minute; last fired 10.5 minutes ago: 10 occurrences missed, the latest 30 s ago.
            TimerTrigger(id: "every", name: "Every Minute", fireDate: t0.addingTimeInterval(-3630), recurrence: .init(unit: .minute, every: 1),
                         actionSetIDs: ["dim"], lastFireDate: t0.addingTimeInterval(-630)),
            TimerTrigger(id: "off", name: "Off", fireDate: t0.addingTimeInterval(-60), actionSetIDs: ["dim"], isEnabled: false),
        ]
        let harness = try Harness(triggers: triggers)
        let fired = try await harness.events("trigger-fired", count: 2)
        let missed = try await harness.events("trigger-missed")
        await harness.schedulerAsleep()

        let byName = Dictionary(uniqueKeysWithValues: fired.map { ($0["trigger"] as? String ?? "", $0) })
        #expect(Set(byName.keys) == ["Minute Ago", "Every Minute"])
        let minute = try #require(byName["Minute Ago"])
        #expect(minute["late"] as? Bool == true)
        #expect(minute["lateSeconds"] as? Double == 60)
        #expect(minute["fireDate"] as? String == Self.iso(t0.addingTimeInterval(-60)))
        #expect(minute["ok"] as? Bool == true)
        let every = try #require(byName["Every Minute"])
        #expect(every["late"] as? Bool == true)
        #expect(every["lateSeconds"] as? Double == 30)
        #expect(every["missed"] as? Int == 9)
        #expect(every["fireDate"] as? String == Self.iso(t0.addingTimeInterval(-30)))
        #expect(every["next"] as? String == Self.iso(t0.addingTimeInterval(30)))

        #expect(missed.count == 1)
        #expect(missed.first?["trigger"] as? String == "Hour Ago")
        #expect(missed.first?["home"] as? String == "Home")
        #expect(missed.first?["missed"] as? Int == 1)
        #expect(missed.first?["fireDate"] as? String == Self.iso(t0.addingTimeInterval(-3600)))
        #expect(missed.first?["lateSeconds"] as? Double == 3600)
        #expect(missed.first?["next"] is NSNull)
        #expect(try await harness.value("on") == .bool(true), "Minute Ago ran Lights On")

        let recorded = await harness.triggers()
        #expect(recorded.map(\.lastFireDate) == [t0.addingTimeInterval(-60), t0.addingTimeInterval(-3600), t0.addingTimeInterval(-30), nil])
        let homes = await harness.gateway.tree.homes
        await harness.stop()

        // A restart at the same moment with what was recorded: nothing fires or is skipped again.
        let restarted = try Harness(homes: homes, now: t0)
        await restarted.schedulerAsleep()
        #expect(try restarted.allEvents().isEmpty)
        #expect(await restarted.triggers() == recorded)
        // The recurring one goes on at its next occurrence, on time.
        restarted.advance(by: 30)
        let next = try await restarted.events("trigger-fired")
        #expect(next.map { $0["trigger"] as? String } == ["Every Minute"])
        #expect(next.first?["late"] as? Bool == false)
        #expect(next.first?["missed"] as? Int == 0)
        await restarted.stop()
    }

    @Test("with a grace period of 0 a missed trigger is never fired late")
    func noGrace() async throws {
        let trigger = TimerTrigger(id: "minute-ago", name: "Minute Ago", fireDate: Self.t0.addingTimeInterval(-60), actionSetIDs: ["lights-on"])
        let harness = try Harness(triggers: [trigger], grace: .zero)
        let missed = try await harness.events("trigger-missed")
        #expect(missed.first?["trigger"] as? String == "Minute Ago")
        await harness.schedulerAsleep()
        #expect(try harness.allEvents().filter { $0["event"] as? String == "trigger-fired" }.isEmpty)
        #expect(try await harness.value("on") == .bool(false))
        await harness.stop()
    }
}

extension Gateway {
    /// Changes the first home's triggers as a management request would.
    func changeTriggers(_ change: (inout [TimerTrigger]) -> Void) {
        change(&tree.homes[0].triggers)
        layoutDidChange(saving: true)
    }
}

/// The wall-clock time the gateway sees: set by the test.
final class TriggerTestWallClock: Sendable {
    private let date: Mutex<Date>

    init(_ date: Date) {
        self.date = Mutex(date)
    }

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}



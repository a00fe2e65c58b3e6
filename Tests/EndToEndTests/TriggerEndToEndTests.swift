import Foundation
import HomeModel
import HomeStore
import Testing
import TestSupport

/// Timer triggers through the real binary and a real broker. There is no request to add a
/// trigger yet, so the tests put action sets and triggers into the store of a stopped gateway
/// (the demo home, started once so that its store holds the layout) and start it again.
@Suite("timer triggers end to end", .startsProcesses)
struct TriggerEndToEndTests {
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb"
    static let lampID: AccessoryID = "sim-lamp-1"

    /// Runs the demo once, stops it, and lets `seed` change the stored primary home (`seed` gets
    /// the home and a way to find the lamp's characteristics by type). Returns the stopped
    /// fixture: its broker still runs, its folder holds the changed store.
    static func seededDemo(_ seed: (inout Home, (String) throws -> CharacteristicReference) throws -> Void) async throws -> GatewayFixture {
        let fixture = try await GatewayFixture.demo()
        try await fixture.stop(keepBroker: true)
        let store = try HomeStore(directory: fixture.folder.appendingPathComponent("data").path)
        var homes = try store.loadHomes()
        let primary = homes.firstIndex { $0.isPrimary }
        let index = try #require(primary, "the store has a primary home")
        let lamp = try #require(homes[index].accessory(lampID), "the demo's floor lamp is in the store")
        try seed(&homes[index]) { type in
            let characteristic = try #require(lamp.services.compactMap { $0.characteristic(ofType: type) }.first, "the lamp has \(type)")
            return CharacteristicReference(accessoryID: lampID, iid: characteristic.iid)
        }
        try store.saveHomes(homes)
        return fixture
    }

    /// Starts the gateway again on the stopped fixture's folder and broker.
    static func restart(_ stopped: GatewayFixture) async throws -> GatewayFixture {
        try await GatewayFixture.start(config: GatewayFixture.demoText(), broker: stopped.broker, folder: stopped.folder)
    }

    /// The `$events` of kind `kind` the fixture's watcher has seen, decoded, once there are `count`.
    static func events(_ kind: String, count: Int = 1, on fixture: GatewayFixture, timeout: Duration = HangGuard.standard) async throws -> [[String: Any]] {
        let messages = try await fixture.watcher.inbox.collect(count, timeout: timeout) { message in
            message.topic.string == "\(fixture.base)/$events" && message.payloadString.contains("\"event\":\"\(kind)\"")
        }
        return try messages.map { try GatewayFixture.decode($0.payload) }
    }

    /// Every `trigger-...` event the fixture's watcher has seen so far.
    static func triggerEvents(on fixture: GatewayFixture) -> [String] {
        fixture.watcher.inbox.all.filter { $0.topic.string == "\(fixture.base)/$events" && $0.payloadString.contains("\"event\":\"trigger-") }
            .map(\.payloadString)
    }

    /// Each stored trigger's last fire date, by trigger name: seconds since 1970 to the
    /// millisecond (a date goes through the store as a double of seconds since 1970).
    static func lastFireDates(in folder: URL) throws -> [String: Double?] {
        let homes = try HomeStore(directory: folder.appendingPathComponent("data").path).loadHomes()
        return Dictionary(uniqueKeysWithValues: homes.flatMap(\.triggers).map { ($0.name, $0.lastFireDate.map(milliseconds)) })
    }

    static func milliseconds(_ date: Date) -> Double {
        (date.timeIntervalSince1970 * 1000).rounded() / 1000
    }

    @Test("a trigger stored while the gateway was down fires at its date after a restart, and not again after another restart")
    func firesAfterRestart() async throws {
        var fireDate = Date()
        let stopped = try await Self.seededDemo { home, reference in
            home.actionSets.append(ActionSet(id: "evening", name: "Evening", actions: [
                .init(characteristic: try reference("on"), value: .bool(true)),
                .init(characteristic: try reference("brightness"), value: .int(77)),
            ]))
            fireDate = Date().addingTimeInterval(3)
            home.triggers.append(TimerTrigger(id: "soon", name: "Soon", fireDate: fireDate, actionSetIDs: ["evening"]))
        }
        let fixture = try await Self.restart(stopped)
        let fired = try #require(try await Self.events("trigger-fired", on: fixture).first)
        #expect(fired["home"] as? String == "Demo Home")
        #expect(fired["trigger"] as? String == "Soon")
        #expect(fired["fireDate"] as? String == fireDate.ISO8601Format())
        #expect(fired["late"] as? Bool == false)
        #expect(fired["ok"] as? Bool == true)
        let results = try #require(fired["results"] as? [[String: Any]])
        #expect(results.count == 1)
        #expect(results.first?["actionSet"] as? String == "Evening")
        #expect(results.first?["ok"] as? Bool == true)
        let writes = try #require(results.first?["results"] as? [[String: Any]])
        #expect(Set(writes.compactMap { $0["topic"] as? String }) == ["\(Self.lamp)/on", "\(Self.lamp)/brightness"])
        #expect(writes.allSatisfy { $0["ok"] as? Bool == true })
        // The lamp's retained values changed.
        _ = try await fixture.watcher.inbox.first(on: "\(Self.lamp)/on", payload: "true")
        _ = try await fixture.watcher.inbox.first(on: "\(Self.lamp)/brightness", payload: "77")
        let retained = try await fixture.retained()
        #expect(retained["\(Self.lamp)/on"] == "true")
        #expect(retained["\(Self.lamp)/brightness"] == "77")
        try await fixture.stop(keepBroker: true)
        #expect(try Self.lastFireDates(in: fixture.folder)["Soon"] == .some(Self.milliseconds(fireDate)))

        // Another restart: the one-time trigger is done, nothing fires or is missed.
        let again = try await Self.restart(fixture)
        // The first look at the triggers comes before the synchronisation ends. A marker after
        // it: a room added now is announced on `$events` after anything the gateway published
        // before, on the same connection, so once its event is here, a trigger's would be too.
        _ = try await again.retained()
        let marker = try await again.request("room/add", #"{"name": "Marker Room"}"#)
        #expect(marker["ok"] as? Bool == true, "\(marker)")
        _ = try await again.watcher.inbox.first { $0.topic.string == "\(again.base)/$events" && $0.payloadString.contains("Marker Room") }
        #expect(Self.triggerEvents(on: again).isEmpty)
        #expect(!again.gateway.output.contains("trigger \"Soon\""))
        #expect(try await again.retained()["\(Self.lamp)/on"] == "false", "the simulator starts from the configuration; the trigger did not run")
        try await again.stop()
        #expect(try Self.lastFireDates(in: fixture.folder)["Soon"] == .some(Self.milliseconds(fireDate)))
    }

    @Test("missed while the gateway was down: a minute ago fires once, late; an hour ago is skipped (trigger-missed)")
    func missedWhileDown() async throws {
        var start = Date()
        let stopped = try await Self.seededDemo { home, reference in
            home.actionSets.append(ActionSet(id: "late", name: "Late", actions: [.init(characteristic: try reference("brightness"), value: .int(55))]))
            home.actionSets.append(ActionSet(id: "too-late", name: "Too Late", actions: [
                .init(characteristic: try reference("on"), value: .bool(true)),
                .init(characteristic: try reference("brightness"), value: .int(11)),
            ]))
            start = Date()
            home.triggers.append(TimerTrigger(id: "minute-ago", name: "Minute Ago", fireDate: start.addingTimeInterval(-60), actionSetIDs: ["late"]))
            home.triggers.append(TimerTrigger(id: "hour-ago", name: "Hour Ago", fireDate: start.addingTimeInterval(-3600),
                                              actionSetIDs: ["too-late"]))
        }
        let fixture = try await Self.restart(stopped)
        let fired = try await Self.events("trigger-fired", on: fixture)
        let missed = try await Self.events("trigger-missed", on: fixture)
        #expect(fired.count == 1)
        #expect(fired.first?["trigger"] as? String == "Minute Ago")
        #expect(fired.first?["late"] as? Bool == true)
        let lateness = try #require(fired.first?["lateSeconds"] as? Double)
        #expect(lateness >= 60 && lateness < 300, "\(lateness)")
        #expect(fired.first?["ok"] as? Bool == true)
        #expect(missed.count == 1)
        #expect(missed.first?["trigger"] as? String == "Hour Ago")
        #expect(missed.first?["missed"] as? Int == 1)
        #expect(missed.first?["fireDate"] as? String == start.addingTimeInterval(-3600).ISO8601Format())
        _ = try await fixture.watcher.inbox.first(on: "\(Self.lamp)/brightness", payload: "55")
        let retained = try await fixture.retained()
        #expect(retained["\(Self.lamp)/brightness"] == "55")
        #expect(retained["\(Self.lamp)/on"] == "false", "the skipped trigger's action set did not run")
        #expect(!fixture.watcher.inbox.all.contains { $0.topic.string == "\(Self.lamp)/brightness" && $0.payloadString == "11" })
        #expect(Self.triggerEvents(on: fixture).count == 2, "each trigger announced once")
        try await fixture.stop()
        let recorded = try Self.lastFireDates(in: fixture.folder)
        #expect(recorded["Minute Ago"] == .some(Self.milliseconds(start.addingTimeInterval(-60))))
        #expect(recorded["Hour Ago"] == .some(Self.milliseconds(start.addingTimeInterval(-3600))))
    }
}

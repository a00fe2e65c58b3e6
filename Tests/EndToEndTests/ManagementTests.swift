import Foundation
import MQTT
import Testing
import TestSupport

/// Section 7 end to end on the demo home: each kind of request through the real broker and
/// binary, topics moving with no stale retained topic, HomeKit's room and bridge rules, action
/// sets, group and zone writes with one aggregated acknowledgement.
@Suite(.serialized, .startsProcesses) struct ManagementTests {
    /// Waits until the watcher sees a message satisfying `condition` (the layout republished,
    /// a value published), then takes a snapshot of everything retained.
    static func after(_ fixture: GatewayFixture, _ condition: @escaping @Sendable (Message) -> Bool) async throws -> [String: String] {
        _ = try await fixture.watcher.inbox.first(timeout: HangGuard.standard, where: condition)
        return try await fixture.retained()
    }

    /// Waits until the layout (its parts joined) satisfies `condition`, then takes a snapshot of
    /// everything retained.
    static func afterLayout(_ fixture: GatewayFixture, where condition: @escaping @Sendable (String) -> Bool) async throws -> [String: String] {
        try await fixture.currentLayout { condition(LayoutAssembly.text(of: $0)) }
        return try await fixture.retained()
    }

    /// The iid of a service (by type) or of a characteristic (by service type and type) in `$layout`.
    static func iid(_ layout: [String: Any], accessory: String, service: String, characteristic: String? = nil) -> Int? {
        for home in layout["homes"] as? [[String: Any]] ?? [] {
            for entry in home["accessories"] as? [[String: Any]] ?? [] where entry["id"] as? String == accessory {
                for candidate in entry["services"] as? [[String: Any]] ?? [] where candidate["type"] as? String == service {
                    guard let characteristic else { return candidate["iid"] as? Int }
                    let found = (candidate["characteristics"] as? [[String: Any]] ?? []).first { $0["type"] as? String == characteristic }
                    return found?["iid"] as? Int
                }
            }
        }
        return nil
    }

    static func roomOf(_ layout: [String: Any], _ accessory: String) -> String? {
        for home in layout["homes"] as? [[String: Any]] ?? [] {
            for entry in home["accessories"] as? [[String: Any]] ?? [] where entry["id"] as? String == accessory {
                return entry["room"] as? String
            }
        }
        return nil
    }

    @Test func aRoomRenameMovesEveryTopicBeneathItWithNoStaleRetainedTopic() async throws {
        let fixture = try await GatewayFixture.demo()
        let answer = try await fixture.request("room/rename", #"{"room": "living room", "newName": "Lounge", "transaction": 7}"#)
        #expect(answer["ok"] as? Bool == true)
        #expect(answer["transaction"] as? Int == 7)
        let retained = try await Self.afterLayout(fixture) { $0.contains("\"Lounge\"") }
        #expect(!retained.keys.contains { $0.contains("/living-room/") }, "old topics cleared: \(retained.keys.filter { $0.contains("living-room") })")
        try TreeContractTests.expectExactlyTheLayoutsTopics(retained)
        try await fixture.stop()
    }

    @Test func removingARoomSendsItsAccessoriesToTheDefaultRoomAndABridgeMovesAlone() async throws {
        let fixture = try await GatewayFixture.demo()
        #expect(try await fixture.request("room/remove", #"{"room": "Kitchen"}"#)["ok"] as? Bool == true)
        #expect(try await fixture.request("accessory/assign-room", #"{"accessory": "sim-hue-bridge", "room": "Garage"}"#)["ok"] as? Bool == true)
        let retained = try await Self.afterLayout(fixture) { text in
            !text.contains("\"Kitchen\"") && text.contains("homegate/demo-home/garage/hue-bridge")
        }
        let layout = try TreeContractTests.expectExactlyTheLayoutsTopics(retained)
        #expect(Self.roomOf(layout, "sim-kitchen-sensor") == "Default Room")
        #expect(Self.roomOf(layout, "sim-coffee-machine") == "Default Room")
        #expect(Self.roomOf(layout, "sim-hue-bridge") == "Garage")
        #expect(Self.roomOf(layout, "sim-hue-bedside") == "Bedroom")
        #expect(Self.roomOf(layout, "sim-hue-ceiling") == "Living Room")
        try await fixture.stop()
    }

    @Test func errorsAreSpecificAndChangeNothing() async throws {
        let fixture = try await GatewayFixture.demo()
        #expect(try await fixture.request("room/add", #"{"name": "Bad/Name"}"#)["error"] as? String == "invalid-name")
        #expect(try await fixture.request("room/add", #"{"name": "kitchen"}"#)["error"] as? String == "name-in-use")
        #expect(try await fixture.request("room/add", #"{"name": "Living'Room"}"#)["error"] as? String == "name-in-use")
        #expect(try await fixture.request("room/remove", #"{"room": "Cellar"}"#)["error"] as? String == "not-found")
        #expect(try await fixture.request("room/remove", #"{"room": "Default Room"}"#)["error"] as? String == "not-allowed")
        #expect(try await fixture.request("room/paint", #"{"room": "Kitchen"}"#)["error"] as? String == "unknown-request")
        #expect(try await fixture.request("room/add", #"{"title": "Attic"}"#)["error"] as? String == "invalid-request")
        #expect(try await fixture.request("zone/add-room", #"{"zone": "Upstairs", "room": "Nowhere"}"#)["error"] as? String == "not-found")
        #expect(try await fixture.request("home/remove", #"{"home": "Holiday Home"}"#)["error"] as? String == "not-found")
        let layout = try await fixture.layout()
        let rooms = ((layout["homes"] as? [[String: Any]])?.first?["rooms"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(rooms == ["Default Room", "Living Room", "Kitchen", "Hallway", "Garage", "Bedroom"])
        try await fixture.stop()
    }

    @Test func anActionSetGivesOneAcknowledgementWithEachWritesOutcome() async throws {
        let fixture = try await GatewayFixture.demo()
        let layout = try await fixture.layout()
        let lampOn = try #require(Self.iid(layout, accessory: "sim-lamp-1", service: "lightbulb", characteristic: "on"))
        let outletOn = try #require(Self.iid(layout, accessory: "sim-tv-outlet", service: "outlet", characteristic: "on"))
        let bedsideOn = try #require(Self.iid(layout, accessory: "sim-hue-bedside", service: "lightbulb", characteristic: "on"))
        #expect(try await fixture.request("action-set/add", #"{"name": "Evening"}"#)["ok"] as? Bool == true)
        for (accessory, iid, value) in [("sim-lamp-1", lampOn, "true"), ("sim-tv-outlet", outletOn, "false"), ("sim-hue-bedside", bedsideOn, "true")] {
            let answer = try await fixture.request("action-set/add-action", #"{"actionSet": "Evening", "accessory": "\#(accessory)", "characteristic": \#(iid), "value": \#(value)}"#)
            #expect(answer["ok"] as? Bool == true, "\(answer)")
        }
        // The bridge behind the bedside lamp drops off: that write fails, the others succeed.
        #expect(try await fixture.request("simulator/reachability", #"{"accessory": "sim-hue-bridge", "reachable": false}"#)["ok"] as? Bool == true)
        let ack = try await fixture.command("homegate/demo-home/$action-sets/evening/execute", "")
        #expect(ack["ok"] as? Bool == false)
        let results = try #require(ack["results"] as? [[String: Any]])
        #expect(results.count == 3)
        #expect(results.filter { $0["ok"] as? Bool == true }.count == 2)
        let failed = try #require(results.first { $0["ok"] as? Bool == false })
        #expect(failed["accessory"] as? String == "sim-hue-bedside")
        #expect(failed["status"] as? Int == -70402)
        let retained = try await Self.after(fixture) { $0.topic.string == "homegate/demo-home/living-room/floor-lamp/lightbulb/on" && $0.payloadString == "true" }
        #expect(retained["homegate/demo-home/living-room/floor-lamp/lightbulb/on"] == "true")
        // The request form answers the same way.
        let answer = try await fixture.request("action-set/execute", #"{"actionSet": "evening"}"#)
        #expect(answer["ok"] as? Bool == true)
        #expect(((answer["data"] as? [String: Any])?["results"] as? [Any])?.count == 3)
        try await fixture.stop()
    }

    @Test func aGroupWriteAndAZoneWriteReachEveryMatchingService() async throws {
        let fixture = try await GatewayFixture.demo()
        let layout = try await fixture.layout()
        let lamp = try #require(Self.iid(layout, accessory: "sim-lamp-1", service: "lightbulb"))
        let ceiling = try #require(Self.iid(layout, accessory: "sim-hue-ceiling", service: "lightbulb"))
        #expect(try await fixture.request("service-group/add", #"{"name": "Reading Lights"}"#)["ok"] as? Bool == true)
        for (accessory, iid) in [("sim-lamp-1", lamp), ("sim-hue-ceiling", ceiling)] {
            let answer = try await fixture.request("service-group/add-service", #"{"group": "Reading Lights", "accessory": "\#(accessory)", "service": \#(iid)}"#)
            #expect(answer["ok"] as? Bool == true, "\(answer)")
        }
        let group = try await fixture.command("homegate/demo-home/$groups/reading-lights/brightness/set", "25")
        #expect(group["ok"] as? Bool == true, "\(group)")
        #expect((group["results"] as? [Any])?.count == 2)
        let afterGroup = try await Self.after(fixture) {
            $0.topic.string == "homegate/demo-home/living-room/ceiling-light/lightbulb/brightness" && $0.payloadString == "25"
        }
        #expect(afterGroup["homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"] == "25")
        #expect(afterGroup["homegate/demo-home/living-room/ceiling-light/lightbulb/brightness"] == "25")

        let zone = try await fixture.command("homegate/demo-home/$zones/upstairs/lightbulb/on/set", "true")
        #expect(zone["ok"] as? Bool == true, "\(zone)")
        let results = try #require(zone["results"] as? [[String: Any]])
        #expect(results.map { $0["accessory"] as? String } == ["sim-hue-bedside"])
        let bad = try await fixture.command("homegate/demo-home/$groups/reading-lights/brightness/set", "250")
        #expect(bad["ok"] as? Bool == false)
        #expect((bad["results"] as? [[String: Any]])?.allSatisfy { $0["status"] as? Int == -70410 } == true)
        try await fixture.stop()
    }
}

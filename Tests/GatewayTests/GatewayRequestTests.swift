import HomeModel
import Testing
import Wire
@testable import Gateway

/// The one router's parsing: every `$request/<object>/<verb>` becomes a ``GatewayRequest`` (or
/// its error) before anything is looked up; the simulator's controls name characteristics as the
/// other requests do, through the one resolver (``Management/resolve(_:_:home:)``).
@Suite("Requests: one router, one resolver")
struct GatewayRequestTests {
    static func parse(_ path: String, _ body: [String: JSON] = [:]) throws -> GatewayRequest {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        return try GatewayRequest(object: parts[0], verb: parts.count > 1 ? parts[1] : "", body: body)
    }

    @Test("each kind of request parses into its own case")
    func kinds() throws {
        #expect(try Self.parse("gateway/statistics", ["reset": true]) == .statistics(reset: true))
        #expect(try Self.parse("gateway/statistics") == .statistics(reset: false))
        #expect(try Self.parse("room/add", ["name": "Attic"]) == .management(try ManagementRequest(object: "room", verb: "add", body: ["name": "Attic"])))
        #expect(try Self.parse("history/get", ["characteristic": "homegate/a/b/c/d"])
            == .history(HistoryRequest(characteristic: .topic("homegate/a/b/c/d"))))
        #expect(try Self.parse("simulator/reachability", ["accessory": "lamp", "reachable": false])
            == .simulator(.reachability(accessory: "lamp", reachable: false)))
    }

    @Test("the simulator's controls: a characteristic by iid, by topic or by type (in a service); behaviour's failure set, cleared or unchanged")
    func simulatorControls() throws {
        #expect(try SimulatorRequest(verb: "update", body: ["accessory": "lamp", "iid": 10, "value": 55]) == .update(.instance(accessory: "lamp", iid: 10), value: 55))
        #expect(try SimulatorRequest(verb: "update", body: ["characteristic": "homegate/h/r/lamp/lightbulb/brightness", "value": 55])
            == .update(.topic("homegate/h/r/lamp/lightbulb/brightness"), value: 55))
        #expect(try SimulatorRequest(verb: "flood", body: ["accessory": "lamp", "characteristic": "brightness", "service": "lightbulb", "count": 3])
            == .flood(.type(accessory: "lamp", service: .name("lightbulb"), type: "brightness"), count: 3))
        #expect(try SimulatorRequest(verb: "update", body: ["accessory": "lamp", "characteristic": "brightness", "service": 9, "value": 1])
            == .update(.type(accessory: "lamp", service: .iid(9), type: "brightness"), value: 1))
        #expect(try SimulatorRequest(verb: "behaviour", body: ["accessory": "lamp", "fail_status": -70403, "latency_ms": 20])
            == .behaviour(accessory: "lamp", latency: .milliseconds(20), failure: .fail(.busy)))
        #expect(try SimulatorRequest(verb: "behaviour", body: ["accessory": "lamp", "fail_status": .null]) == .behaviour(accessory: "lamp", latency: nil, failure: .clear))
        #expect(try SimulatorRequest(verb: "behaviour", body: ["accessory": "lamp"]) == .behaviour(accessory: "lamp", latency: nil, failure: .unchanged))
    }

    @Test("what does not parse is named: the unknown request, the missing or mistyped field")
    func refusals() {
        let failure = ManagementDecisionTests.failure
        #expect(failure { _ = try Self.parse("weather/get") } == #"unknown-request: unknown request "weather/get""#)
        #expect(failure { _ = try Self.parse("room") } == #"unknown-request: unknown request "room""#)
        #expect(failure { _ = try Self.parse("simulator/explode", ["accessory": "lamp"] ) }
            == #"unknown-request: unknown simulator request "explode"; known: update, reachability, behaviour, flood"#)
        #expect(failure { _ = try Self.parse("simulator/update", ["accessory": "lamp", "iid": 10]) } == #"invalid-request: "value" is required"#)
        #expect(failure { _ = try Self.parse("simulator/flood", ["accessory": "lamp", "iid": 10, "count": 0]) }
            == #"invalid-request: "count" must be a whole number from 1 to 10000000"#)
        #expect(failure { _ = try Self.parse("simulator/behaviour", ["accessory": "lamp", "fail_status": 0]) }
            == #"invalid-request: "fail_status" must be a HAP status from -70401 to -70412, or null"#)
        #expect(failure { _ = try Self.parse("history/put", ["characteristic": "x"]) } == #"unknown-request: unknown request "history/put"; known: get"#)
    }

    @Test("the one resolver finds a characteristic by type on an accessory, in the service named, and names what it cannot find")
    func resolverByType() throws {
        let homes = try ManagementDecisionTests.homes()
        let management = ManagementDecisionTests.management(homes)
        let byType = try management.resolve(.type(accessory: "floor-lamp", service: nil, type: "brightness"), .characteristic, home: nil)
        let byTopic = try management.resolve(.topic(try #require(byType.topic)), .characteristic, home: nil)
        #expect(byType.accessory == "floor-lamp" && byType.iid == byTopic.iid && byType.topic == byTopic.topic)
        #expect(try management.resolve(.type(accessory: "floor-lamp", service: .name("lightbulb"), type: "brightness"), .characteristic, home: nil).iid == byType.iid)
        let failure = ManagementDecisionTests.failure
        #expect(failure { _ = try management.resolve(.type(accessory: "floor-lamp", service: .name("fan"), type: "brightness"), .characteristic, home: nil) }
            == #"not-found: Floor Lamp has no characteristic "brightness""#)
        #expect(failure { _ = try management.resolve(.type(accessory: "attic-lamp", service: nil, type: "on"), .characteristic, home: nil) }
            == #"not-found: no accessory "attic-lamp""#)
    }
}

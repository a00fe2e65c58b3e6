import Foundation
import MQTT
import Testing
import TestSupport
import Wire

/// Section 7 verb by verb on the demo home: every verb of the request table (pairing aside, it
/// has tests of its own) succeeds with its effect visible in `$layout`, and each of its errors
/// is answered with its code and changes nothing. One gateway per kind of object.
@Suite(.serialized, .startsProcesses) struct ManagementVerbTests {
    typealias JSON = [String: Any]

    // MARK: Helpers

    /// Sends a request that must succeed; returns its `data`.
    @discardableResult
    static func ok(_ fixture: GatewayFixture, _ path: String, _ body: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSON {
        let answer = try await fixture.request(path, body)
        #expect(answer["ok"] as? Bool == true, "\(path) \(body): \(answer)", sourceLocation: sourceLocation)
        return answer["data"] as? JSON ?? [:]
    }

    /// Sends a request that must be refused with `code`.
    static func refused(_ fixture: GatewayFixture, _ path: String, _ body: String, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answer = try await fixture.request(path, body)
        #expect(answer["ok"] as? Bool == false, "\(path) \(body): \(answer)", sourceLocation: sourceLocation)
        #expect(answer["error"] as? String == code, "\(path) \(body): \(answer)", sourceLocation: sourceLocation)
        #expect(answer["message"] as? String != nil, "\(path) \(body): \(answer)", sourceLocation: sourceLocation)
    }

    /// The layout once a `$layout` carrying `text` was republished.
    static func layout(_ fixture: GatewayFixture, containing text: String) async throws -> JSON {
        try await fixture.currentLayout(containing: text)
    }

    /// The layout once `check` holds for it (woken by every `$layout` message).
    static func layout(_ fixture: GatewayFixture, until check: @escaping @Sendable (JSON) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSON {
        try await fixture.currentLayout(where: check)
    }

    /// Refused requests change nothing: `part` of the layout is the same as before once a
    /// marker change made after them is in `$layout` (a home added, then removed again; the
    /// layout publishes every pending change at once, so a change a refused request had made
    /// would show with the marker). The marker home is left out of what `part` sees.
    static func unchanged(_ fixture: GatewayFixture, _ part: @escaping (JSON) -> Any, before: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let marker = "Marker \(UUID().uuidString.prefix(8))"
        try await ok(fixture, "home/add", #"{"name": "\#(marker)"}"#, sourceLocation: sourceLocation)
        var layout = try await self.layout(fixture, containing: "\"\(marker)\"")
        layout["homes"] = (layout["homes"] as? [JSON] ?? []).filter { $0["name"] as? String != marker }
        #expect(canonical(part(layout)) == before, sourceLocation: sourceLocation)
        try await ok(fixture, "home/remove", #"{"home": "\#(marker)"}"#, sourceLocation: sourceLocation)
        _ = try await self.layout(fixture) { layout in !LayoutAssembly.text(of: layout).contains("\"\(marker)\"") }
    }

    static func canonical(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }

    static func home(_ layout: JSON, _ name: String = "Demo Home") -> JSON {
        (layout["homes"] as? [JSON] ?? []).first { $0["name"] as? String == name } ?? [:]
    }

    static func list(_ layout: JSON, _ key: String) -> [JSON] { home(layout)[key] as? [JSON] ?? [] }
    static func names(_ layout: JSON, _ key: String) -> [String] { list(layout, key).compactMap { $0["name"] as? String } }
    static func named(_ layout: JSON, _ key: String, _ name: String) -> JSON? { list(layout, key).first { $0["name"] as? String == name } }
    static func accessory(_ layout: JSON, _ id: String) -> JSON? { list(layout, "accessories").first { $0["id"] as? String == id } }

    /// The layout's homes without the accessories' values (which devices may change).
    static func homesPart(_ layout: JSON) -> Any {
        (layout["homes"] as? [JSON] ?? []).map { ["id": $0["id"] ?? "", "name": $0["name"] ?? "", "primary": $0["primary"] ?? ""] }
    }

    static func accessoriesPart(_ layout: JSON) -> Any {
        list(layout, "accessories").map { accessory -> JSON in
            let services = (accessory["services"] as? [JSON] ?? []).map { ["iid": $0["iid"] ?? 0, "name": $0["name"] ?? NSNull()] }
            return ["id": accessory["id"] ?? "", "name": accessory["name"] ?? "", "room": accessory["room"] ?? "", "services": services]
        }
    }

    static func iid(_ layout: JSON, _ accessory: String, _ service: String, _ characteristic: String? = nil) throws -> Int {
        try #require(ManagementTests.iid(layout, accessory: accessory, service: service, characteristic: characteristic))
    }

    // MARK: Homes

    @Test func homes() async throws {
        let fixture = try await GatewayFixture.demo()
        let added = try await fixture.request("home/add", #"{"name": "Holiday Home", "transaction": "t-1"}"#)
        #expect(added["ok"] as? Bool == true, "\(added)")
        #expect(added["transaction"] as? String == "t-1")
        #expect((added["data"] as? JSON)?["home"] as? String == "Holiday Home")
        #expect((added["data"] as? JSON)?["id"] as? String == "holiday-home")
        var layout = try await Self.layout(fixture, containing: "\"Holiday Home\"")
        #expect(Self.home(layout, "Holiday Home")["primary"] as? Bool == false)

        try await Self.ok(fixture, "home/rename", #"{"home": "holiday home", "newName": "Beach House"}"#)
        layout = try await Self.layout(fixture, containing: "\"Beach House\"")
        #expect((layout["homes"] as? [JSON])?.compactMap { $0["name"] as? String } == ["Demo Home", "Beach House"])

        try await Self.ok(fixture, "home/set-primary", #"{"home": "Beach House"}"#)
        layout = try await Self.layout(fixture) { Self.home($0, "Beach House")["primary"] as? Bool == true }
        #expect(Self.home(layout, "Demo Home")["primary"] as? Bool == false)
        // The parts came before the index that names them: a client reading in order never
        // pairs the new index with an old home part. (The watcher may see the last messages
        // after the read above: it waits until every home's part is followed by an index; were
        // an index sent before its parts, none would follow them and the wait would fail.)
        let parts = try (layout["homes"] as? [JSON] ?? []).map { home in
            "homegate/$layout" + (try #require(home["topic"] as? String)).dropFirst("homegate".count)
        }
        #expect(!parts.isEmpty)
        _ = try await fixture.watcher.inbox.wait(for: "an index after every home's part") { messages -> Bool? in
            let order = messages.map(\.topic.string)
            guard let lastIndex = order.lastIndex(of: "homegate/$layout") else { return nil }
            return parts.allSatisfy { part in order.lastIndex(of: part).map { $0 < lastIndex } == true } ? true : nil
        }

        let before = Self.canonical(Self.homesPart(layout))
        try await Self.refused(fixture, "home/add", #"{"name": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "home/add", #"{"name": "-starts-with-dash"}"#, "invalid-name")
        try await Self.refused(fixture, "home/add", #"{"name": "demo home"}"#, "name-in-use")
        try await Self.refused(fixture, "home/add", #"{"name": "Beach'House"}"#, "name-in-use")
        try await Self.refused(fixture, "home/rename", #"{"home": "Demo Home", "newName": "BEACHHOUSE"}"#, "name-in-use")
        try await Self.refused(fixture, "home/rename", #"{"home": "Demo Home", "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "home/rename", #"{"home": "Nowhere", "newName": "Somewhere"}"#, "not-found")
        try await Self.refused(fixture, "home/remove", #"{"home": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "home/set-primary", #"{"home": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "home/remove", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "home/set-primary", #"{"home": true}"#, "invalid-request")
        try await Self.refused(fixture, "home/rename", #"{"home": "Demo Home"}"#, "invalid-request")
        try await Self.refused(fixture, "home/add", #"{"name": 5}"#, "invalid-request")
        try await Self.refused(fixture, "home/paint", #"{"home": "Demo Home"}"#, "unknown-request")
        try await Self.refused(fixture, "home/add", "not json", "invalid-request")
        try await Self.refused(fixture, "home/add", #"["Attic"]"#, "invalid-request")
        let echoed = try await fixture.request("home/add", #"{"name": "Bad/Name", "transaction": 42}"#)
        #expect(echoed["transaction"] as? Int == 42)
        try await Self.unchanged(fixture, Self.homesPart, before: before)

        // The primary home removed: the first remaining one becomes primary.
        try await Self.ok(fixture, "home/remove", #"{"home": "beach house"}"#)
        layout = try await Self.layout(fixture) { ($0["homes"] as? [JSON])?.count == 1 }
        #expect(Self.home(layout)["primary"] as? Bool == true)

        // The only home can be removed too (HomeEditor.removeHome allows it); then requests
        // for "the primary home" find none, until a home is added (it becomes primary).
        try await Self.ok(fixture, "home/remove", #"{"home": "Demo Home"}"#)
        layout = try await Self.layout(fixture) { ($0["homes"] as? [JSON])?.isEmpty == true }
        try await Self.refused(fixture, "room/add", #"{"name": "Attic"}"#, "not-found")
        try await Self.ok(fixture, "home/add", #"{"name": "Fresh Home"}"#)
        layout = try await Self.layout(fixture, containing: "\"Fresh Home\"")
        #expect(Self.home(layout, "Fresh Home")["primary"] as? Bool == true)
        #expect((Self.home(layout, "Fresh Home")["accessories"] as? [Any])?.isEmpty == true)
        try await fixture.stop()
    }

    // MARK: Rooms

    @Test func rooms() async throws {
        let fixture = try await GatewayFixture.demo()
        let added = try await Self.ok(fixture, "room/add", #"{"name": "Attic"}"#)
        #expect(added["room"] as? String == "Attic")
        #expect(added["id"] as? String == "attic")
        var layout = try await Self.layout(fixture, containing: "\"Attic\"")
        #expect(Self.names(layout, "rooms") == ["Default Room", "Living Room", "Kitchen", "Hallway", "Garage", "Bedroom", "Attic"])

        try await Self.ok(fixture, "room/rename", #"{"room": "attic", "newName": "Loft"}"#)
        layout = try await Self.layout(fixture, containing: "\"Loft\"")
        #expect(Self.names(layout, "rooms").last == "Loft")

        let part: (JSON) -> Any = { ["rooms": Self.names($0, "rooms"), "zones": Self.list($0, "zones").map { $0["rooms"] ?? [] }] }
        let before = Self.canonical(part(layout))
        try await Self.refused(fixture, "room/add", #"{"name": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "room/add", #"{"name": "-starts-with-dash"}"#, "invalid-name")
        try await Self.refused(fixture, "room/add", #"{"name": "living room"}"#, "name-in-use")
        try await Self.refused(fixture, "room/add", #"{"name": "Default Room"}"#, "name-in-use")
        try await Self.refused(fixture, "room/add", #"{"name": "up stairs"}"#, "name-in-use")
        try await Self.refused(fixture, "room/add", #"{"name": "Floor'Lamp"}"#, "name-in-use")
        try await Self.refused(fixture, "room/rename", #"{"room": "Loft", "newName": "HALL WAY"}"#, "name-in-use")
        try await Self.refused(fixture, "room/rename", #"{"room": "Loft", "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "room/rename", #"{"room": "Cellar", "newName": "Wine Cellar"}"#, "not-found")
        try await Self.refused(fixture, "room/remove", #"{"room": "Cellar"}"#, "not-found")
        try await Self.refused(fixture, "room/add", #"{"name": "Study", "home": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "room/remove", #"{"room": "Default Room"}"#, "not-allowed")
        try await Self.refused(fixture, "room/rename", #"{"room": "default room", "newName": "Lobby"}"#, "not-allowed")
        try await Self.refused(fixture, "room/add", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "room/add", #"{"name": 3}"#, "invalid-request")
        try await Self.refused(fixture, "room/rename", #"{"room": "Loft"}"#, "invalid-request")
        try await Self.refused(fixture, "room/remove", #"{"room": null}"#, "invalid-request")
        try await Self.refused(fixture, "room/paint", #"{"room": "Loft"}"#, "unknown-request")
        try await Self.unchanged(fixture, part, before: before)

        try await Self.ok(fixture, "room/remove", #"{"room": "Loft"}"#)
        _ = try await Self.layout(fixture) { !Self.names($0, "rooms").contains("Loft") }
        // A room removed: its accessories go to the default room; zones forget it.
        try await Self.ok(fixture, "room/remove", #"{"room": "kitchen"}"#)
        layout = try await Self.layout(fixture) { !Self.names($0, "rooms").contains("Kitchen") }
        #expect(Self.names(layout, "rooms") == ["Default Room", "Living Room", "Hallway", "Garage", "Bedroom"])
        #expect(Self.named(layout, "zones", "Downstairs")?["rooms"] as? [String] == ["Living Room", "Hallway", "Garage"])
        #expect(Self.accessory(layout, "sim-kitchen-sensor")?["room"] as? String == "Default Room")
        try await fixture.stop()
    }

    // MARK: Zones

    @Test func zones() async throws {
        let fixture = try await GatewayFixture.demo()
        let added = try await Self.ok(fixture, "zone/add", #"{"name": "Outside"}"#)
        #expect(added["zone"] as? String == "Outside")
        #expect(added["id"] as? String == "outside")
        var layout = try await Self.layout(fixture, containing: "\"Outside\"")
        #expect(Self.names(layout, "zones") == ["Upstairs", "Downstairs", "Outside"])

        try await Self.ok(fixture, "zone/rename", #"{"zone": "outside", "newName": "Garden"}"#)
        layout = try await Self.layout(fixture, containing: "\"Garden\"")
        #expect(Self.names(layout, "zones") == ["Upstairs", "Downstairs", "Garden"])

        try await Self.ok(fixture, "zone/add-room", #"{"zone": "Garden", "room": "garage"}"#)
        layout = try await Self.layout(fixture) { Self.named($0, "zones", "Garden")?["rooms"] as? [String] == ["Garage"] }

        let part: (JSON) -> Any = { Self.list($0, "zones") }
        let before = Self.canonical(part(layout))
        try await Self.refused(fixture, "zone/add", #"{"name": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "zone/add", #"{"name": "-starts-with-dash"}"#, "invalid-name")
        try await Self.refused(fixture, "zone/add", #"{"name": "DOWNSTAIRS"}"#, "name-in-use")
        try await Self.refused(fixture, "zone/add", #"{"name": "Kitchen"}"#, "name-in-use")
        try await Self.refused(fixture, "zone/rename", #"{"zone": "Garden", "newName": "Up Stairs"}"#, "name-in-use")
        try await Self.refused(fixture, "zone/rename", #"{"zone": "Garden", "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "zone/rename", #"{"zone": "Nowhere", "newName": "Somewhere"}"#, "not-found")
        try await Self.refused(fixture, "zone/remove", #"{"zone": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "zone/add-room", #"{"zone": "Nowhere", "room": "Garage"}"#, "not-found")
        try await Self.refused(fixture, "zone/add-room", #"{"zone": "Garden", "room": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "zone/remove-room", #"{"zone": "Garden", "room": "Kitchen"}"#, "not-found")
        try await Self.refused(fixture, "zone/remove-room", #"{"zone": "Nowhere", "room": "Garage"}"#, "not-found")
        try await Self.refused(fixture, "zone/add-room", #"{"zone": "Garden", "room": "Default Room"}"#, "not-allowed")
        try await Self.refused(fixture, "zone/add-room", #"{"zone": "Garden", "room": "Garage"}"#, "invalid-request")
        try await Self.refused(fixture, "zone/add-room", #"{"zone": "Garden"}"#, "invalid-request")
        try await Self.refused(fixture, "zone/add", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "zone/remove", #"{"zone": ["Garden"]}"#, "invalid-request")
        try await Self.refused(fixture, "zone/rename", #"{"zone": "Garden", "newName": 7}"#, "invalid-request")
        try await Self.refused(fixture, "zone/paint", #"{"zone": "Garden"}"#, "unknown-request")
        try await Self.unchanged(fixture, part, before: before)

        try await Self.ok(fixture, "zone/remove-room", #"{"zone": "garden", "room": "Garage"}"#)
        layout = try await Self.layout(fixture) { (Self.named($0, "zones", "Garden")?["rooms"] as? [String])?.isEmpty == true }
        #expect(Self.named(layout, "zones", "Downstairs")?["rooms"] as? [String] == ["Living Room", "Kitchen", "Hallway", "Garage"])
        try await Self.ok(fixture, "zone/remove", #"{"zone": "Garden"}"#)
        layout = try await Self.layout(fixture) { Self.names($0, "zones") == ["Upstairs", "Downstairs"] }
        try await fixture.stop()
    }

    // MARK: Accessories and services

    @Test func accessoriesAndServices() async throws {
        let fixture = try await GatewayFixture.demo()
        var layout = try await Self.layout(fixture, containing: "\"homes\"")  // the gateway's first $layout reached the broker
        let lamp = try Self.iid(layout, "sim-lamp-1", "lightbulb")
        let information = ManagementTests.iid(layout, accessory: "sim-lamp-1", service: "accessory-information") ?? 1

        try await Self.ok(fixture, "accessory/assign-room", #"{"accessory": "sim-lamp-1", "room": "kitchen"}"#)
        try await Self.ok(fixture, "accessory/assign-room", #"{"accessory": "tv outlet", "room": "Garage"}"#)
        layout = try await Self.layout(fixture) {
            Self.accessory($0, "sim-lamp-1")?["room"] as? String == "Kitchen" && Self.accessory($0, "sim-tv-outlet")?["room"] as? String == "Garage"
        }
        try await Self.ok(fixture, "accessory/rename", #"{"accessory": "sim-lamp-1", "newName": "Corner Lamp"}"#)
        layout = try await Self.layout(fixture, containing: "\"Corner Lamp\"")
        #expect(Self.accessory(layout, "sim-lamp-1")?["name"] as? String == "Corner Lamp")
        try await Self.ok(fixture, "service/rename", #"{"accessory": "corner lamp", "service": \#(lamp), "newName": "Corner Light"}"#)
        layout = try await Self.layout(fixture, containing: "\"Corner Light\"")
        let service = (Self.accessory(layout, "sim-lamp-1")?["services"] as? [JSON])?.first { $0["iid"] as? Int == lamp }
        #expect(service?["name"] as? String == "Corner Light")
        let identified = try await Self.ok(fixture, "accessory/identify", #"{"accessory": "sim-lamp-1"}"#)
        #expect(identified["accessory"] as? String == "sim-lamp-1")

        let before = Self.canonical(Self.accessoriesPart(layout))
        try await Self.refused(fixture, "accessory/assign-room", #"{"accessory": "sim-lamp-1", "room": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "accessory/assign-room", #"{"accessory": "sim-nothing", "room": "Garage"}"#, "not-found")
        try await Self.refused(fixture, "accessory/assign-room", #"{"accessory": "sim-lamp-1"}"#, "invalid-request")
        try await Self.refused(fixture, "accessory/rename", #"{"accessory": "sim-lamp-1", "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "accessory/rename", #"{"accessory": "sim-lamp-1", "newName": "-starts-with-dash"}"#, "invalid-name")
        try await Self.refused(fixture, "accessory/rename", #"{"accessory": "sim-lamp-1", "newName": "TV Outlet"}"#, "name-in-use")
        try await Self.refused(fixture, "accessory/rename", #"{"accessory": "sim-lamp-1", "newName": "bed room"}"#, "name-in-use")
        try await Self.refused(fixture, "accessory/rename", #"{"accessory": "sim-nothing", "newName": "Lamp"}"#, "not-found")
        try await Self.refused(fixture, "accessory/rename", #"{"accessory": "sim-lamp-1", "newName": false}"#, "invalid-request")
        try await Self.refused(fixture, "accessory/remove", #"{"accessory": "sim-hue-bedside"}"#, "not-allowed")
        try await Self.refused(fixture, "accessory/remove", #"{"accessory": "sim-nothing"}"#, "not-found")
        try await Self.refused(fixture, "accessory/remove", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "accessory/identify", #"{"accessory": "sim-nothing"}"#, "not-found")
        try await Self.refused(fixture, "accessory/identify", #"{"accessory": 1}"#, "invalid-request")
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-lamp-1", "service": \#(information), "newName": "Info"}"#, "not-allowed")
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-lamp-1", "service": \#(lamp), "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-lamp-1", "service": 9999, "newName": "Light"}"#, "not-found")
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-nothing", "service": \#(lamp), "newName": "Light"}"#, "not-found")
        // A string is a service's topic (section 7): one that names nothing is not found.
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-lamp-1", "service": "\#(lamp)", "newName": "Light"}"#, "not-found")
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-lamp-1", "service": true, "newName": "Light"}"#, "invalid-request")
        try await Self.refused(fixture, "service/rename", #"{"accessory": "sim-lamp-1", "service": \#(lamp)}"#, "invalid-request")
        try await Self.refused(fixture, "accessory/paint", #"{"accessory": "sim-lamp-1"}"#, "unknown-request")
        try await Self.refused(fixture, "service/paint", #"{"accessory": "sim-lamp-1", "service": \#(lamp)}"#, "unknown-request")
        try await Self.unchanged(fixture, Self.accessoriesPart, before: before)

        // A bridge takes the accessories behind it.
        let removed = try await Self.ok(fixture, "accessory/remove", #"{"accessory": "Hue Bridge"}"#)
        #expect(removed["removed"] as? [String] == ["sim-hue-bridge", "sim-hue-bedside", "sim-hue-ceiling", "sim-hue-reading"])
        layout = try await Self.layout(fixture) { Self.accessory($0, "sim-hue-bridge") == nil }
        #expect(Self.list(layout, "accessories").compactMap { $0["id"] as? String }.filter { $0.hasPrefix("sim-hue") }.isEmpty)
        try await Self.ok(fixture, "accessory/remove", #"{"accessory": "sim-garage-door"}"#)
        layout = try await Self.layout(fixture) { Self.accessory($0, "sim-garage-door") == nil }
        #expect(Self.list(layout, "accessories").count == 6)
        try await fixture.stop()
    }

    // MARK: Service groups

    @Test func serviceGroups() async throws {
        let fixture = try await GatewayFixture.demo()
        var layout = try await Self.layout(fixture, containing: "\"homes\"")  // the gateway's first $layout reached the broker
        let lamp = try Self.iid(layout, "sim-lamp-1", "lightbulb")
        let outlet = try Self.iid(layout, "sim-tv-outlet", "outlet")

        let added = try await Self.ok(fixture, "service-group/add", #"{"name": "Reading Lights"}"#)
        #expect(added["group"] as? String == "Reading Lights")
        #expect(added["id"] as? String == "reading-lights")
        _ = try await Self.layout(fixture, containing: "\"Reading Lights\"")
        try await Self.ok(fixture, "service-group/rename", #"{"group": "reading lights", "newName": "Night Lights"}"#)
        layout = try await Self.layout(fixture, containing: "\"Night Lights\"")
        #expect(Self.names(layout, "serviceGroups") == ["Night Lights"])
        try await Self.ok(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-lamp-1", "service": \#(lamp)}"#)
        layout = try await Self.layout(fixture) { (Self.named($0, "serviceGroups", "Night Lights")?["services"] as? [Any])?.count == 1 }
        let services = Self.named(layout, "serviceGroups", "Night Lights")?["services"] as? [JSON]
        #expect(services?.first?["accessory"] as? String == "sim-lamp-1")
        #expect(services?.first?["service"] as? Int == lamp)

        let part: (JSON) -> Any = { Self.list($0, "serviceGroups") }
        let before = Self.canonical(part(layout))
        try await Self.refused(fixture, "service-group/add", #"{"name": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "service-group/add", #"{"name": "-starts-with-dash"}"#, "invalid-name")
        try await Self.refused(fixture, "service-group/add", #"{"name": "night light's"}"#, "name-in-use")
        try await Self.refused(fixture, "service-group/add", #"{"name": "Bedroom"}"#, "name-in-use")
        try await Self.refused(fixture, "service-group/rename", #"{"group": "Night Lights", "newName": "Floor Lamp"}"#, "name-in-use")
        try await Self.refused(fixture, "service-group/rename", #"{"group": "Night Lights", "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "service-group/rename", #"{"group": "Nowhere", "newName": "Somewhere"}"#, "not-found")
        try await Self.refused(fixture, "service-group/remove", #"{"group": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Nowhere", "accessory": "sim-lamp-1", "service": \#(lamp)}"#, "not-found")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-nothing", "service": \#(lamp)}"#, "not-found")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-lamp-1", "service": 9999}"#, "not-found")
        try await Self.refused(fixture, "service-group/remove-service", #"{"group": "Night Lights", "accessory": "sim-tv-outlet", "service": \#(outlet)}"#, "not-found")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-lamp-1", "service": 1}"#, "not-allowed")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-lamp-1", "service": \#(lamp)}"#, "invalid-request")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-lamp-1"}"#, "invalid-request")
        try await Self.refused(fixture, "service-group/add-service", #"{"group": "Night Lights", "accessory": "sim-tv-outlet", "service": "x"}"#, "not-found")
        try await Self.refused(fixture, "service-group/remove-service", #"{"group": "Night Lights", "service": \#(lamp)}"#, "invalid-request")
        try await Self.refused(fixture, "service-group/add", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "service-group/paint", #"{"group": "Night Lights"}"#, "unknown-request")
        try await Self.unchanged(fixture, part, before: before)

        try await Self.ok(fixture, "service-group/remove-service", #"{"group": "night lights", "accessory": "Floor Lamp", "service": \#(lamp)}"#)
        _ = try await Self.layout(fixture) { (Self.named($0, "serviceGroups", "Night Lights")?["services"] as? [Any])?.isEmpty == true }
        // By id: a group keeps the id of its first name.
        try await Self.ok(fixture, "service-group/remove", #"{"group": "reading-lights"}"#)
        _ = try await Self.layout(fixture) { Self.list($0, "serviceGroups").isEmpty }
        try await fixture.stop()
    }

    // MARK: Action sets

    @Test func actionSets() async throws {
        let fixture = try await GatewayFixture.demo()
        var layout = try await Self.layout(fixture, containing: "\"homes\"")  // the gateway's first $layout reached the broker
        let lampOn = try Self.iid(layout, "sim-lamp-1", "lightbulb", "on")
        let brightness = try Self.iid(layout, "sim-lamp-1", "lightbulb", "brightness")
        let temperature = try Self.iid(layout, "sim-kitchen-sensor", "temperature-sensor", "current-temperature")

        let added = try await Self.ok(fixture, "action-set/add", #"{"name": "Evening"}"#)
        #expect(added["actionSet"] as? String == "Evening")
        #expect(added["id"] as? String == "evening")
        _ = try await Self.layout(fixture, containing: "\"Evening\"")
        try await Self.ok(fixture, "action-set/rename", #"{"actionSet": "evening", "newName": "Night"}"#)
        layout = try await Self.layout(fixture, containing: "\"Night\"")
        #expect(Self.names(layout, "actionSets") == ["Night"])
        try await Self.ok(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": \#(lampOn), "value": true}"#)
        layout = try await Self.layout(fixture) { (Self.named($0, "actionSets", "Night")?["actions"] as? [JSON])?.first?["value"] as? Bool == true }
        // A second action on the same characteristic replaces the first.
        try await Self.ok(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "Floor Lamp", "characteristic": \#(lampOn), "value": false}"#)
        layout = try await Self.layout(fixture) { (Self.named($0, "actionSets", "Night")?["actions"] as? [JSON])?.first?["value"] as? Bool == false }
        let actions = Self.named(layout, "actionSets", "Night")?["actions"] as? [JSON]
        #expect(actions?.count == 1)
        #expect(actions?.first?["accessory"] as? String == "sim-lamp-1")
        #expect(actions?.first?["characteristic"] as? Int == lampOn)
        let executed = try await Self.ok(fixture, "action-set/execute", #"{"actionSet": "night"}"#)
        #expect(executed["actionSet"] as? String == "Night")
        #expect(executed["allOk"] as? Bool == true)
        #expect((executed["results"] as? [Any])?.count == 1)

        let part: (JSON) -> Any = { Self.list($0, "actionSets") }
        let before = Self.canonical(part(layout))
        try await Self.refused(fixture, "action-set/add", #"{"name": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "action-set/add", #"{"name": "-starts-with-dash"}"#, "invalid-name")
        try await Self.refused(fixture, "action-set/add", #"{"name": "NIGHT"}"#, "name-in-use")
        try await Self.refused(fixture, "action-set/add", #"{"name": "floorlamp"}"#, "name-in-use")
        try await Self.refused(fixture, "action-set/rename", #"{"actionSet": "Night", "newName": "Living Room"}"#, "name-in-use")
        try await Self.refused(fixture, "action-set/rename", #"{"actionSet": "Night", "newName": "Bad/Name"}"#, "invalid-name")
        try await Self.refused(fixture, "action-set/rename", #"{"actionSet": "Nowhere", "newName": "Somewhere"}"#, "not-found")
        try await Self.refused(fixture, "action-set/remove", #"{"actionSet": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "action-set/execute", #"{"actionSet": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Nowhere", "accessory": "sim-lamp-1", "characteristic": \#(lampOn), "value": true}"#, "not-found")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-nothing", "characteristic": \#(lampOn), "value": true}"#, "not-found")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": 9999, "value": true}"#, "not-found")
        try await Self.refused(fixture, "action-set/remove-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": \#(brightness)}"#, "not-found")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-kitchen-sensor", "characteristic": \#(temperature), "value": 20}"#, "not-allowed")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": \#(brightness), "value": 250}"#, "invalid-request")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": \#(brightness), "value": "bright"}"#, "invalid-request")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": \#(brightness)}"#, "invalid-request")
        try await Self.refused(fixture, "action-set/add-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": "on", "value": true}"#, "not-found")
        try await Self.refused(fixture, "action-set/remove-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1"}"#, "invalid-request")
        try await Self.refused(fixture, "action-set/execute", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "action-set/paint", #"{"actionSet": "Night"}"#, "unknown-request")
        try await Self.unchanged(fixture, part, before: before)

        try await Self.ok(fixture, "action-set/remove-action", #"{"actionSet": "Night", "accessory": "sim-lamp-1", "characteristic": \#(lampOn)}"#)
        _ = try await Self.layout(fixture) { (Self.named($0, "actionSets", "Night")?["actions"] as? [Any])?.isEmpty == true }
        try await Self.ok(fixture, "action-set/remove", #"{"actionSet": "Night"}"#)
        _ = try await Self.layout(fixture) { Self.list($0, "actionSets").isEmpty }
        try await fixture.stop()
    }

    // MARK: Triggers

    @Test func triggers() async throws {
        let fixture = try await GatewayFixture.demo()
        let fireDate = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86400))
        try await Self.ok(fixture, "action-set/add", #"{"name": "Morning"}"#)
        _ = try await Self.layout(fixture, containing: "\"Morning\"")

        let body = #"{"name": "Wake Up", "fireDate": "\#(fireDate)", "recurrence": {"unit": "day", "every": 1}, "actionSets": ["morning"], "enabled": true}"#
        let added = try await Self.ok(fixture, "trigger/add", body)
        #expect(added["trigger"] as? String == "Wake Up")
        #expect(added["id"] as? String == "wake-up")
        var layout = try await Self.layout(fixture, containing: "\"Wake Up\"")
        let trigger = try #require(Self.named(layout, "triggers", "Wake Up"))
        #expect(trigger["actionSets"] as? [String] == ["Morning"])
        #expect(trigger["enabled"] as? Bool == true)
        #expect((trigger["recurrence"] as? JSON)?["unit"] as? String == "day")
        #expect((trigger["recurrence"] as? JSON)?["every"] as? Int == 1)
        let stored = (trigger["fireDate"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
        #expect(stored == ISO8601DateFormatter().date(from: fireDate))

        // A one-time trigger with no action set; `enabled` left out: enabled.
        try await Self.ok(fixture, "trigger/add", #"{"name": "Reminder", "fireDate": "\#(fireDate)", "recurrence": null}"#)
        layout = try await Self.layout(fixture, containing: "\"Reminder\"")
        #expect(Self.named(layout, "triggers", "Reminder")?["recurrence"] is NSNull)
        #expect(Self.named(layout, "triggers", "Reminder")?["enabled"] as? Bool == true)

        try await Self.ok(fixture, "trigger/disable", #"{"trigger": "wake up"}"#)
        layout = try await Self.layout(fixture) { Self.named($0, "triggers", "Wake Up")?["enabled"] as? Bool == false }
        try await Self.ok(fixture, "trigger/enable", #"{"trigger": "wake-up"}"#)
        layout = try await Self.layout(fixture) { Self.named($0, "triggers", "Wake Up")?["enabled"] as? Bool == true }

        let part: (JSON) -> Any = { Self.list($0, "triggers") }
        let before = Self.canonical(part(layout))
        func add(_ fields: String) -> String { #"{"name": "Nap", "fireDate": "\#(fireDate)", \#(fields)}"# }
        try await Self.refused(fixture, "trigger/add", #"{"name": "Bad/Name", "fireDate": "\#(fireDate)"}"#, "invalid-name")
        try await Self.refused(fixture, "trigger/add", #"{"name": "-starts-with-dash", "fireDate": "\#(fireDate)"}"#, "invalid-name")
        try await Self.refused(fixture, "trigger/add", #"{"name": "wakeup", "fireDate": "\#(fireDate)"}"#, "name-in-use")
        try await Self.refused(fixture, "trigger/add", #"{"name": "MORNING", "fireDate": "\#(fireDate)"}"#, "name-in-use")
        try await Self.refused(fixture, "trigger/add", add(#""actionSets": ["Nowhere"]"#), "not-found")
        try await Self.refused(fixture, "trigger/remove", #"{"trigger": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "trigger/enable", #"{"trigger": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "trigger/disable", #"{"trigger": "Nowhere"}"#, "not-found")
        try await Self.refused(fixture, "trigger/add", #"{"name": "Nap", "fireDate": "tomorrow"}"#, "invalid-request")
        try await Self.refused(fixture, "trigger/add", #"{"name": "Nap", "fireDate": "2030-11-21T07:00:00"}"#, "invalid-request")
        try await Self.refused(fixture, "trigger/add", #"{"name": "Nap"}"#, "invalid-request")
        try await Self.refused(fixture, "trigger/add", #"{"fireDate": "\#(fireDate)"}"#, "invalid-request")
        try await Self.refused(fixture, "trigger/add", add(#""recurrence": {"unit": "fortnight", "every": 1}"#), "invalid-request")
        try await Self.refused(fixture, "trigger/add", add(#""recurrence": {"unit": "day", "every": 0}"#), "invalid-request")
        try await Self.refused(fixture, "trigger/add", add(#""recurrence": {"unit": "day"}"#), "invalid-request")
        try await Self.refused(fixture, "trigger/add", add(#""recurrence": "daily""#), "invalid-request")
        try await Self.refused(fixture, "trigger/add", add(#""actionSets": "Morning""#), "invalid-request")
        try await Self.refused(fixture, "trigger/add", add(#""enabled": "yes""#), "invalid-request")
        try await Self.refused(fixture, "trigger/enable", #"{}"#, "invalid-request")
        try await Self.refused(fixture, "trigger/paint", #"{"trigger": "Wake Up"}"#, "unknown-request")
        // Not in the request table (HomeEditor.renameTrigger exists but is not served).
        try await Self.refused(fixture, "trigger/rename", #"{"trigger": "Wake Up", "newName": "Alarm"}"#, "unknown-request")
        try await Self.unchanged(fixture, part, before: before)

        try await Self.ok(fixture, "trigger/remove", #"{"trigger": "Wake Up"}"#)
        layout = try await Self.layout(fixture) { Self.names($0, "triggers") == ["Reminder"] }
        try await fixture.stop()
    }
}

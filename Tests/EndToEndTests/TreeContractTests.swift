import Foundation
import MQTT
import Testing
import TestSupport

/// The MQTT tree as `/work/shared/design/mqtt-api.md` sections 1, 2, 4, 5 and 6 promise it: the
/// real `homegate run` on a real Mosquitto, watched by real clients. Nothing sleeps: every wait is
/// for the message or log line itself, and "nothing else happened" is checked after a round trip
/// through the gateway (``GatewayFixture/roundTrip()``), which comes after everything the gateway
/// published before it.
@Suite("the MQTT tree contract, end to end", .startsProcesses)
struct TreeContractTests {
    static let home = "homegate/demo-home"
    static let floorLamp = "homegate/demo-home/living-room/floor-lamp"
    static let bridgeIDs = ["sim-hue-bedside", "sim-hue-ceiling", "sim-hue-reading"]

    /// The retained topics equal exactly those the retained `$layout` names; returns the layout.
    @discardableResult
    static func expectExactlyTheLayoutsTopics(_ retained: [String: String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let layout = try #require(LayoutAssembly.assemble(retained, base: "homegate"), "no whole $layout retained", sourceLocation: sourceLocation)
        let expected = GatewayFixture.retainedTopics(of: layout, base: "homegate", values: retained)
        let actual = Set(retained.keys)
        #expect(actual.subtracting(expected).sorted() == [], "retained but not in the layout (stale)", sourceLocation: sourceLocation)
        #expect(expected.subtracting(actual).sorted() == [], "in the layout but not retained (missing)", sourceLocation: sourceLocation)
        return layout
    }

    /// Whether the JSON text of a retained value is the scalar that `format` calls for.
    static func isScalar(_ text: String, format: String) -> Bool {
        guard let decoded = TreeJSON.scalar(text) else { return false }
        switch format {
        case "bool":
            return TreeJSON.bool(decoded) != nil
        case "int", "uint8", "uint16", "uint32", "uint64":
            return text.range(of: #"^-?[0-9]+$"#, options: .regularExpression) != nil && TreeJSON.number(decoded) != nil
        case "float":
            return TreeJSON.number(decoded) != nil
        case "string", "data", "tlv8":
            return decoded is String
        default:
            return false
        }
    }

    // MARK: Start

    @Test("start: $state online, $layout with every field, $meta, $reachable and every value retained as the right scalar, exactly the layout's topics")
    func startPublishesTheWholeTree() async throws {
        let fixture = try await GatewayFixture.demo()
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        #expect(retained["homegate/$state"] == "online")
        let layout = try Self.expectExactlyTheLayoutsTopics(retained)

        // The home, its rooms (the default room included) and zones.
        #expect(layout["base"] as? String == "homegate")
        let homes = TreeLayout.homes(layout)
        try #require(homes.count == 1)
        let home = homes[0]
        #expect(home["name"] as? String == "Demo Home")
        #expect(TreeJSON.bool(home["primary"]) == true)
        #expect(home["topic"] as? String == Self.home)
        let rooms = home["rooms"] as? [[String: Any]] ?? []
        let roomTopics = Dictionary(rooms.compactMap { room in (room["name"] as? String).map { ($0, room["topic"] as? String ?? "") } },
                                    uniquingKeysWith: { first, _ in first })
        #expect(roomTopics == [
            "Default Room": "\(Self.home)/default-room", "Living Room": "\(Self.home)/living-room", "Kitchen": "\(Self.home)/kitchen",
            "Hallway": "\(Self.home)/hallway", "Garage": "\(Self.home)/garage", "Bedroom": "\(Self.home)/bedroom",
        ])
        let zones = home["zones"] as? [[String: Any]] ?? []
        let zoneRooms = Dictionary(zones.compactMap { zone in (zone["name"] as? String).map { ($0, zone["rooms"] as? [String] ?? []) } },
                                   uniquingKeysWith: { first, _ in first })
        #expect(zoneRooms == ["Upstairs": ["Bedroom"], "Downstairs": ["Living Room", "Kitchen", "Hallway", "Garage"]])
        for key in ["serviceGroups", "actionSets", "triggers"] {
            #expect(home[key] is [Any], "\(key) is a list")
        }

        // Every accessory, service and characteristic has its fields, and topics nest.
        let accessories = TreeLayout.accessories(layout)
        #expect(Set(accessories.compactMap { $0["id"] as? String }) == [
            "sim-lamp-1", "sim-tv-outlet", "sim-kitchen-sensor", "sim-coffee-machine", "sim-front-door-lock", "sim-garage-door",
            "sim-thermostat", "sim-hue-bridge", "sim-hue-bedside", "sim-hue-ceiling", "sim-hue-reading",
        ])
        let metaKeys = ["id", "name", "manufacturer", "model", "serialNumber", "firmwareRevision", "category", "room", "bridge", "bridged"]
        for accessory in accessories {
            let id = accessory["id"] as? String ?? "?"
            let room = try #require(accessory["room"] as? String, "\(id) has a room")
            let roomTopic = try #require(roomTopics[room], "\(id)'s room \(room) is a room of the home")
            let topic = try #require(accessory["topic"] as? String, "\(id) has a topic")
            #expect(topic.hasPrefix(roomTopic + "/") && !topic.dropFirst(roomTopic.count + 1).contains("/"), "\(id): \(topic) is one level under \(roomTopic)")
            #expect(accessory["name"] is String, "\(id) has a name")
            #expect(accessory["reachable"] == nil, "\(id): reachability is not in $layout (it is on $reachable)")
            #expect(accessory["bridge"] is NSNull || accessory["bridge"] is String, "\(id): bridge is null or an id")
            #expect(accessory["bridged"] is [String], "\(id): bridged is a list of ids")
            #expect(accessory["category"] is String, "\(id) has a category")

            // $meta: retained, with its fields, agreeing with the layout.
            let metaText = try #require(retained["\(topic)/$meta"], "\(id) has a retained $meta")
            let meta = try GatewayFixture.decode(Array(metaText.utf8))
            for key in metaKeys {
                #expect(meta[key] != nil, "\(id)'s $meta has \(key)")
                #expect(TreeJSON.text(of: meta[key]) == TreeJSON.text(of: accessory[key]), "\(id): $meta.\(key) \(String(describing: meta[key])) = $layout's \(String(describing: accessory[key]))")
            }
            for key in ["manufacturer", "model", "serialNumber", "firmwareRevision"] {
                #expect(!(meta[key] as? String ?? "").isEmpty, "\(id)'s $meta.\(key) is a non-empty string")
            }
            // $reachable: retained (the demo's Reading Lamp starts unreachable).
            #expect(retained["\(topic)/$reachable"] == (id == "sim-hue-reading" ? "false" : "true"), "\(id)'s $reachable")

            for service in TreeLayout.services(accessory) {
                let type = service["type"] as? String ?? "?"
                #expect(TreeJSON.number(service["iid"]) != nil, "\(id)/\(type) has an iid")
                #expect(service["name"] is String || service["name"] is NSNull, "\(id)/\(type) has a name (or null)")
                let serviceTopic = try #require(service["topic"] as? String, "\(id)/\(type) has a topic")
                #expect(serviceTopic.hasPrefix(topic + "/") && !serviceTopic.dropFirst(topic.count + 1).contains("/"), "\(serviceTopic) is one level under \(topic)")
                for characteristic in TreeLayout.characteristics(service) {
                    let name = "\(id)/\(type)/\(characteristic["type"] as? String ?? "?")"
                    let characteristicType = try #require(characteristic["type"] as? String, "\(name) has a type")
                    #expect(TreeJSON.number(characteristic["iid"]) != nil, "\(name) has an iid")
                    #expect((characteristic["uuid"] as? String)?.count == 36, "\(name) has a full UUID")
                    #expect(!(characteristic["perms"] as? [String] ?? []).isEmpty, "\(name) has perms")
                    #expect(characteristic["topic"] as? String == "\(serviceTopic)/\(characteristicType)", "\(name): the segment is the type's name")
                    #expect(characteristic["value"] == nil, "\(name): $layout carries no values (they have their own topics)")
                    // The accessory's $meta describes it as $layout does (with labels for valid values).
                    let serviceSegment = String(serviceTopic.dropFirst(topic.count + 1))
                    let described = ((meta["services"] as? [String: Any])?[serviceSegment] as? [String: Any])
                    #expect(described?["type"] as? String == type, "\(id)'s $meta.services has \(serviceSegment) as \(type)")
                    let entry = (described?["characteristics"] as? [String: Any])?[characteristicType] as? [String: Any]
                    for key in ["type", "uuid", "format", "perms", "unit", "minValue", "maxValue", "minStep", "maxLen"] {
                        #expect(TreeJSON.text(of: entry?[key]) == TreeJSON.text(of: characteristic[key]), "\(name): $meta's \(key) is $layout's")
                    }
                    let format = try #require(characteristic["format"] as? String, "\(name) has a format")
                    if ["int", "uint8", "uint16", "uint32", "uint64", "float"].contains(format) {
                        for key in ["minValue", "maxValue", "minStep"] {
                            #expect(TreeJSON.number(characteristic[key]) != nil, "\(name): numeric, so \(key)")
                        }
                    } else {
                        for key in ["minValue", "maxValue", "minStep", "validValues"] {
                            #expect(characteristic[key] == nil, "\(name): \(format) has no \(key)")
                        }
                    }
                    // The value: retained, as the right JSON scalar.
                    if let valueTopic = characteristic["topic"] as? String, (characteristic["perms"] as? [String])?.contains("pr") == true {
                        let text = try #require(retained[valueTopic], "\(valueTopic) is retained")
                        #expect(Self.isScalar(text, format: format), "\(valueTopic) = \(text) is a \(format) scalar")
                    }
                }
            }
        }

        // The example of section 6, field by field.
        let lamp = try #require(TreeLayout.accessory("sim-lamp-1", in: layout))
        #expect(lamp["name"] as? String == "Floor Lamp")
        #expect(lamp["room"] as? String == "Living Room")
        #expect(lamp["topic"] as? String == Self.floorLamp)
        #expect(lamp["bridge"] is NSNull)
        #expect(lamp["bridged"] as? [String] == [])
        #expect(lamp["category"] as? String == "lightbulb")
        let bulb = try #require(TreeLayout.services(lamp).first { $0["type"] as? String == "lightbulb" })
        #expect(TreeJSON.number(bulb["iid"]) == 8)
        #expect(bulb["name"] as? String == "Floor Lamp")
        #expect(bulb["topic"] as? String == "\(Self.floorLamp)/lightbulb")
        let brightness = try #require(TreeLayout.characteristic("brightness", of: "sim-lamp-1", in: layout))
        #expect(TreeJSON.number(brightness["iid"]) == 10)
        #expect(brightness["uuid"] as? String == "00000008-0000-1000-8000-0026BB765291")
        #expect(brightness["format"] as? String == "int")
        #expect(brightness["perms"] as? [String] == ["pr", "pw", "ev"])
        #expect(brightness["unit"] as? String == "percentage")
        #expect(TreeJSON.number(brightness["minValue"]) == 0)
        #expect(TreeJSON.number(brightness["maxValue"]) == 100)
        #expect(TreeJSON.number(brightness["minStep"]) == 1)
        #expect(brightness["topic"] as? String == "\(Self.floorLamp)/lightbulb/brightness")
        #expect(retained["\(Self.floorLamp)/lightbulb/brightness"] == "40")
        #expect(retained["\(Self.floorLamp)/lightbulb/on"] == "false")
        let lampMeta = try GatewayFixture.decode(Array((retained["\(Self.floorLamp)/$meta"] ?? "").utf8))
        #expect(lampMeta["id"] as? String == "sim-lamp-1")
        #expect(lampMeta["model"] as? String == "Colour Bulb")

        // Bounds a configuration narrowed, and valid values.
        let target = try #require(TreeLayout.characteristic("target-temperature", of: "sim-thermostat", in: layout))
        #expect(target["format"] as? String == "float")
        #expect(target["unit"] as? String == "celsius")
        #expect(TreeJSON.number(target["minStep"]) == 0.5)
        #expect(TreeJSON.number(target["minValue"]) == 10)
        #expect(TreeJSON.number(target["maxValue"]) == 38)
        #expect(retained["homegate/demo-home/bedroom/bedroom-thermostat/thermostat/target-temperature"] == "20")
        #expect(retained["homegate/demo-home/bedroom/bedroom-thermostat/thermostat/current-temperature"] == "19.5")
        let mode = try #require(TreeLayout.characteristic("target-heating-cooling-state", of: "sim-thermostat", in: layout))
        #expect((mode["validValues"] as? [NSNumber])?.map(\.intValue) == [0, 1, 2, 3])
        let lock = try #require(TreeLayout.characteristic("lock-target-state", of: "sim-front-door-lock", in: layout))
        #expect((lock["validValues"] as? [NSNumber])?.map(\.intValue) == [0, 1])
        let on = try #require(TreeLayout.characteristic("on", of: "sim-lamp-1", in: layout))
        #expect(on["format"] as? String == "bool" && on["unit"] == nil)

        // The bridge and the accessories behind it.
        let bridge = try #require(TreeLayout.accessory("sim-hue-bridge", in: layout))
        #expect(bridge["category"] as? String == "bridge")
        #expect(bridge["bridge"] is NSNull)
        #expect(Set(bridge["bridged"] as? [String] ?? []) == Set(Self.bridgeIDs))
        for id in Self.bridgeIDs {
            let bridged = try #require(TreeLayout.accessory(id, in: layout))
            #expect(bridged["bridge"] as? String == "sim-hue-bridge", "\(id) names its bridge")
            #expect(bridged["bridged"] as? [String] == [], "\(id) bridges nothing")
        }
        #expect(retained["homegate/demo-home/living-room/reading-lamp/$reachable"] == "false")

        // The Accessory Information service never gets a topic.
        #expect(retained.keys.filter { $0.contains("accessory-information") } == [])
        #expect(TreeLayout.allTopics(layout).filter { $0.contains("accessory-information") } == [])
        #expect(accessories.flatMap(TreeLayout.services).filter { $0["type"] as? String == "accessory-information" }.isEmpty)
        try await fixture.stop()
    }

    @Test("a hidden service (by configuration or by its type) and the Accessory Information service have no topics and are not in $layout")
    func hiddenServicesHaveNoTopics() async throws {
        let config = TreeConfig.home(rooms: ["Office"], accessories: """
              - id: sim-desk-lamp
                name: Desk Lamp
                room: Office
                services:
                  - type: lightbulb
                    characteristics:
                      on: true
                  - type: switch
                    name: Service Mode
                    hidden: true
                    characteristics:
                      on: false
                  - type: firmware-update
        """)
        let fixture = try await GatewayFixture.start(config: config)
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        let layout = try Self.expectExactlyTheLayoutsTopics(retained)
        let lamp = try #require(TreeLayout.accessory("sim-desk-lamp", in: layout))
        #expect(TreeLayout.services(lamp).compactMap { $0["type"] as? String } == ["lightbulb"])
        let topic = "homegate/test-home/office/desk-lamp"
        #expect(lamp["topic"] as? String == topic)
        #expect(Set(retained.keys.filter { $0.hasPrefix(topic + "/") }) == ["\(topic)/$meta", "\(topic)/$reachable", "\(topic)/$last-seen", "\(topic)/lightbulb/on"])
        for hidden in ["switch", "firmware-update", "accessory-information"] {
            #expect(retained.keys.filter { $0.contains("/\(hidden)") } == [], "no retained topic of \(hidden)")
            #expect(TreeLayout.allTopics(layout).filter { $0.contains("/\(hidden)") } == [], "no $layout topic of \(hidden)")
        }
        // Nothing answers there either: a set to where the hidden switch would be resolves to nothing.
        let ack = try await fixture.command("\(topic)/switch/on/set", "true")
        #expect(TreeJSON.bool(ack["ok"]) == false)
        #expect(TreeJSON.number(ack["status"]) == -70409)
        try await fixture.stop()
    }

    // MARK: Bridges and values

    @Test("bridge cascade: unreachable takes every bridged accessory with it; back, each comes back unless unreachable on its own, with the values changed meanwhile")
    func bridgeCascade() async throws {
        let fixture = try await GatewayFixture.demo()
        let topics = [
            "sim-hue-bridge": "\(Self.home)/hallway/hue-bridge", "sim-hue-bedside": "\(Self.home)/bedroom/bedside-lamp",
            "sim-hue-ceiling": "\(Self.home)/living-room/ceiling-light", "sim-hue-reading": "\(Self.home)/living-room/reading-lamp",
        ]
        let followers = ["sim-hue-bridge", "sim-hue-bedside", "sim-hue-ceiling"] // reachable on their own
        let bedsideBrightness = "\(Self.home)/bedroom/bedside-lamp/lightbulb/brightness"

        // Away.
        let away = try await fixture.request("simulator/reachability", #"{"accessory": "sim-hue-bridge", "reachable": false}"#)
        #expect(TreeJSON.bool(away["ok"]) == true, "\(away)")
        for id in followers {
            let topic = try #require(topics[id])
            try await fixture.nextWatched(after: 0, where: GatewayFixture.isMessage(on: "\(topic)/$reachable", payload: "false", retained: true))
            let event = try await fixture.waitForEvent("accessory-reachability") { $0["accessory"] as? String == id && TreeJSON.bool($0["reachable"]) == false }
            #expect(event["home"] as? String == "Demo Home")
            #expect(event["name"] is String)
        }
        #expect(fixture.events("accessory-reachability").compactMap { $0["accessory"] as? String }.sorted() == followers.sorted(),
                "one event per accessory whose reachability changed, naming it (the Reading Lamp was unreachable already)")

        // A change on the device while it is away: silent.
        let update = try await fixture.request("simulator/update", #"{"accessory": "sim-hue-bedside", "characteristic": "brightness", "value": 33}"#)
        #expect(TreeJSON.bool(update["ok"]) == true, "\(update)")
        try await fixture.roundTrip()
        let whileAway = try await fixture.retained()
        #expect(whileAway[bedsideBrightness] == "70", "no retained change while unreachable")
        #expect(fixture.watched(where: GatewayFixture.isMessage(on: bedsideBrightness, payload: "33")).isEmpty)
        for (id, topic) in topics {
            #expect(whileAway["\(topic)/$reachable"] == "false", "\(id) is unreachable")
        }
        try Self.expectExactlyTheLayoutsTopics(whileAway)

        // Back.
        var trueBefore: [String: Int] = [:]
        for id in followers {
            trueBefore[id] = fixture.watched(where: GatewayFixture.isMessage(on: "\(topics[id] ?? "")/$reachable", payload: "true")).count
        }
        let back = try await fixture.request("simulator/reachability", #"{"accessory": "sim-hue-bridge", "reachable": true}"#)
        #expect(TreeJSON.bool(back["ok"]) == true, "\(back)")
        for id in followers {
            let topic = try #require(topics[id])
            try await fixture.nextWatched(after: trueBefore[id] ?? 0, where: GatewayFixture.isMessage(on: "\(topic)/$reachable", payload: "true", retained: true))
            try await fixture.waitForEvent("accessory-reachability") { $0["accessory"] as? String == id && TreeJSON.bool($0["reachable"]) == true }
        }
        // The value changed while away is published on the refresh.
        try await fixture.nextWatched(after: 0, where: GatewayFixture.isMessage(on: bedsideBrightness, payload: "33", retained: true))
        try await fixture.roundTrip()
        let afterwards = try await fixture.retained()
        #expect(afterwards[bedsideBrightness] == "33")
        for id in followers {
            #expect(afterwards["\(topics[id] ?? "")/$reachable"] == "true", "\(id) is back")
        }
        #expect(afterwards["\(topics["sim-hue-reading"] ?? "")/$reachable"] == "false", "the Reading Lamp, unreachable on its own, stays unreachable")
        #expect(fixture.watched(where: GatewayFixture.isMessage(on: "\(topics["sim-hue-reading"] ?? "")/$reachable", payload: "true")).isEmpty)
        #expect(fixture.events("accessory-reachability").filter { $0["accessory"] as? String == "sim-hue-reading" }.isEmpty)
        try Self.expectExactlyTheLayoutsTopics(afterwards)
        try await fixture.stop()
    }

    @Test("$layout is the structure only: a value or reachability change republishes none of it; a rename republishes only the parts it changes")
    func layoutIsStructureOnly() async throws {
        let fixture = try await GatewayFixture.demo()
        let before = try await fixture.currentLayout { _ in true }
        let prefix = "\(Self.home.replacingOccurrences(of: "homegate/", with: "homegate/$layout/"))"
        let isLayoutMessage: @Sendable (Message) -> Bool = { $0.topic.string.hasPrefix("homegate/$layout") }
        let seen = fixture.watched(where: isLayoutMessage).count
        for message in fixture.watched(where: isLayoutMessage) {
            #expect(!message.payloadString.contains(#""value""#) && !message.payloadString.contains(#""reachable""#), "\(message.topic)")
            #expect(message.payload.count < 128 * 1024)
        }
        // A value and a reachability change...
        let away = try await fixture.request("simulator/reachability", #"{"accessory": "sim-coffee-machine", "reachable": false}"#)
        #expect(TreeJSON.bool(away["ok"]) == true, "\(away)")
        let ack = try await fixture.command("\(Self.floorLamp)/lightbulb/brightness/set", "80")
        #expect(TreeJSON.bool(ack["ok"]) == true, "\(ack)")
        // ... then a rename, which changes the structure: the layout that follows shows it.
        let rename = try await fixture.request("room/rename", #"{"room": "Garage", "newName": "Workshop"}"#)
        #expect(TreeJSON.bool(rename["ok"]) == true, "\(rename)")
        let after = try await fixture.currentLayout { layout in
            (TreeLayout.homes(layout).first?["rooms"] as? [[String: Any]] ?? []).contains { $0["name"] as? String == "Workshop" }
        }
        // Everything published on $layout since: the home's part and the renamed room's parts
        // (the old room's part cleared); nothing for the value or the reachability.
        let since = fixture.watched(where: isLayoutMessage).dropFirst(seen)
        #expect(!since.isEmpty)
        for message in since {
            let topic = message.topic.string
            let expected = topic == prefix || topic.hasPrefix("\(prefix)/workshop") || (topic.hasPrefix("\(prefix)/garage") && message.payload.isEmpty)
            #expect(expected, "only the rename's parts are published: \(topic) \(message.payloadString.prefix(200))")
        }
        #expect(TreeLayout.accessories(after).count == TreeLayout.accessories(before).count)
        try await fixture.stop()
    }

    @Test("a drifting sensor's new value arrives retained, within the drift's bounds")
    func driftArrivesRetained() async throws {
        let config = TreeConfig.home(rooms: ["Kitchen"], accessories: """
              - id: sim-drifter
                name: Drifter
                room: Kitchen
                services:
                  - type: temperature-sensor
                    characteristics:
                      current-temperature:
                        value: 21.5
                        drift: {min: 18, max: 25, step: 0.1, every: 0.2}
        """)
        let fixture = try await GatewayFixture.start(config: config)
        let topic = "homegate/test-home/kitchen/drifter/temperature-sensor/current-temperature"
        // The sensor may have drifted before the first publication (it starts with the gateway):
        // wait for a value that differs from the first one seen.
        let initial = try await fixture.nextWatched(after: 0) { $0.topic.string == topic }
        let first = initial.payloadString
        let drifted = try await fixture.nextWatched(after: 0) { $0.topic.string == topic && $0.payloadString != first }
        #expect(drifted.retain, "a drift event is published retained")
        let value = try #require(TreeJSON.number(TreeJSON.scalar(drifted.payloadString)), "\(drifted.payloadString) is a number")
        #expect((18.0...25.0).contains(value))
        #expect(abs(value * 10 - (value * 10).rounded()) < 1e-9, "\(value) is a multiple of the drift step, 0.1")
        try await fixture.stop()
    }

    @Test("a momentary characteristic (a button press) is published, never retained")
    func momentaryIsNotRetained() async throws {
        let config = TreeConfig.home(rooms: ["Hallway"], accessories: """
              - id: sim-wall-button
                name: Wall Button
                room: Hallway
                services:
                  - type: stateless-programmable-switch
        """)
        let fixture = try await GatewayFixture.start(config: config)
        try await fixture.roundTrip()
        let topic = "homegate/test-home/hallway/wall-button/stateless-programmable-switch/programmable-switch-event"
        let layout = try await fixture.layout()
        let event = try #require(TreeLayout.characteristic("programmable-switch-event", of: "sim-wall-button", in: layout))
        #expect(event["topic"] as? String == topic)
        #expect(TreeJSON.bool(event["momentary"]) == true)
        #expect(event["value"] == nil, "$layout carries no values")

        for press in ["0", "2"] {
            let answer = try await fixture.request("simulator/update",
                                                   #"{"accessory": "sim-wall-button", "characteristic": "programmable-switch-event", "value": \#(press)}"#)
            #expect(TreeJSON.bool(answer["ok"]) == true, "\(answer)")
            let message = try await fixture.nextWatched(after: 0, where: GatewayFixture.isMessage(on: topic, payload: press))
            #expect(!message.retain, "the press \(press) is not retained")
        }
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        #expect(retained[topic] == nil, "nothing retained on \(topic)")
        #expect(fixture.watched { $0.topic.string == topic && $0.retain }.isEmpty)
        try Self.expectExactlyTheLayoutsTopics(retained)
        try await fixture.stop()
    }

    /// The simulator sends an event for every change made with `$request/simulator/update`,
    /// even of a characteristic without `ev`, which a HAP accessory would not; so this shows
    /// that such a characteristic's change arrives, not that polling is what brought it.
    @Test("a characteristic without events (name, perms pr) is published retained and its change arrives with poll_interval 0.3")
    func polledCharacteristic() async throws {
        let config = TreeConfig.home(rooms: ["Garden"], accessories: """
              - id: sim-porch-light
                name: Porch Light
                room: Garden
                services:
                  - type: lightbulb
                    name: Porch Light
                    characteristics:
                      on: false
                      name: Porch Light
        """, sections: "gateway:\n  poll_interval: 0.3")
        let fixture = try await GatewayFixture.start(config: config)
        try await fixture.roundTrip()
        let topic = "homegate/test-home/garden/porch-light/lightbulb/name"
        let layout = try await fixture.layout()
        let name = try #require(TreeLayout.characteristic("name", of: "sim-porch-light", in: layout))
        #expect(name["perms"] as? [String] == ["pr"], "no ev: it cannot send events")
        #expect(name["topic"] as? String == topic)
        #expect(try await fixture.retained()[topic] == #""Porch Light""#)

        let answer = try await fixture.request("simulator/update", #"{"accessory": "sim-porch-light", "service": "lightbulb", "characteristic": "name", "value": "Garden Light"}"#)
        #expect(TreeJSON.bool(answer["ok"]) == true, "\(answer)")
        try await fixture.nextWatched(after: 0, where: GatewayFixture.isMessage(on: topic, payload: #""Garden Light""#, retained: true))
        try await fixture.roundTrip()
        #expect(try await fixture.retained()[topic] == #""Garden Light""#)
        try await fixture.stop()
    }

    // MARK: Renames, moves, restarts

    @Test("SIGHUP after renaming an accessory and a room: old topics cleared, values on the new ones, accessory-renamed and room-renamed")
    func renameBySIGHUP() async throws {
        let fixture = try await GatewayFixture.demo()
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        let renamed = try TreeConfig.edit(TreeConfig.demo(), [
            ("rooms: [Living Room, Kitchen, Hallway, Garage, Bedroom]", "rooms: [{name: Lounge, id: living-room}, Kitchen, Hallway, Garage, Bedroom]"),
            ("rooms: [Living Room, Kitchen, Hallway, Garage]", "rooms: [Lounge, Kitchen, Hallway, Garage]"),
            ("      - id: sim-lamp-1\n        name: Floor Lamp\n", "      - id: sim-lamp-1\n        name: Standard Lamp\n"),
            ("room: Living Room", "room: Lounge"),
        ])
        try renamed.write(toFile: fixture.configFile, atomically: true, encoding: .utf8)
        fixture.gateway.signal(SIGHUP)
        try await fixture.gateway.waitForOutput(containing: "configuration reloaded")

        let accessoryEvent = try await fixture.waitForEvent("accessory-renamed") { $0["accessory"] as? String == "sim-lamp-1" }
        #expect(accessoryEvent["name"] as? String == "Standard Lamp")
        #expect(accessoryEvent["oldName"] as? String == "Floor Lamp")
        let roomEvent = try await fixture.waitForEvent("room-renamed")
        #expect(roomEvent["room"] as? String == "Lounge")
        #expect(roomEvent["oldName"] as? String == "Living Room")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        let layout = try Self.expectExactlyTheLayoutsTopics(retained)
        let lamp = try #require(TreeLayout.accessory("sim-lamp-1", in: layout))
        #expect(lamp["name"] as? String == "Standard Lamp")
        #expect(lamp["room"] as? String == "Lounge")
        let newTopic = "\(Self.home)/lounge/standard-lamp"
        #expect(lamp["topic"] as? String == newTopic)
        #expect(retained.keys.filter { $0.contains("/living-room/") || $0.contains("/floor-lamp/") }.sorted() == [], "no stale retained topic")
        #expect(retained["\(newTopic)/lightbulb/brightness"] == "40")
        #expect(retained["\(newTopic)/lightbulb/on"] == "false")
        #expect(retained["\(newTopic)/$reachable"] == "true")
        let meta = try GatewayFixture.decode(Array((retained["\(newTopic)/$meta"] ?? "").utf8))
        #expect(meta["name"] as? String == "Standard Lamp")
        #expect(meta["room"] as? String == "Lounge")
        // The room's other accessories moved with it.
        #expect(retained["\(Self.home)/lounge/ceiling-light/lightbulb/brightness"] == "100")
        #expect(retained["\(Self.home)/lounge/tv-outlet/outlet/on"] == "true")
        // The old topics were cleared by the gateway, not just never seen.
        #expect(!fixture.watched { $0.topic.string == "\(Self.floorLamp)/lightbulb/brightness" && $0.retain && $0.payload.isEmpty }.isEmpty,
                "the gateway cleared the old value topic with an empty retained message")
        try await fixture.stop()
    }

    @Test("SIGHUP after moving an accessory to another room: old topics cleared, values on the new ones, accessory-assigned")
    func moveBySIGHUP() async throws {
        let fixture = try await GatewayFixture.demo()
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        let moved = try TreeConfig.edit(TreeConfig.demo(), [
            ("name: Floor Lamp\n        room: Living Room", "name: Floor Lamp\n        room: Kitchen"),
        ])
        try moved.write(toFile: fixture.configFile, atomically: true, encoding: .utf8)
        fixture.gateway.signal(SIGHUP)
        try await fixture.gateway.waitForOutput(containing: "configuration reloaded")

        let event = try await fixture.waitForEvent("accessory-assigned") { $0["accessory"] as? String == "sim-lamp-1" }
        #expect(event["room"] as? String == "Kitchen")
        #expect(event["oldRoom"] as? String == "Living Room")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        let layout = try Self.expectExactlyTheLayoutsTopics(retained)
        let newTopic = "\(Self.home)/kitchen/floor-lamp"
        #expect(TreeLayout.accessory("sim-lamp-1", in: layout)?["topic"] as? String == newTopic)
        #expect(retained.keys.filter { $0.hasPrefix(Self.floorLamp + "/") }.sorted() == [], "no stale retained topic")
        #expect(retained["\(newTopic)/lightbulb/brightness"] == "40")
        #expect(retained["\(newTopic)/lightbulb/hue"] == "30")
        let meta = try GatewayFixture.decode(Array((retained["\(newTopic)/$meta"] ?? "").utf8))
        #expect(meta["room"] as? String == "Kitchen")
        try await fixture.stop()
    }

    @Test("a configuration changed while the gateway was stopped (an accessory moved): no stale retained topic after the start")
    func changedConfigurationAtRestart() async throws {
        let first = try await GatewayFixture.demo()
        try await first.stop(keepBroker: true)
        let moved = try TreeConfig.edit(TreeConfig.demo(), [
            ("name: Floor Lamp\n        room: Living Room", "name: Floor Lamp\n        room: Bedroom"),
        ])
        let fixture = try await GatewayFixture.start(config: moved, broker: first.broker, folder: first.folder)
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        let layout = try Self.expectExactlyTheLayoutsTopics(retained)
        let newTopic = "\(Self.home)/bedroom/floor-lamp"
        #expect(TreeLayout.accessory("sim-lamp-1", in: layout)?["room"] as? String == "Bedroom")
        #expect(retained.keys.filter { $0.hasPrefix(Self.floorLamp + "/") }.sorted() == [], "no stale retained topic")
        #expect(retained["\(newTopic)/lightbulb/brightness"] == "40")
        try await fixture.stop()
    }

    @Test("at start: an accessory removed while the gateway was down, and a stray retained message under the base, are cleared; $state is kept")
    func sweptAtStart() async throws {
        let first = try await GatewayFixture.demo()
        let outlet = "\(Self.home)/living-room/tv-outlet"
        try await first.publishAsAnotherClient("homegate/junk/topic", "left over", retain: true)
        try await first.roundTrip()
        let before = try await first.retained()
        #expect(before["homegate/junk/topic"] == "left over")
        #expect(before["\(outlet)/outlet/on"] == "true")
        try await first.stop(keepBroker: true)
        try await first.publishAsAnotherClient("homegate/demo-home/junk", "left over too", retain: true)

        let removed = try TreeConfig.edit(TreeConfig.demo(), [("""
              - id: sim-tv-outlet
                name: TV Outlet
                room: Living Room
                model: Smart Plug
                services:
                  - type: outlet
                    name: TV Outlet
                    characteristics:
                      on: true
                      outlet-in-use: true

        """, "")])
        let fixture = try await GatewayFixture.start(config: removed, broker: first.broker, folder: first.folder)
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        try await fixture.roundTrip()
        let retained = try await fixture.retained()
        let layout = try Self.expectExactlyTheLayoutsTopics(retained)
        #expect(retained.keys.filter { $0.hasPrefix(outlet) }.sorted() == [], "the removed accessory's topics are cleared")
        #expect(TreeLayout.accessory("sim-tv-outlet", in: layout) == nil, "and it is not in $layout")
        let synchronised = fixture.gateway.output.components(separatedBy: "\n").last { $0.contains("synchronised with the broker") } ?? ""
        #expect(retained["homegate/junk/topic"] == nil, "a stray retained message is cleared; the gateway said: \(synchronised)")
        #expect(retained["homegate/demo-home/junk"] == nil, "a stray retained message is cleared; the gateway said: \(synchronised)")
        #expect(retained["homegate/$state"] == "online", "$state is kept")
        try await fixture.stop()
    }

    // MARK: The broker and the gateway going away

    @Test("the broker restarted without persistence: every retained topic is back, exactly as before")
    func brokerLostItsRetainedMessages() async throws {
        let fixture = try await GatewayFixture.demo()
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        try await fixture.roundTrip()
        let before = try await fixture.retained()
        try Self.expectExactlyTheLayoutsTopics(before)

        let synchronisations = fixture.gateway.occurrences(of: "synchronised with the broker")
        let restarted = ContinuousClock.now
        try await fixture.broker.restart()
        let output = try await fixture.gateway.waitForOutput(containing: "synchronised with the broker", times: synchronisations + 1)
        let line = output.components(separatedBy: "\n").last { $0.contains("synchronised with the broker") } ?? ""
        let total = before.count - 1 // all but $state, which the gateway publishes apart
        #expect(line.contains("\(total) retained topics, \(total) published"), "the broker had lost everything, so all was republished: \(line)")
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        // How soon depends on the reconnect backoff's jitter and the machine's load (1.1 s alone,
        // over 5 s with the whole suite beside it): timings are the benchmark's, not a test's.
        print("back \(restarted.duration(to: .now)) after the broker's restart began")
        try await fixture.roundTrip()
        let after = try await fixture.retained()
        try Self.expectExactlyTheLayoutsTopics(after)
        #expect(after == before, "every value, $reachable, $meta, $layout and $state as before")
        try await fixture.stop()
    }

    @Test("the gateway killed with SIGKILL: $state goes offline by the will, retained")
    func killedGatewayGoesOffline() async throws {
        let fixture = try await GatewayFixture.demo()
        try await fixture.waitUntilRetained("homegate/$state", equals: "online")
        fixture.gateway.signal(SIGKILL)
        #expect(try await fixture.gateway.waitForExit() == -SIGKILL)
        try await fixture.nextWatched(after: 0, where: GatewayFixture.isMessage(on: "homegate/$state", payload: "offline"))
        #expect(try await fixture.retained()["homegate/$state"] == "offline")
        await fixture.stopAfterGatewayExit()
    }

    @Test("a QoS 1 set sent while the gateway was away (killed, its session kept) is executed and acknowledged exactly once after it is back")
    func setWhileAway() async throws {
        let first = try await GatewayFixture.demo()
        first.gateway.signal(SIGKILL)
        _ = try await first.gateway.waitForExit()
        try await first.nextWatched(after: 0, where: GatewayFixture.isMessage(on: "homegate/$state", payload: "offline"))

        let topic = "\(Self.floorLamp)/lightbulb/brightness"
        let phone = try await TestClient.connect(TestClient.configuration(first.broker.url, id: "phone"))
        try await phone.subscribe("\(topic)/set/result")
        try await phone.publish("\(topic)/set", #"{"value": 77, "id": "while-away"}"#, qos: .atLeastOnce)
        await first.stopAfterGatewayExit(keepBroker: true)

        let fixture = try await GatewayFixture.start(config: TreeConfig.demo(), broker: first.broker, folder: first.folder)
        let ack = try GatewayFixture.decode(try await phone.inbox.first { $0.topic.string == "\(topic)/set/result" && $0.payloadString.contains("while-away") }.payload)
        #expect(TreeJSON.bool(ack["ok"]) == true, "\(ack)")
        #expect(TreeJSON.number(ack["value"]) == 77)
        #expect(try await fixture.retained()[topic] == "77")
        // A later set to the same characteristic is acknowledged after any repeat of the first would have been.
        try await phone.publish("\(topic)/set", #"{"value": 78, "id": "after"}"#, qos: .atLeastOnce)
        _ = try await phone.inbox.first { $0.topic.string == "\(topic)/set/result" && $0.payloadString.contains("\"after\"") }
        try await fixture.roundTrip()
        #expect(phone.inbox.all.filter { $0.topic.string == "\(topic)/set/result" && $0.payloadString.contains("while-away") }.count == 1,
                "acknowledged exactly once")
        #expect(try await fixture.retained()[topic] == "78")
        await phone.stop()
        try await fixture.stop()
    }
}

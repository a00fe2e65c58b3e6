import Accessories
import Foundation
import HomeModel
import Testing
import Wire
@testable import Gateway

/// Management requests as values: ``ManagementRequest`` parses, ``Management`` decides. The
/// end-to-end answers through the broker are `ManagementTests` and `ManagementVerbTests`.
@Suite("Management: parsing and deciding requests")
struct ManagementDecisionTests {
    /// Demo Home (primary): a front door lock in the Hall, a floor lamp in the Kitchen, the action
    /// set Night; Cabin: empty. The lock belongs to a paired device.
    static func homes() throws -> [Home] {
        let lock = try AccessoryBlueprint(id: "front-door", name: "Front Door", category: .doorLock, roomID: "hall", services: [
            .init(type: "lock-mechanism", characteristics: ["lock-target-state": .uint(1)]),
        ]).build()
        let lamp = try AccessoryBlueprint(id: "floor-lamp", name: "Floor Lamp", category: .lightbulb, roomID: "kitchen", services: [
            .init(type: "lightbulb", characteristics: ["brightness": .int(40)]),
        ]).build()
        let demo = Home(id: "demo", name: "Demo Home", isPrimary: true,
                        rooms: [Room(id: "hall", name: "Hall"), Room(id: "kitchen", name: "Kitchen")],
                        accessories: [lock, lamp],
                        actionSets: [ActionSet(id: "night", name: "Night", actions: [])])
        return [demo, Home(id: "cabin", name: "Cabin")]
    }

    static func management(_ homes: [Home]) -> Management {
        Management(homes: homes, map: TopicMap(base: "homegate", homes: homes), base: "homegate",
                   isPairedDevice: { $0 == "front-door" })
    }

    static func parse(_ path: String, _ body: [String: JSON] = [:]) throws -> ManagementRequest {
        let parts = path.split(separator: "/").map(String.init)
        return try ManagementRequest(object: parts[0], verb: parts[1], body: body)
    }

    /// The request error `body` throws, as `code: message`.
    static func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as RequestError {
            return "\(error.code): \(error.message)"
        } catch {
            return "unexpected \(error)"
        }
    }

    static func lockTarget(in homes: [Home]) throws -> (topic: String, iid: Int) {
        let lock = try #require(homes[0].accessories.first { $0.id == "front-door" })
        let characteristic = try #require(lock.services.lazy.compactMap { $0.characteristic(ofType: "lock-target-state") }.first)
        let topic = try #require(TopicMap(base: "homegate", homes: homes).topic(of: .characteristic("demo", CharacteristicReference(accessoryID: "front-door", iid: characteristic.iid))))
        return (topic, characteristic.iid)
    }

    // MARK: Parsing

    @Test("a request parses into the change it asks for, with the home it names")
    func parsesChanges() throws {
        #expect(try Self.parse("home/add", ["name": "Cabin"]) == .layout(.addHome(name: "Cabin"), home: nil))
        #expect(try Self.parse("room/rename", ["room": "Hall", "newName": "Entry", "home": "Cabin"])
            == .layout(.renameRoom("Hall", to: "Entry"), home: "Cabin"))
        #expect(try Self.parse("service-group/add-service", ["group": "Lights", "service": "homegate/demo-home/kitchen/floor-lamp/lightbulb"])
            == .layout(.addServiceToGroup(.topic("homegate/demo-home/kitchen/floor-lamp/lightbulb"), group: "Lights"), home: nil))
        #expect(try Self.parse("service-group/add-service", ["group": "Lights", "accessory": "floor-lamp", "service": 8])
            == .layout(.addServiceToGroup(.instance(accessory: "floor-lamp", iid: 8), group: "Lights"), home: nil))
        #expect(try Self.parse("action-set/execute", ["actionSet": "Night"]) == .executeActionSet("Night", home: nil))
        #expect(try Self.parse("trigger/disable", ["trigger": "Sunset"]) == .layout(.setTriggerEnabled("Sunset", false), home: nil))
        #expect(try Self.parse("browser/start") == .browse(true))
        #expect(try Self.parse("accessory/pair", ["device": "aa:bb:cc:dd:ee:ff", "code": "031-45-154"])
            == .pair(.init(address: .found(deviceID: "AA:BB:CC:DD:EE:FF"), code: "031-45-154", room: nil, home: nil)))
    }

    @Test("a missing or mistyped field, an unknown verb or object: the wire code and what is wrong")
    func refusesBadRequests() {
        #expect(Self.failure { _ = try Self.parse("room/add") } == #"invalid-request: "name" is required (a string)"#)
        #expect(Self.failure { _ = try Self.parse("room/add", ["name": "Den", "home": 3]) } == #"invalid-request: "home" must be a string"#)
        #expect(Self.failure { _ = try Self.parse("accessory/pair", ["host": "10.0.0.5", "port": 70000, "code": "031-45-154"]) }
            == #"invalid-request: "port" must be 1 to 65535"#)
        #expect(Self.failure { _ = try Self.parse("action-set/add-action", ["actionSet": "Night", "characteristic": "x"]) }
            == #"invalid-request: "value" is required"#)
        #expect(Self.failure { _ = try Self.parse("room/paint", ["room": "Hall"]) } == #"unknown-request: unknown request "room/paint""#)
        #expect(Self.failure { _ = try Self.parse("browser/pause") } == #"unknown-request: unknown request "browser/pause"; known: start, stop"#)
    }

    // MARK: Deciding

    @Test("a change gives the new homes and the answer; the homes it was decided on stay as they were")
    func appliesAChange() throws {
        let homes = try Self.homes()
        let outcome = try Self.management(homes).apply(.addRoom(name: "Den"), home: "Cabin")
        #expect(outcome.answer["room"] == "Den")
        #expect(outcome.homes[1].rooms.map(\.name).contains("Den"))
        #expect(homes[1].rooms.map(\.name).contains("Den") == false)
    }

    @Test("HomeKit's refusal keeps its code: a room name in use, a removal of a paired device's accessory")
    func refusesWhatHomeKitRefuses() throws {
        let management = Self.management(try Self.homes())
        #expect(Self.failure { _ = try management.apply(.renameRoom("Hall", to: "Kitchen"), home: nil) }?.hasPrefix("name-in-use: ") == true)
        #expect(Self.failure { _ = try management.apply(.removeAccessory("Front Door"), home: nil) }
            == "not-allowed: front-door is a paired HomeKit device: accessory/unpair removes it (with everything behind its bridge)")
        let removed = try management.apply(.removeAccessory("Floor Lamp"), home: nil)
        #expect(removed.answer["removed"] == .array(["floor-lamp"]))
    }

    @Test("an action named by topic takes a label of the characteristic's values, stored as its number; a wrong label is refused")
    func actionsByTopicAndLabel() throws {
        let homes = try Self.homes()
        let (topic, iid) = try Self.lockTarget(in: homes)
        let outcome = try Self.management(homes).apply(.addAction(actionSet: "Night", .topic(topic), value: "secured"), home: nil)
        #expect(outcome.answer == ["accessory": "front-door", "characteristic": .int(iid), "topic": .string(topic)])
        let action = try #require(outcome.homes[0].actionSets[0].actions.first)
        #expect(action.characteristic == CharacteristicReference(accessoryID: "front-door", iid: iid))
        #expect(action.value == .uint(1))
        let wrong = Self.failure { _ = try Self.management(homes).apply(.addAction(actionSet: "Night", .topic(topic), value: "open"), home: nil) }
        #expect(wrong?.hasPrefix("invalid-value: ") == true)
    }

    @Test("a topic that names nothing is not-found with the closest names; a service's topic where a characteristic is wanted is invalid")
    func unresolvedTopics() throws {
        let homes = try Self.homes()
        let management = Self.management(homes)
        let (topic, _) = try Self.lockTarget(in: homes)
        let typo = topic.replacingOccurrences(of: "front-door", with: "front-dor")
        let missing = Self.failure { _ = try management.resolve(.topic(typo), .characteristic, home: nil) }
        #expect(missing?.hasPrefix(#"not-found: "characteristic": no accessory "front-dor""#) == true)
        #expect(missing?.contains(#"did you mean "front-door"?"#) == true)
        let service = String(topic[..<topic.lastIndex(of: "/")!])
        #expect(Self.failure { _ = try management.resolve(.topic(service), .characteristic, home: nil) }
            == "invalid-request: \"characteristic\": \(service) is not a characteristic's topic")
    }

    @Test("device actions get their objects resolved: an accessory by name, an action set with its home, a pairing's placement")
    func resolvesDeviceActions() throws {
        let management = Self.management(try Self.homes())
        #expect(try management.accessoryID("Floor Lamp", home: nil) == "floor-lamp")
        let (home, actionSet) = try management.actionSet("Night", home: "demo home")
        #expect(home == "demo" && actionSet == "night")
        #expect(try management.placement(room: "Garage", home: "cabin") == Placement(home: "Cabin", room: "Garage"))
        #expect(Self.failure { _ = try management.placement(room: "Garage", home: "Attic") }?.hasPrefix("not-found: ") == true)
        #expect(Self.failure { _ = try management.placement(room: " ", home: nil) }?.hasPrefix("invalid-name: ") == true)
    }
}

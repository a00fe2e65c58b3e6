import Accessories
import Testing
import Wire
import HomeModel
@testable import Gateway

/// The home tree on its own: look-ups by location, a value taken in place, the topics laid out
/// again after the homes changed.
@Suite("home tree")
struct HomeTreeTests {
    static func tree() throws -> HomeTree {
        let (home, _) = try EngineHarness.labHome(latency: .zero)
        let button = try AccessoryBlueprint(id: "button", name: "Button", category: .programmableSwitch, roomID: "office", services: [
            .init(type: "stateless-programmable-switch", characteristics: ["service-label-index": .uint(1)]),
        ]).build()
        var homes = [home]
        homes[0].accessories.append(button)
        var tree = HomeTree(base: "homegate", homes: homes)
        tree.reindex()
        return tree
    }

    static func reference(_ tree: HomeTree, _ accessory: AccessoryID, _ type: String) throws -> CharacteristicReference {
        let found = try #require(tree.accessory(accessory)?.accessory.services.flatMap(\.characteristics).first { $0.type == type })
        return CharacteristicReference(accessoryID: accessory, iid: found.iid)
    }

    @Test("a new value is kept and reported changed; the same value again is not a change")
    func takeValue() throws {
        var tree = try Self.tree()
        let brightness = try Self.reference(tree, "lamp", "brightness")
        let taken = tree.takeValue(.int(40), at: brightness)
        let first = try #require(taken)
        #expect(first.changed && first.characteristic?.value == .int(10), "reported as it was, with the change")
        #expect(tree.characteristic(brightness)?.value == .int(40))
        let takenAgain = tree.takeValue(.int(40), at: brightness)
        let again = try #require(takenAgain)
        #expect(!again.changed)
        let nowhere = tree.takeValue(.int(1), at: CharacteristicReference(accessoryID: "nowhere", iid: 1))
        #expect(nowhere == nil, "an accessory the tree lacks")
        let takenElsewhere = tree.takeValue(.int(1), at: CharacteristicReference(accessoryID: "lamp", iid: 9_999))
        let elsewhere = try #require(takenElsewhere, "the accessory is known")
        #expect(elsewhere.characteristic == nil && !elsewhere.changed)
    }

    @Test("a momentary characteristic's event is always a change and never kept")
    func momentary() throws {
        var tree = try Self.tree()
        let event = try Self.reference(tree, "button", "programmable-switch-event")
        for _ in 1...2 {
            let taken = tree.takeValue(.uint(0), at: event)
            #expect(taken?.changed == true)
        }
        #expect(tree.characteristic(event)?.value == nil)
    }

    @Test("names, topics and the service of a characteristic; the topics follow a rename after reindex")
    func lookUps() throws {
        var tree = try Self.tree()
        let on = try Self.reference(tree, "lamp", "on")
        #expect(tree.name(of: on) == "Lamp (on)")
        #expect(tree.service(of: on)?.service.type == "lightbulb")
        #expect(tree.topic(of: on) == "homegate/lab/office/lamp/lightbulb/on")
        #expect(tree.characteristicTopics(of: "lamp") == ["homegate/lab/office/lamp/lightbulb/on", "homegate/lab/office/lamp/lightbulb/brightness"])
        tree.homes[0].accessories[0].name = "Desk Lamp"
        #expect(tree.topic(of: on) == "homegate/lab/office/lamp/lightbulb/on", "until reindexed")
        tree.reindex()
        #expect(tree.topic(of: on) == "homegate/lab/office/desk-lamp/lightbulb/on")
    }

    @Test("a new accessory is placed in the named home and room (made if missing); a bridged one starts in the default room; a bad room name is refused")
    func place() throws {
        var tree = try Self.tree()
        let plug = try AccessoryBlueprint(id: "plug", name: "Plug", category: .outlet, services: [
            .init(type: "outlet", characteristics: ["on": .bool(false)]),
        ]).build()
        let placed = tree.place(plug, Placement(home: "lab", room: "Garage"))
        #expect(placed.home == "Lab" && placed.room == "Garage" && placed.refusedRoom == nil)
        #expect(tree.homes[0].rooms.map(\.name) == ["Office", "Garage"])
        var bridged = plug
        bridged.id = "bridged"
        bridged.bridgeID = "bridge"
        let behindBridge = tree.place(bridged, Placement(room: "Office"))
        #expect(behindBridge.room == "Default Room")
        var odd = plug
        odd.id = "odd"
        let refused = tree.place(odd, Placement(room: "  "))
        #expect(refused.refusedRoom == "  " && refused.room == "Default Room")
        #expect(tree.homes[0].rooms.count == 2, "no room made for a refused name")
    }

    @Test("reachability changes once; a removal takes the accessory out of its home and of the groups and scenes naming it")
    func reachabilityAndRemoval() throws {
        var tree = try Self.tree()
        let first = tree.setReachable("lamp", false)
        #expect(first?.accessory.isReachable == false)
        let again = tree.setReachable("lamp", false)
        #expect(again == nil, "already unreachable")
        let on = try Self.reference(tree, "lamp", "on")
        tree.homes[0].actionSets = [ActionSet(id: "evening", name: "Evening", actions: [ActionSet.Action(characteristic: on, value: .bool(true))])]
        let removed = tree.remove(["lamp"])
        #expect(removed)
        #expect(tree.homes[0].accessories.map(\.id).contains("lamp") == false)
        #expect(tree.homes[0].actionSets[0].actions.isEmpty)
        let removedAgain = tree.remove(["lamp"])
        #expect(!removedAgain, "nothing left to remove")
    }

    @Test("a device's description: the structure and values are the device's, the name, room and reachability the tree's; one that came back is named, one unknown returned")
    func descriptions() throws {
        var tree = try Self.tree()
        _ = tree.setReachable("lamp", false)
        var device = try #require(tree.accessory("lamp")?.accessory)
        device.name = "Device Name"
        device.roomID = nil
        device.isReachable = true
        let bulb = try #require(device.services.firstIndex { $0.type == "lightbulb" })
        device.services[bulb].characteristics.removeAll { $0.type == "brightness" }
        var stranger = device
        stranger.id = "stranger"
        let (cameBack, unknown) = tree.takeDescriptions([device, stranger])
        #expect(cameBack == ["lamp"])
        #expect(unknown.map(\.id) == ["stranger"])
        let lamp = try #require(tree.accessory("lamp")?.accessory)
        #expect(lamp.name == "Lamp" && lamp.roomID == "office" && !lamp.isReachable, "the tree's, until marked")
        #expect(lamp.services[bulb].characteristics.map(\.type) == ["on"])
        #expect(tree.accessoryCounts.all == 5 && tree.accessoryCounts.reachable == 4)
    }

    @Test("at start, accessories no device describes are unreachable")
    func structureAtStart() throws {
        var tree = try Self.tree()
        let lamp = try #require(tree.accessory("lamp")?.accessory)
        tree.takeStructure(of: [lamp])
        #expect(tree.accessoryCounts.reachable == 1)
        #expect(tree.accessory("lamp")?.accessory.isReachable == true)
    }

    static func command(_ verb: Inbound.Verb, _ path: String, _ payload: String) -> Inbound.Command {
        Inbound.Command(verb: verb, path: path.split(separator: "/"), body: Inbound.Body(Array(payload.utf8)))
    }

    @Test("a set or a get read against the tree: the value checked; a service-level set all or nothing; a wrong path or value refused, naming it")
    func commands() throws {
        let tree = try Self.tree()
        let on = try Self.reference(tree, "lamp", "on"), brightness = try Self.reference(tree, "lamp", "brightness")
        let set = try tree.command(for: Self.command(.set, "lab/office/lamp/lightbulb/on", "true"))
        #expect(set.0 == .single(CommandMachine.Item(on, .write(.bool(true)))))
        let get = try tree.command(for: Self.command(.get, "lab/office/lamp/lightbulb/brightness", ""))
        #expect(get.0 == .single(CommandMachine.Item(brightness, .read)))
        let together = try tree.command(for: Self.command(.set, "lab/office/lamp/lightbulb", #"{"on": true, "brightness": 50, "id": 7}"#))
        #expect(together.0 == .together([CommandMachine.Item(brightness, .write(.int(50))), CommandMachine.Item(on, .write(.bool(true)))]))
        guard case .aggregated = together.1 else {
            Issue.record("a service-level set is acknowledged aggregated")
            return
        }
        #expect(throws: StatusError.self, "a value out of range") { try tree.command(for: Self.command(.set, "lab/office/lamp/lightbulb/brightness", "101")) }
        #expect(throws: StatusError.self, "one bad member refuses the whole set") {
            try tree.command(for: Self.command(.set, "lab/office/lamp/lightbulb", #"{"on": true, "colour": 3}"#))
        }
        do {
            _ = try tree.command(for: Self.command(.set, "lab/office/lamp/bulb/on", "true"))
            Issue.record("an unknown service is refused")
        } catch {
            #expect(error.status == .noSuchResource && error.message.contains("bulb"), "\(error.message)")
        }
    }

    @Test("a reloaded layout takes the devices' structure with the layout's names and rooms; an accessory new in it joins if a device is given, else is left out")
    func withDevices() throws {
        let tree = try Self.tree()
        var layout = tree.homes
        layout[0].accessories = layout[0].accessories.map { accessory in
            var named = accessory
            named.services = []
            if accessory.id == "lamp" { named.name = "Reading Lamp" }
            return named
        }
        var newcomer = try #require(tree.accessory("sensor")?.accessory)
        newcomer.id = "newcomer"
        var stranger = newcomer
        stranger.id = "stranger"
        layout[0].accessories += [newcomer, stranger]
        let merged = tree.withDevices(in: layout, joining: { $0 == "newcomer" ? newcomer : nil })
        #expect(merged.joined == ["newcomer"] && merged.leftOut == ["stranger"])
        let lamp = try #require(merged.homes[0].accessories.first { $0.id == "lamp" })
        #expect(lamp.name == "Reading Lamp" && lamp.services == tree.accessory("lamp")?.accessory.services, "the layout's name, the device's structure")
        #expect(merged.homes[0].accessories.map(\.id).contains("stranger") == false)
    }

    @Test("a request's characteristic by topic or by instance; one the tree lacks is not found")
    func requested() throws {
        let tree = try Self.tree()
        let on = try Self.reference(tree, "lamp", "on")
        let byTopic = try tree.requestedCharacteristic(.topic("homegate/lab/office/lamp/lightbulb/on"), home: nil)
        #expect(byTopic.reference == on && byTopic.topic == "homegate/lab/office/lamp/lightbulb/on" && byTopic.characteristic.type == "on")
        let byInstance = try tree.requestedCharacteristic(.instance(accessory: "lamp", iid: on.iid), home: nil)
        #expect(byInstance.reference == on)
        #expect(throws: RequestError.self) { try tree.requestedCharacteristic(.instance(accessory: "lamp", iid: 9_999), home: nil) }
        #expect(throws: RequestError.self) { try tree.requestedAccessory("nowhere") }
        #expect(try tree.requestedAccessory("lamp") == "lamp")
    }

    @Test("an accessory's events name it and its home; a device's new structure is announced with the topics added and removed")
    func events() throws {
        var tree = try Self.tree()
        #expect(tree.reachabilityEvent("lamp", reachable: false)?.fields["name"] == "Lamp")
        #expect(tree.reachabilityEvent("nowhere", reachable: true) == nil)
        #expect(tree.warningEvent("nowhere", message: "odd").fields["name"] == "nowhere", "named by id when the tree lacks it")
        let before = ["lamp": tree.characteristicTopics(of: "lamp")] as [AccessoryID: Set<String>]
        #expect(tree.updateEvents(comparedWith: before).isEmpty)
        let bulb = try #require(tree.homes[0].accessories[0].services.firstIndex { $0.type == "lightbulb" })
        tree.homes[0].accessories[0].services[bulb].characteristics.removeAll { $0.type == "brightness" }
        tree.reindex()
        let updated = tree.updateEvents(comparedWith: before)
        #expect(updated.map(\.kind) == ["accessory-updated"])
        #expect(updated.first?.fields["removed"] == ["homegate/lab/office/lamp/lightbulb/brightness"] && updated.first?.fields["added"] == [])
    }

    @Test("the values a description changed, for the history: those that differ, all of a new accessory's; none hidden or momentary")
    func changedValues() throws {
        var tree = try Self.tree()
        let before = tree.homes
        let brightness = try Self.reference(tree, "lamp", "brightness")
        _ = tree.takeValue(.int(70), at: brightness)
        #expect(tree.changedValues(of: ["lamp"], comparedWith: before).map(\.0) == [brightness])
        #expect(tree.changedValues(of: ["button"], comparedWith: before).isEmpty, "a button's events are not states")
        let sensor = tree.changedValues(of: ["sensor"], comparedWith: [])
        #expect(sensor.map(\.1) == [.float(21.5)], "all of an accessory new since")
    }

    @Test("a shortcut read against the tree: a group's services with the characteristic, a value one of them refuses listed apart; names compared loosely; what names nothing refused")
    func shortcuts() throws {
        var tree = try Self.tree()
        let lamp = try #require(tree.service(of: try Self.reference(tree, "lamp", "on"))?.service.iid)
        let slow = try #require(tree.service(of: try Self.reference(tree, "slow", "on"))?.service.iid)
        tree.homes[0].serviceGroups = [ServiceGroup(id: "lights", name: "All Lights", services: [
            ServiceReference(accessoryID: "lamp", serviceIID: lamp), ServiceReference(accessoryID: "slow", serviceIID: slow),
        ])]
        tree.reindex()
        let on = Inbound.Shortcut(home: "lab", target: .group(name: "all-lights", characteristic: "on"), body: Inbound.Body(Array("true".utf8)))
        guard case .writes(let writes, let refused, let extra) = try tree.plan(for: on) else {
            Issue.record("a group's writes")
            return
        }
        #expect(writes.count == 2 && refused.isEmpty && extra["group"] == "All Lights")
        let bright = Inbound.Shortcut(home: "lab", target: .group(name: "All Lights", characteristic: "brightness"), body: Inbound.Body(Array("101".utf8)))
        guard case .writes(let none, let tooBright, _) = try tree.plan(for: bright) else {
            Issue.record("refused values listed")
            return
        }
        #expect(none.isEmpty && tooBright.count == 2)
        #expect(throws: StatusError.self) { try tree.plan(for: Inbound.Shortcut(home: "attic", target: .actionSet(name: "x"), body: .text(""))) }
        #expect(throws: StatusError.self) { try tree.plan(for: Inbound.Shortcut(home: "lab", target: .group(name: "All Lights", characteristic: "hue"), body: .text("1"))) }
    }
}

import Foundation
import Testing
import Wire
@testable import Gateway
import HomeModel

@Suite("Layout changes: the $events an edit produces")
struct LayoutChangesTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    /// Demo Home (primary): Kitchen and Hall in the zone Downstairs; a lamp with two lightbulbs
    /// in the Kitchen; a group, an action set and a trigger. Cabin: empty.
    static func homes() -> [Home] {
        let lamp = Accessory(id: "lamp", name: "Floor Lamp", roomID: "kitchen", services: [
            Service(iid: 8, type: "lightbulb", uuid: "00000043-0000-1000-8000-0026BB765291", name: "Main Light"),
            Service(iid: 11, type: "lightbulb", uuid: "00000043-0000-1000-8000-0026BB765291", name: "Reading Light"),
        ])
        let demo = Home(id: "demo", name: "Demo Home", isPrimary: true,
                        rooms: [Room(id: "kitchen", name: "Kitchen"), Room(id: "hall", name: "Hall")],
                        zones: [Zone(id: "downstairs", name: "Downstairs", roomIDs: ["kitchen", "hall"])],
                        accessories: [lamp],
                        serviceGroups: [ServiceGroup(id: "lights", name: "Lights", services: [ServiceReference(accessoryID: "lamp", serviceIID: 8)])],
                        actionSets: [ActionSet(id: "evening", name: "Evening", actions: [
                            .init(characteristic: CharacteristicReference(accessoryID: "lamp", iid: 10), value: .int(30)),
                        ])],
                        triggers: [TimerTrigger(id: "sunset", name: "Sunset", fireDate: date, recurrence: .init(unit: .day, every: 1), actionSetIDs: ["evening"])])
        return [demo, Home(id: "cabin", name: "Cabin")]
    }

    /// The events between the homes before and after `edit`, as `kind {json}` lines.
    func changes(_ edit: (inout [Home]) throws -> Void) rethrows -> [String] {
        let before = Self.homes()
        var after = before
        try edit(&after)
        return LayoutChanges.events(from: before, to: after).map { event in
            "\(event.kind) \(JSON.object(event.fields).text)"
        }
    }

    /// The events of an edit made with ``HomeEditor``.
    func events(_ edit: (inout HomeEditor) throws -> Void) throws -> [String] {
        try changes { homes in
            var editor = HomeEditor(homes: homes)
            try edit(&editor)
            homes = editor.homes
        }
    }

    @Test("the existing events keep their shape")
    func existingEvents() throws {
        #expect(try events { try $0.addRoom(name: "Attic", home: nil) } == [#"room-added {"home":"Demo Home","room":"Attic"}"#])
        #expect(try events { try $0.renameAccessory("lamp", to: "Big Lamp", home: nil) }
            == [#"accessory-renamed {"accessory":"lamp","home":"Demo Home","name":"Big Lamp","oldName":"Floor Lamp"}"#])
        #expect(try events { try $0.assignAccessory("lamp", toRoom: "Hall", home: nil) }
            == [#"accessory-assigned {"accessory":"lamp","home":"Demo Home","name":"Floor Lamp","oldRoom":"Kitchen","room":"Hall"}"#])
        #expect(try events { try $0.renameZone("Downstairs", to: "Ground Floor", home: nil) }
            == [#"zone-renamed {"home":"Demo Home","oldName":"Downstairs","zone":"Ground Floor"}"#])
        #expect(try events { try $0.renameHome("Cabin", to: "Lodge") } == [#"home-renamed {"home":"Lodge","oldName":"Cabin"}"#])
        #expect(try events { try $0.addHome(name: "Lake") } == [#"home-added {"home":"Lake"}"#])
    }

    @Test("service-renamed: the accessory by id with its name, the service by iid")
    func serviceRenamed() throws {
        #expect(try events { try $0.renameService(accessory: "lamp", service: 11, to: "Desk Light", home: nil) } == [
            #"service-renamed {"accessory":"lamp","home":"Demo Home","name":"Floor Lamp","newName":"Desk Light","oldName":"Reading Light","service":11}"#,
        ])
    }

    @Test("service-group-added, -renamed, -updated, -removed")
    func serviceGroups() throws {
        #expect(try events { try $0.addServiceGroup(name: "Reading", home: nil) } == [#"service-group-added {"home":"Demo Home","serviceGroup":"Reading"}"#])
        #expect(try events { try $0.renameServiceGroup("Lights", to: "Lamps", home: nil) }
            == [#"service-group-renamed {"home":"Demo Home","oldName":"Lights","serviceGroup":"Lamps"}"#])
        #expect(try events { try $0.removeServiceGroup("Lights", home: nil) } == [#"service-group-removed {"home":"Demo Home","serviceGroup":"Lights"}"#])
        #expect(try events { try $0.addService(accessory: "lamp", service: 11, toGroup: "Lights", home: nil) } == [
            #"service-group-updated {"home":"Demo Home","serviceGroup":"Lights","services":[{"accessory":"lamp","service":8},{"accessory":"lamp","service":11}]}"#,
        ])
    }

    @Test("action-set-added, -renamed, -updated, -removed (and the triggers that forget it)")
    func actionSets() throws {
        #expect(try events { try $0.addActionSet(name: "Morning", home: nil) } == [#"action-set-added {"actionSet":"Morning","home":"Demo Home"}"#])
        #expect(try events { try $0.renameActionSet("Evening", to: "Dusk", home: nil) }
            == [#"action-set-renamed {"actionSet":"Dusk","home":"Demo Home","oldName":"Evening"}"#])
        #expect(changes { homes in homes[0].actionSets[0].actions[0].value = .int(60) } == [
            #"action-set-updated {"actionSet":"Evening","actions":[{"accessory":"lamp","characteristic":10,"value":60}],"home":"Demo Home"}"#,
        ])
        #expect(try events { try $0.removeActionSet("Evening", home: nil) } == [
            #"action-set-removed {"actionSet":"Evening","home":"Demo Home"}"#,
            #"trigger-updated {"actionSets":[],"enabled":true,"fireDate":"2023-11-14T22:13:20Z","home":"Demo Home","recurrence":{"every":1,"unit":"day"},"trigger":"Sunset"}"#,
        ])
    }

    @Test("trigger-added, -renamed, -enabled, -disabled, -updated, -removed")
    func triggers() throws {
        #expect(try events { try $0.addTrigger(name: "Dawn", fireDate: Self.date, recurrence: nil, actionSets: [], enabled: true, home: nil) }
            == [#"trigger-added {"home":"Demo Home","trigger":"Dawn"}"#])
        #expect(try events { try $0.renameTrigger("Sunset", to: "Dusk", home: nil) } == [#"trigger-renamed {"home":"Demo Home","oldName":"Sunset","trigger":"Dusk"}"#])
        #expect(try events { try $0.setTriggerEnabled("Sunset", false, home: nil) } == [#"trigger-disabled {"home":"Demo Home","trigger":"Sunset"}"#])
        #expect(try events { try $0.setTriggerEnabled("Sunset", true, home: nil) }.isEmpty, "already enabled")
        #expect(changes { homes in
            homes[0].triggers[0].isEnabled = false
            homes[0].triggers[0].recurrence = .init(unit: .week, every: 2)
        } == [
            #"trigger-disabled {"home":"Demo Home","trigger":"Sunset"}"#,
            #"trigger-updated {"actionSets":["Evening"],"enabled":false,"fireDate":"2023-11-14T22:13:20Z","home":"Demo Home","recurrence":{"every":2,"unit":"week"},"trigger":"Sunset"}"#,
        ])
        #expect(try events { try $0.removeTrigger("Sunset", home: nil) } == [#"trigger-removed {"home":"Demo Home","trigger":"Sunset"}"#])
        var disabled = Self.homes()
        disabled[0].triggers[0].isEnabled = false
        let enabled = LayoutChanges.events(from: disabled, to: Self.homes()).map(\.kind)
        #expect(enabled == ["trigger-enabled"])
    }

    @Test("a trigger's bookkeeping (its last fire date) is no event")
    func lastFireDateIsQuiet() {
        #expect(changes { homes in homes[0].triggers[0].lastFireDate = Self.date }.isEmpty)
    }

    @Test("zone-updated when a zone's rooms change, also when a room is removed")
    func zoneUpdated() throws {
        #expect(try events { try $0.removeRoom("Hall", fromZone: "Downstairs", home: nil) }
            == [#"zone-updated {"home":"Demo Home","rooms":["Kitchen"],"zone":"Downstairs"}"#])
        #expect(try events { try $0.removeRoom("Kitchen", home: nil) } == [
            #"room-removed {"home":"Demo Home","room":"Kitchen"}"#,
            #"zone-updated {"home":"Demo Home","rooms":["Hall"],"zone":"Downstairs"}"#,
            #"accessory-assigned {"accessory":"lamp","home":"Demo Home","name":"Floor Lamp","oldRoom":"Kitchen","room":"Default Room"}"#,
        ])
    }

    @Test("home-primary when the primary home changes, also when the primary home is removed")
    func homePrimary() throws {
        #expect(try events { try $0.setPrimaryHome("Cabin") } == [#"home-primary {"home":"Cabin","oldHome":"Demo Home"}"#])
        #expect(try events { try $0.setPrimaryHome("Demo Home") }.isEmpty)
        #expect(try events { try $0.removeHome("Demo Home") } == [
            #"home-removed {"home":"Demo Home"}"#,
            #"home-primary {"home":"Cabin","oldHome":"Demo Home"}"#,
        ])
        let first = LayoutChanges.events(from: [], to: [Home(id: "home", name: "Home", isPrimary: true)]).map(\.kind)
        #expect(first == ["home-added", "home-primary"])
    }

    @Test("removing an accessory updates the groups and action sets that named it")
    func accessoryRemoved() throws {
        #expect(try events { _ = try $0.removeAccessory("lamp", home: nil) } == [
            #"accessory-removed {"accessory":"lamp","home":"Demo Home","name":"Floor Lamp"}"#,
            #"service-group-updated {"home":"Demo Home","serviceGroup":"Lights","services":[]}"#,
            #"action-set-updated {"actionSet":"Evening","actions":[],"home":"Demo Home"}"#,
        ])
    }
}

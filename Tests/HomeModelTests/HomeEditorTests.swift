import Foundation
import Testing
import Wire
@testable import HomeModel

/// A small home to edit: "Demo Home" (primary) with a bridge and the two accessories behind it,
/// a lamp with two lightbulb services (on, brightness) and a hidden firmware service, a read-only
/// temperature sensor, a zone, a group, an action set and a trigger; and "Cabin" with one lamp.
enum EditorFixture {
    typealias ServiceBlueprint = AccessoryBlueprint.ServiceBlueprint

    // Instance ids the blueprints give (Accessory Information is 1, its characteristics 2...7).
    static let information = 1
    static let mainLight = 8, mainOn = 9, brightness = 10
    static let readingLight = 11, readingOn = 12
    static let firmware = 13
    static let temperatureService = 8, temperature = 9

    static func homes() throws -> [Home] {
        let bridge = try AccessoryBlueprint(id: "bridge", name: "Hue Bridge", category: .bridge, roomID: "hall").build()
        let hallLight = try AccessoryBlueprint(id: "bulb-a", name: "Hall Light", category: .lightbulb, roomID: "kitchen", bridgeID: "bridge",
                                               services: [ServiceBlueprint(type: "lightbulb")]).build()
        let plug = try AccessoryBlueprint(id: "plug-b", name: "Coffee Plug", category: .outlet, bridgeID: "bridge",
                                          services: [ServiceBlueprint(type: "outlet")]).build()
        let lamp = try AccessoryBlueprint(id: "lamp", name: "Floor Lamp", category: .lightbulb, roomID: "living-room", services: [
            ServiceBlueprint(type: "lightbulb", name: "Main Light", characteristics: ["brightness": .int(40)]),
            ServiceBlueprint(type: "lightbulb", name: "Reading Light"),
            ServiceBlueprint(type: "firmware-update"),
        ]).build()
        let sensor = try AccessoryBlueprint(id: "sensor", name: "Thermometer", category: .sensor, roomID: "living-room",
                                            services: [ServiceBlueprint(type: "temperature-sensor")]).build()
        let demo = Home(
            id: "demo", name: "Demo Home", isPrimary: true,
            rooms: [Room(id: "living-room", name: "Living Room"), Room(id: "kitchen", name: "Kitchen"), Room(id: "hall", name: "Hall")],
            zones: [Zone(id: "downstairs", name: "Downstairs", roomIDs: ["living-room", "kitchen"])],
            accessories: [bridge, hallLight, plug, lamp, sensor],
            serviceGroups: [ServiceGroup(id: "lights", name: "Lights", services: [
                ServiceReference(accessoryID: "bulb-a", serviceIID: 8), ServiceReference(accessoryID: "lamp", serviceIID: mainLight),
            ])],
            actionSets: [ActionSet(id: "evening", name: "Evening", actions: [
                ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "bulb-a", iid: 9), value: .bool(true)),
                ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "lamp", iid: brightness), value: .int(30)),
            ])],
            triggers: [TimerTrigger(id: "sunset", name: "Sunset", fireDate: Date(timeIntervalSince1970: 1_700_000_000),
                                    recurrence: .init(unit: .day, every: 1), actionSetIDs: ["evening"])]
        )
        let cabinLamp = try AccessoryBlueprint(id: "cabin-lamp", name: "Reading Lamp", category: .lightbulb,
                                               services: [ServiceBlueprint(type: "lightbulb")]).build()
        let cabin = Home(id: "cabin", name: "Cabin", rooms: [Room(id: "loft", name: "Loft")], accessories: [cabinLamp])
        return [demo, cabin]
    }

    static func editor() throws -> HomeEditor {
        HomeEditor(homes: try homes())
    }
}

@Suite("Home editor: management requests with HomeKit's rules")
struct HomeEditorTests {
    /// The error an edit throws, checking that a refused edit changes nothing.
    func refusal(_ editor: HomeEditor, sourceLocation: SourceLocation = #_sourceLocation,
                 _ edit: (inout HomeEditor) throws -> Void) -> EditError? {
        var copy = editor
        do {
            try edit(&copy)
            Issue.record("the edit was accepted", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(copy.homes == editor.homes, "a refused edit changes nothing", sourceLocation: sourceLocation)
            #expect(error is EditError, sourceLocation: sourceLocation)
            return error as? EditError
        }
    }

    func demo(_ editor: HomeEditor) -> Home { editor.homes[0] }

    // MARK: Homes

    @Test("home/add: a new home with a slug id; the first home becomes primary")
    func addHome() throws {
        var editor = try EditorFixture.editor()
        let home = try editor.addHome(name: "Beach House")
        #expect(home.id == "beach-house")
        #expect(!home.isPrimary)
        #expect(editor.homes.map(\.name) == ["Demo Home", "Cabin", "Beach House"])

        var empty = HomeEditor(homes: [])
        let first = try empty.addHome(name: "Home")
        #expect(first.isPrimary)
        #expect(try !empty.addHome(name: "Second").isPrimary)
    }

    @Test("home/add: invalid names are refused with HomeKit's message")
    func addHomeInvalidName() throws {
        let editor = try EditorFixture.editor()
        let error = refusal(editor) { try $0.addHome(name: "Home/1") }
        #expect(error?.code == .invalidName)
        #expect(error?.message == "\"Home/1\" may contain only letters, digits, spaces and apostrophes, not \"/\"")
        #expect(refusal(editor) { try $0.addHome(name: "") }?.code == .invalidName)
        #expect(refusal(editor) { try $0.addHome(name: " Home") }?.code == .invalidName)
        #expect(refusal(editor) { try $0.addHome(name: "🏠") }?.code == .invalidName)
    }

    @Test("home/add: homes are one namespace, compared ignoring case, spaces and apostrophes")
    func addHomeNameInUse() throws {
        let editor = try EditorFixture.editor()
        for name in ["Demo Home", "demo home", "DemoHome", "Demo’Home", "de'mo ho'me"] {
            let error = refusal(editor) { try $0.addHome(name: name) }
            #expect(error?.code == .nameInUse, "\(name)")
            #expect(error?.message.contains("the home \"Demo Home\"") == true, "\(error?.message ?? "")")
        }
        #expect(refusal(editor) { try $0.addHome(name: "Demo Home") }?.message == "\"Demo Home\" is already in use by the home \"Demo Home\"")
        // A name used inside a home is free for a home.
        var copy = editor
        #expect(try copy.addHome(name: "Kitchen").name == "Kitchen")
    }

    @Test("home/add: trailing spaces are dropped")
    func addHomeTrims() throws {
        var editor = try EditorFixture.editor()
        #expect(try editor.addHome(name: "Lake  ").name == "Lake")
    }

    @Test("ids are never reused: a new object whose slug is taken gets a suffix")
    func idsAreUnique() throws {
        var editor = try EditorFixture.editor()
        try editor.renameHome("Cabin", to: "Lodge")
        #expect(try editor.addHome(name: "Cabin").id == "cabin-2")
        try editor.renameRoom("Hall", to: "Entrance", home: nil)
        #expect(try editor.addRoom(name: "Hall", home: nil).id == "hall-2")
        try editor.renameRoom("Hall", to: "Porch", home: nil)
        #expect(try editor.addRoom(name: "Hall", home: nil).id == "hall-3")
        try editor.renameZone("Downstairs", to: "Ground Floor", home: nil)
        #expect(try editor.addZone(name: "Downstairs", home: nil).id == "downstairs-2")
        try editor.renameServiceGroup("Lights", to: "Lamps", home: nil)
        #expect(try editor.addServiceGroup(name: "Lights", home: nil).id == "lights-2")
        try editor.renameActionSet("Evening", to: "Dusk", home: nil)
        #expect(try editor.addActionSet(name: "Evening", home: nil).id == "evening-2")
        try editor.renameTrigger("Sunset", to: "Dusk Timer", home: nil)
        #expect(try editor.addTrigger(name: "Sunset", fireDate: .now, recurrence: nil, actionSets: [], enabled: true, home: nil).id == "sunset-2")
        // The default room's id is never given to a room.
        try editor.addRoom(name: "Default Room Two", home: nil)
        #expect(demo(editor).rooms.allSatisfy { $0.id != Home.defaultRoom.id })
    }

    @Test("home/remove: everything in it goes; the first remaining home becomes primary; the last can go")
    func removeHome() throws {
        var editor = try EditorFixture.editor()
        try editor.removeHome("demo home")
        #expect(editor.homes.map(\.name) == ["Cabin"])
        #expect(editor.homes[0].isPrimary)
        #expect(!editor.homes.flatMap(\.accessories).contains { $0.id == "lamp" })
        try editor.removeHome("cabin")
        #expect(editor.homes.isEmpty)
        #expect(throws: EditError.self) { try editor.homeIndex(nil) }
        #expect(try editor.addHome(name: "Fresh").isPrimary)
    }

    @Test("home/remove: a home that is not primary leaves the primary flag alone")
    func removeOtherHome() throws {
        var editor = try EditorFixture.editor()
        try editor.removeHome("Cabin")
        #expect(editor.homes.map(\.name) == ["Demo Home"])
        #expect(editor.homes[0].isPrimary)
    }

    @Test("home/remove: an unknown home is not found, and the message lists the homes")
    func removeHomeNotFound() throws {
        let error = refusal(try EditorFixture.editor()) { try $0.removeHome("Villa") }
        #expect(error?.code == .notFound)
        #expect(error?.message == "no home \"Villa\"; homes: \"Demo Home\", \"Cabin\"")
    }

    @Test("home/rename: its own name in another case is fine; another home's name, an invalid name or an unknown home are not")
    func renameHome() throws {
        var editor = try EditorFixture.editor()
        try editor.renameHome("Demo Home", to: "DEMO HOME")
        #expect(demo(editor).name == "DEMO HOME")
        try editor.renameHome("demo", to: "Main House")
        #expect(demo(editor).name == "Main House")
        #expect(demo(editor).id == "demo", "the id is stable")
        #expect(refusal(editor) { try $0.renameHome("Main House", to: "cabin") }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameHome("Main House", to: "Main-House") }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameHome("Villa", to: "Villa 2") }?.code == .notFound)
    }

    @Test("home/set-primary: exactly one home is primary")
    func setPrimary() throws {
        var editor = try EditorFixture.editor()
        try editor.setPrimaryHome("cabin")
        #expect(editor.homes.map(\.isPrimary) == [false, true])
        #expect(try editor.homeIndex(nil) == 1)
        try editor.setPrimaryHome("Cabin") // already: nothing changes
        #expect(editor.homes.map(\.isPrimary) == [false, true])
        #expect(refusal(editor) { try $0.setPrimaryHome("Villa") }?.code == .notFound)
    }

    @Test("a home is named by its name (HomeKit comparison) or its id; nil is the primary home")
    func homeIndex() throws {
        let editor = try EditorFixture.editor()
        #expect(try editor.homeIndex(nil) == 0)
        #expect(try editor.homeIndex("DEMOHOME") == 0)
        #expect(try editor.homeIndex("demo") == 0)
        #expect(try editor.homeIndex("cabin") == 1)
        #expect(throws: EditError(.notFound, "there is no home; add one first")) { try HomeEditor(homes: []).homeIndex(nil) }
    }

    // MARK: Rooms

    @Test("room/add: a new room in the named home, or the primary one")
    func addRoom() throws {
        var editor = try EditorFixture.editor()
        let room = try editor.addRoom(name: "Bedroom", home: nil)
        #expect(room == Room(id: "bedroom", name: "Bedroom"))
        #expect(demo(editor).rooms.last == room)
        // Each home has its own namespace.
        let kitchen = try editor.addRoom(name: "Kitchen", home: "Cabin")
        #expect(editor.homes[1].rooms.contains(kitchen))
        #expect(refusal(editor) { try $0.addRoom(name: "Attic", home: "Villa") }?.code == .notFound)
    }

    @Test("room/add: invalid names are refused")
    func addRoomInvalidName() throws {
        let editor = try EditorFixture.editor()
        for name in ["Kitchen!", "#hall", "   ", "-attic", "Room_1", String(repeating: "a", count: 65)] {
            #expect(refusal(editor) { try $0.addRoom(name: name, home: nil) }?.code == .invalidName, "\(name)")
        }
    }

    @Test("room/add: everything in a home shares one namespace, ignoring case, spaces and apostrophes")
    func addRoomClashesAcrossKinds() throws {
        let editor = try EditorFixture.editor()
        let clashes: [(String, String)] = [
            ("kitchen", "the room \"Kitchen\""),
            ("Living’Room", "the room \"Living Room\""),
            ("livingroom", "the room \"Living Room\""),
            ("default room", "the room \"Default Room\""),
            ("DOWN STAIRS", "the zone \"Downstairs\""),
            ("Li'ghts", "the service group \"Lights\""),
            ("evening", "the action set \"Evening\""),
            ("Sun Set", "the trigger \"Sunset\""),
            ("floorlamp", "the accessory \"Floor Lamp\" (lamp)"),
            ("Hall Light", "the accessory \"Hall Light\" (bulb-a)"),
        ]
        for (name, existing) in clashes {
            let error = refusal(editor) { try $0.addRoom(name: name, home: nil) }
            #expect(error?.code == .nameInUse, "\(name)")
            #expect(error?.message.contains(existing) == true, "\(error?.message ?? "") should name \(existing)")
        }
        #expect(refusal(editor) { try $0.addRoom(name: "livingroom", home: nil) }?.message
            == "\"livingroom\" is already in use in \"Demo Home\" by the room \"Living Room\" (names are compared ignoring case, spaces and apostrophes)")
    }

    @Test("room/remove: its accessories go to the default room; zones forget it")
    func removeRoom() throws {
        var editor = try EditorFixture.editor()
        try editor.removeRoom("living room", home: nil)
        let home = demo(editor)
        #expect(home.rooms.map(\.name) == ["Kitchen", "Hall"])
        #expect(home.accessory("lamp")?.roomID == nil)
        #expect(home.accessory("sensor")?.roomID == nil)
        #expect(home.room(of: home.accessory("lamp")!) == Home.defaultRoom)
        #expect(home.zones[0].roomIDs == ["kitchen"])
        #expect(home.accessory("bulb-a")?.roomID == "kitchen", "others stay")
    }

    @Test("room/remove: the default room cannot be removed; an unknown room is not found")
    func removeRoomErrors() throws {
        let editor = try EditorFixture.editor()
        #expect(refusal(editor) { try $0.removeRoom("Default Room", home: nil) }?.code == .notAllowed)
        #expect(refusal(editor) { try $0.removeRoom("default-room", home: nil) }?.code == .notAllowed)
        let error = refusal(editor) { try $0.removeRoom("Attic", home: nil) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "no room \"Attic\" in \"Demo Home\"; its rooms: \"Default Room\", \"Living Room\", \"Kitchen\", \"Hall\"")
        #expect(refusal(editor) { try $0.removeRoom("Kitchen", home: "Cabin") }?.code == .notFound)
    }

    @Test("room/rename: a new name, its own in another case, but not another object's; the default room keeps its name")
    func renameRoom() throws {
        var editor = try EditorFixture.editor()
        try editor.renameRoom("Kitchen", to: "Cuisine", home: nil)
        #expect(demo(editor).rooms[1] == Room(id: "kitchen", name: "Cuisine"))
        try editor.renameRoom("cuisine", to: "CUISINE", home: nil)
        #expect(demo(editor).rooms[1].name == "CUISINE")
        try editor.renameRoom("hall", to: "Hall’s End", home: nil) // by id; apostrophes are fine
        #expect(demo(editor).rooms[2].name == "Hall’s End")
        #expect(refusal(editor) { try $0.renameRoom("CUISINE", to: "Living Room", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameRoom("CUISINE", to: "Thermometer", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameRoom("CUISINE", to: "Cuisine?", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameRoom("Default Room", to: "Everywhere", home: nil) }?.code == .notAllowed)
        #expect(refusal(editor) { try $0.renameRoom("Attic", to: "Loft", home: nil) }?.code == .notFound)
    }

    // MARK: Zones

    @Test("zone/add, zone/rename, zone/remove")
    func zones() throws {
        var editor = try EditorFixture.editor()
        let zone = try editor.addZone(name: "Upstairs", home: nil)
        #expect(zone == Zone(id: "upstairs", name: "Upstairs"))
        #expect(try editor.zone("UPSTAIRS", home: nil) == zone)
        try editor.renameZone("upstairs", to: "Upper Floor", home: nil)
        #expect(try editor.zone("upperfloor", home: nil).id == "upstairs")
        try editor.renameZone("Upper Floor", to: "upper floor", home: nil)
        try editor.removeZone("upper floor", home: nil)
        #expect(demo(editor).zones.map(\.name) == ["Downstairs"])
    }

    @Test("zone/add and zone/rename: names are checked; zone/remove and zone/rename: unknown zones are not found")
    func zoneErrors() throws {
        let editor = try EditorFixture.editor()
        #expect(refusal(editor) { try $0.addZone(name: "Kitchen", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.addZone(name: "Up/Down", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameZone("Downstairs", to: "Evening", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameZone("Downstairs", to: "", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameZone("Upstairs", to: "Attic", home: nil) }?.code == .notFound)
        let error = refusal(editor) { try $0.removeZone("Upstairs", home: nil) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "no zone \"Upstairs\" in \"Demo Home\"; its zones: \"Downstairs\"")
        #expect(refusal(editor) { try $0.removeZone("Downstairs", home: "Cabin") }?.message == "no zone \"Downstairs\" in \"Cabin\"; it has no zones")
        #expect(throws: EditError.self) { try editor.zone("Upstairs", home: nil) }
    }

    @Test("zone/add-room and zone/remove-room")
    func zoneRooms() throws {
        var editor = try EditorFixture.editor()
        try editor.addRoom("Hall", toZone: "Downstairs", home: nil)
        #expect(demo(editor).zones[0].roomIDs == ["living-room", "kitchen", "hall"])
        try editor.removeRoom("living room", fromZone: "downstairs", home: nil)
        #expect(demo(editor).zones[0].roomIDs == ["kitchen", "hall"])
    }

    @Test("zone/add-room: already in it, the default room, unknown rooms and zones are refused")
    func zoneAddRoomErrors() throws {
        let editor = try EditorFixture.editor()
        let error = refusal(editor) { try $0.addRoom("Kitchen", toZone: "Downstairs", home: nil) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message == "the room \"Kitchen\" is already in the zone \"Downstairs\"")
        #expect(refusal(editor) { try $0.addRoom("Default Room", toZone: "Downstairs", home: nil) }?.code == .notAllowed)
        #expect(refusal(editor) { try $0.addRoom("Attic", toZone: "Downstairs", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.addRoom("Hall", toZone: "Upstairs", home: nil) }?.code == .notFound)
    }

    @Test("zone/remove-room: a room not in the zone is not found")
    func zoneRemoveRoomErrors() throws {
        let editor = try EditorFixture.editor()
        let error = refusal(editor) { try $0.removeRoom("Hall", fromZone: "Downstairs", home: nil) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "the room \"Hall\" is not in the zone \"Downstairs\"")
        #expect(refusal(editor) { try $0.removeRoom("Default Room", fromZone: "Downstairs", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.removeRoom("Attic", fromZone: "Downstairs", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.removeRoom("Hall", fromZone: "Upstairs", home: nil) }?.code == .notFound)
    }

    // MARK: Accessories

    @Test("accessory/assign-room: by id or name; the default room means no room")
    func assignAccessory() throws {
        var editor = try EditorFixture.editor()
        try editor.assignAccessory("lamp", toRoom: "Kitchen", home: nil)
        #expect(demo(editor).accessory("lamp")?.roomID == "kitchen")
        try editor.assignAccessory("floor lamp", toRoom: "hall", home: nil)
        #expect(demo(editor).accessory("lamp")?.roomID == "hall")
        try editor.assignAccessory("Thermometer", toRoom: "Default Room", home: nil)
        #expect(demo(editor).accessory("sensor")?.roomID == nil)
        try editor.assignAccessory("cabin-lamp", toRoom: "Loft", home: "Cabin")
        #expect(editor.homes[1].accessory("cabin-lamp")?.roomID == "loft")
    }

    @Test("accessory/assign-room: a bridge moves alone; the accessories behind it stay where they are")
    func assignBridge() throws {
        var editor = try EditorFixture.editor()
        try editor.assignAccessory("Hue Bridge", toRoom: "Living Room", home: nil)
        let home = demo(editor)
        #expect(home.accessory("bridge")?.roomID == "living-room")
        #expect(home.accessory("bulb-a")?.roomID == "kitchen")
        #expect(home.accessory("plug-b")?.roomID == nil)
    }

    @Test("accessory/assign-room: unknown rooms and accessories are not found; another home's accessory is pointed at")
    func assignErrors() throws {
        let editor = try EditorFixture.editor()
        #expect(refusal(editor) { try $0.assignAccessory("lamp", toRoom: "Attic", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.assignAccessory("lamp", toRoom: "Loft", home: nil) }?.code == .notFound)
        let error = refusal(editor) { try $0.assignAccessory("Reading Lamp", toRoom: "Kitchen", home: nil) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "no accessory \"Reading Lamp\" in \"Demo Home\"; it is in \"Cabin\" (name that home in \"home\")")
        #expect(refusal(editor) { try $0.assignAccessory("Toaster", toRoom: "Kitchen", home: nil) }?.message == "no accessory \"Toaster\" in \"Demo Home\"")
    }

    @Test("accessories are named by id first, then by name; a shared name is ambiguous")
    func accessoryNames() throws {
        var homes = try EditorFixture.homes()
        homes[0].accessories.append(Accessory(id: "spot-2", name: "Spot"))
        homes[0].accessories.append(Accessory(id: "spot-1", name: "spot"))
        homes[0].accessories.append(Accessory(id: "odd", name: "lamp")) // named like another's id
        let editor = HomeEditor(homes: homes)
        let error = #expect(throws: EditError.self) { try editor.accessoryLocation("SPOT", home: nil) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message == "\"SPOT\" names 2 accessories in \"Demo Home\" (spot-1, spot-2); name one by its id")
        #expect(try editor.accessoryLocation("spot-2", home: nil).accessory == 5)
        #expect(try editor.accessoryLocation("lamp", home: nil).accessory == 3, "the id wins over a name")
        #expect(try editor.accessoryLocation("odd", home: nil).accessory == 7)
        let cabinLamp = try editor.accessoryLocation("reading lamp", home: "cabin")
        #expect(cabinLamp.home == 1 && cabinLamp.accessory == 0)
    }

    @Test("accessory/rename: a valid name unique in the home")
    func renameAccessory() throws {
        var editor = try EditorFixture.editor()
        try editor.renameAccessory("lamp", to: "Corner Lamp", home: nil)
        #expect(demo(editor).accessory("lamp")?.name == "Corner Lamp")
        try editor.renameAccessory("Corner Lamp", to: "corner lamp", home: nil)
        #expect(demo(editor).accessory("lamp")?.name == "corner lamp")
        // Names used in another home are free.
        try editor.renameAccessory("sensor", to: "Reading Lamp", home: nil)
        #expect(refusal(editor) { try $0.renameAccessory("lamp", to: "Hall Light", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameAccessory("lamp", to: "Kitchen", home: nil) }?.message.contains("the room \"Kitchen\"") == true)
        #expect(refusal(editor) { try $0.renameAccessory("lamp", to: "Lamp #2", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameAccessory("toaster", to: "Toaster", home: nil) }?.code == .notFound)
    }

    @Test("accessory/rename: a service named after the accessory takes the new name; one with a name of its own keeps it")
    func renameAccessoryRenamesItsNamesakeServices() throws {
        var editor = try EditorFixture.editor()
        let before = try #require(demo(editor).accessory("lamp"))
        try editor.renameService(accessory: "lamp", service: try #require(before.visibleServices.first).iid, to: before.name, home: nil)
        try editor.renameAccessory("lamp", to: "Standing Lamp", home: nil)
        let after = try #require(demo(editor).accessory("lamp"))
        #expect(after.visibleServices.first?.name == "Standing Lamp")
        try editor.renameService(accessory: "lamp", service: try #require(after.visibleServices.first).iid, to: "Bulb", home: nil)
        try editor.renameAccessory("lamp", to: "Corner Lamp", home: nil)
        #expect(demo(editor).accessory("lamp")?.visibleServices.first?.name == "Bulb")
    }

    @Test("accessory/remove: the accessory goes; groups and action sets forget it")
    func removeAccessory() throws {
        var editor = try EditorFixture.editor()
        #expect(try editor.removeAccessory("Floor Lamp", home: nil) == ["lamp"])
        let home = demo(editor)
        #expect(home.accessory("lamp") == nil)
        #expect(home.serviceGroups[0].services == [ServiceReference(accessoryID: "bulb-a", serviceIID: 8)])
        #expect(home.actionSets[0].actions.map(\.characteristic.accessoryID) == ["bulb-a"])
    }

    @Test("accessory/remove: a bridge takes the accessories behind it, and groups and action sets forget them")
    func removeBridge() throws {
        var editor = try EditorFixture.editor()
        #expect(try editor.removeAccessory("bridge", home: nil) == ["bridge", "bulb-a", "plug-b"])
        let home = demo(editor)
        #expect(home.accessories.map(\.id) == ["lamp", "sensor"])
        #expect(home.serviceGroups[0].services == [ServiceReference(accessoryID: "lamp", serviceIID: EditorFixture.mainLight)])
        #expect(home.actionSets[0].actions.map(\.characteristic) == [CharacteristicReference(accessoryID: "lamp", iid: EditorFixture.brightness)])
        #expect(editor.homes[1] == (try EditorFixture.homes())[1], "other homes are untouched")
    }

    @Test("accessory/remove: an accessory behind a bridge cannot leave alone; unknown ones are not found")
    func removeAccessoryErrors() throws {
        let editor = try EditorFixture.editor()
        let error = refusal(editor) { try $0.removeAccessory("Hall Light", home: nil) }
        #expect(error?.code == .notAllowed)
        #expect(error?.message == "\"Hall Light\" (bulb-a) is behind the bridge \"Hue Bridge\" (bridge); it leaves the home only with its bridge")
        #expect(refusal(editor) { try $0.removeAccessory("toaster", home: nil) }?.code == .notFound)
    }

    // MARK: Services

    @Test("service/rename: a valid name unique among the accessory's services")
    func renameService() throws {
        var editor = try EditorFixture.editor()
        try editor.renameService(accessory: "lamp", service: EditorFixture.mainLight, to: "Ceiling", home: nil)
        #expect(demo(editor).accessory("lamp")?.service(EditorFixture.mainLight)?.name == "Ceiling")
        try editor.renameService(accessory: "lamp", service: EditorFixture.mainLight, to: "CEILING", home: nil)
        // Another accessory's service, or an object of the home, may have the name.
        try editor.renameService(accessory: "bulb-a", service: 8, to: "Ceiling", home: nil)
        try editor.renameService(accessory: "bulb-a", service: 8, to: "Kitchen", home: nil)
        #expect(demo(editor).accessory("bulb-a")?.service(8)?.name == "Kitchen")
        let error = refusal(editor) { try $0.renameService(accessory: "lamp", service: EditorFixture.mainLight, to: "reading light", home: nil) }
        #expect(error?.code == .nameInUse)
        #expect(error?.message.contains("service 11 (lightbulb) of \"Floor Lamp\"") == true, "\(error?.message ?? "")")
    }

    @Test("service/rename: information and hidden services cannot be renamed; invalid names and unknown services are refused")
    func renameServiceErrors() throws {
        let editor = try EditorFixture.editor()
        let information = refusal(editor) { try $0.renameService(accessory: "lamp", service: EditorFixture.information, to: "Info", home: nil) }
        #expect(information?.code == .notAllowed)
        #expect(information?.message == "service 1 of \"Floor Lamp\" is its accessory information service; it cannot be renamed")
        let hidden = refusal(editor) { try $0.renameService(accessory: "lamp", service: EditorFixture.firmware, to: "Firmware", home: nil) }
        #expect(hidden?.code == .notAllowed)
        #expect(hidden?.message == "service 13 (firmware-update) of \"Floor Lamp\" is hidden; it cannot be renamed")
        #expect(refusal(editor) { try $0.renameService(accessory: "lamp", service: 99, to: "Nope", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.renameService(accessory: "lamp", service: EditorFixture.mainLight, to: "Light!", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameService(accessory: "toaster", service: 8, to: "Light", home: nil) }?.code == .notFound)
    }

    // MARK: Service groups

    @Test("service-group/add, rename, remove")
    func serviceGroups() throws {
        var editor = try EditorFixture.editor()
        let group = try editor.addServiceGroup(name: "Reading Lights", home: nil)
        #expect(group == ServiceGroup(id: "reading-lights", name: "Reading Lights"))
        try editor.renameServiceGroup("readinglights", to: "Night Lights", home: nil)
        #expect(try editor.serviceGroup("night lights", home: nil).id == "reading-lights")
        try editor.removeServiceGroup("Night Lights", home: nil)
        #expect(demo(editor).serviceGroups.map(\.name) == ["Lights"])
        #expect(refusal(editor) { try $0.addServiceGroup(name: "Downstairs", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.addServiceGroup(name: "Lights+", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameServiceGroup("Lights", to: "Sunset", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameServiceGroup("Lights", to: "$lights", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameServiceGroup("Lamps", to: "Bulbs", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.removeServiceGroup("Lamps", home: nil) }?.code == .notFound)
    }

    @Test("service-group/add-service and remove-service")
    func groupServices() throws {
        var editor = try EditorFixture.editor()
        try editor.addService(accessory: "Floor Lamp", service: EditorFixture.readingLight, toGroup: "lights", home: nil)
        try editor.addService(accessory: "plug-b", service: 8, toGroup: "Lights", home: nil)
        #expect(try editor.serviceGroup("Lights", home: nil).services.map(\.serviceIID) == [8, EditorFixture.mainLight, EditorFixture.readingLight, 8])
        try editor.removeService(accessory: "bulb-a", service: 8, fromGroup: "Lights", home: nil)
        #expect(try editor.serviceGroup("Lights", home: nil).services.map(\.accessoryID) == ["lamp", "lamp", "plug-b"])
    }

    @Test("service-group/add-service: hidden and information services, duplicates and unknowns are refused")
    func groupServiceErrors() throws {
        let editor = try EditorFixture.editor()
        let duplicate = refusal(editor) { try $0.addService(accessory: "lamp", service: EditorFixture.mainLight, toGroup: "Lights", home: nil) }
        #expect(duplicate?.code == .invalidRequest)
        #expect(duplicate?.message == "service 8 of \"Floor Lamp\" is already in the service group \"Lights\"")
        #expect(refusal(editor) { try $0.addService(accessory: "lamp", service: EditorFixture.firmware, toGroup: "Lights", home: nil) }?.code == .notAllowed)
        #expect(refusal(editor) { try $0.addService(accessory: "bridge", service: EditorFixture.information, toGroup: "Lights", home: nil) }?.code == .notAllowed)
        #expect(refusal(editor) { try $0.addService(accessory: "lamp", service: 42, toGroup: "Lights", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.addService(accessory: "toaster", service: 8, toGroup: "Lights", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.addService(accessory: "lamp", service: EditorFixture.readingLight, toGroup: "Lamps", home: nil) }?.code == .notFound)
        let missing = refusal(editor) { try $0.removeService(accessory: "lamp", service: EditorFixture.readingLight, fromGroup: "Lights", home: nil) }
        #expect(missing?.code == .notFound)
        #expect(missing?.message == "service 11 of \"Floor Lamp\" is not in the service group \"Lights\"")
        #expect(refusal(editor) { try $0.removeService(accessory: "lamp", service: EditorFixture.mainLight, fromGroup: "Lamps", home: nil) }?.code == .notFound)
    }

    // MARK: Action sets

    @Test("action-set/add, rename, remove; triggers forget a removed action set")
    func actionSets() throws {
        var editor = try EditorFixture.editor()
        let added = try editor.addActionSet(name: "Good Night", home: nil)
        #expect(added == ActionSet(id: "good-night", name: "Good Night"))
        try editor.renameActionSet("goodnight", to: "Bedtime", home: nil)
        #expect(try editor.actionSet("BEDTIME", home: nil).id == "good-night")
        try editor.removeActionSet("Evening", home: nil)
        #expect(demo(editor).actionSets.map(\.name) == ["Bedtime"])
        #expect(demo(editor).triggers[0].actionSetIDs.isEmpty)
        #expect(refusal(editor) { try $0.addActionSet(name: "Hall", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.addActionSet(name: "Good.Night", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameActionSet("Bedtime", to: "sunset", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameActionSet("Bedtime", to: "", home: nil) }?.code == .invalidName)
        #expect(refusal(editor) { try $0.renameActionSet("Evening", to: "Dusk", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.removeActionSet("Evening", home: nil) }?.code == .notFound)
        #expect(throws: EditError.self) { try editor.actionSet("Evening", home: nil) }
    }

    @Test("action-set/add-action: values are parsed and checked against the characteristic; a second action replaces the first")
    func addAction() throws {
        var editor = try EditorFixture.editor()
        try editor.addAction(toActionSet: "Evening", accessory: "Floor Lamp", characteristic: EditorFixture.mainOn, value: true, home: nil)
        try editor.addAction(toActionSet: "Evening", accessory: "lamp", characteristic: EditorFixture.readingOn, value: "off", home: nil)
        try editor.addAction(toActionSet: "Evening", accessory: "lamp", characteristic: EditorFixture.brightness, value: 80, home: nil)
        let actions = try editor.actionSet("Evening", home: nil).actions
        #expect(actions.map(\.characteristic.iid) == [9, EditorFixture.brightness, EditorFixture.mainOn, EditorFixture.readingOn])
        #expect(actions[1].value == .int(80), "replaced in place")
        #expect(actions[2].value == .bool(true))
        #expect(actions[3].value == .bool(false))
        // A value as the JSON parser reads it from a request body.
        let decoded = try JSON.parse(#"{"value": 55}"#)
        try editor.addAction(toActionSet: "Evening", accessory: "lamp", characteristic: EditorFixture.brightness, value: decoded["value"] ?? .null, home: nil)
        #expect(try editor.actionSet("Evening", home: nil).actions[1].value == .int(55))
    }

    @Test("action-set/add-action: bad values are invalid requests, read-only characteristics not allowed")
    func addActionErrors() throws {
        let editor = try EditorFixture.editor()
        func attempt(_ accessory: String, _ iid: Int, _ value: JSON, set: String = "Evening") -> EditError? {
            refusal(editor) { try $0.addAction(toActionSet: set, accessory: accessory, characteristic: iid, value: value, home: nil) }
        }
        let outOfRange = attempt("lamp", EditorFixture.brightness, 150)
        #expect(outOfRange == EditError(.invalidRequest, "brightness must be within 0...100, got 150"))
        #expect(attempt("lamp", EditorFixture.brightness, -1)?.code == .invalidRequest)
        #expect(attempt("lamp", EditorFixture.brightness, 40.5) == EditError(.invalidRequest, "brightness must be a whole number, got 40.5"))
        #expect(attempt("lamp", EditorFixture.brightness, "bright")?.code == .invalidRequest)
        #expect(attempt("lamp", EditorFixture.brightness, nil)?.code == .invalidRequest)
        #expect(attempt("lamp", EditorFixture.brightness, [1, 2])?.code == .invalidRequest)
        #expect(attempt("lamp", EditorFixture.mainOn, "maybe")?.code == .invalidRequest)
        #expect(attempt("sensor", EditorFixture.temperature, 21.5) == EditError(.notAllowed, "current-temperature is read-only"))
        #expect(attempt("sensor", EditorFixture.temperature, "nonsense") == EditError(.notAllowed, "current-temperature is read-only"))
        #expect(attempt("lamp", 99, true)?.code == .notFound)
        #expect(attempt("lamp", 14, 1)?.code == .notAllowed, "a hidden service's characteristic")
        #expect(attempt("toaster", 9, true)?.code == .notFound)
        #expect(attempt("lamp", EditorFixture.mainOn, true, set: "Morning")?.code == .notFound)
    }

    @Test("action-set/remove-action")
    func removeAction() throws {
        var editor = try EditorFixture.editor()
        try editor.removeAction(fromActionSet: "Evening", accessory: "Hall Light", characteristic: 9, home: nil)
        #expect(try editor.actionSet("Evening", home: nil).actions.map(\.characteristic.accessoryID) == ["lamp"])
        let error = refusal(editor) { try $0.removeAction(fromActionSet: "Evening", accessory: "Hall Light", characteristic: 9, home: nil) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "the action set \"Evening\" has no action on characteristic 9 of \"Hall Light\"")
        #expect(refusal(editor) { try $0.removeAction(fromActionSet: "Morning", accessory: "lamp", characteristic: 10, home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.removeAction(fromActionSet: "Evening", accessory: "toaster", characteristic: 10, home: nil) }?.code == .notFound)
    }

    // MARK: Triggers

    @Test("trigger/add: action sets by name, once each; every at least 1")
    func addTrigger() throws {
        var editor = try EditorFixture.editor()
        try editor.addActionSet(name: "Lights Out", home: nil)
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let trigger = try editor.addTrigger(name: "Bedtime", fireDate: date, recurrence: .init(unit: .week, every: 2),
                                            actionSets: ["lights out", "Evening", "LIGHTSOUT"], enabled: false, home: nil)
        #expect(trigger == TimerTrigger(id: "bedtime", name: "Bedtime", fireDate: date, recurrence: .init(unit: .week, every: 2),
                                        actionSetIDs: ["lights-out", "evening"], isEnabled: false))
        #expect(demo(editor).triggers.last == trigger)
        let once = try editor.addTrigger(name: "Once", fireDate: date, recurrence: nil, actionSets: [], enabled: true, home: "Cabin")
        #expect(editor.homes[1].triggers == [once])
    }

    @Test("trigger/add: a bad recurrence, unknown action sets and bad names are refused")
    func addTriggerErrors() throws {
        let editor = try EditorFixture.editor()
        func attempt(_ name: String = "Wake Up", every: Int = 1, _ sets: [String] = ["Evening"]) -> EditError? {
            refusal(editor) { try $0.addTrigger(name: name, fireDate: .now, recurrence: .init(unit: .hour, every: every), actionSets: sets, enabled: true, home: nil) }
        }
        #expect(attempt(every: 0) == EditError(.invalidRequest, "a recurrence must repeat every 1 hour or more, got every 0"))
        #expect(attempt(every: -3)?.code == .invalidRequest)
        #expect(attempt("Wake Up", ["Evening", "Morning"])?.code == .notFound)
        #expect(attempt("Sunset")?.code == .nameInUse)
        #expect(attempt("Floor Lamp")?.code == .nameInUse)
        #expect(attempt("Wake-Up")?.code == .invalidName)
    }

    @Test("trigger/enable, trigger/disable, trigger/remove, and renaming a trigger")
    func triggers() throws {
        var editor = try EditorFixture.editor()
        try editor.setTriggerEnabled("sunset", false, home: nil)
        #expect(try editor.trigger("Sunset", home: nil).isEnabled == false)
        try editor.setTriggerEnabled("Sunset", false, home: nil)
        try editor.setTriggerEnabled("Sun Set", true, home: nil)
        #expect(try editor.trigger("Sunset", home: nil).isEnabled)
        try editor.renameTrigger("Sunset", to: "Dusk", home: nil)
        #expect(try editor.trigger("dusk", home: nil).id == "sunset")
        #expect(refusal(editor) { try $0.renameTrigger("Dusk", to: "Evening", home: nil) }?.code == .nameInUse)
        #expect(refusal(editor) { try $0.renameTrigger("Dusk", to: "Dusk?", home: nil) }?.code == .invalidName)
        try editor.removeTrigger("Dusk", home: nil)
        #expect(demo(editor).triggers.isEmpty)
        #expect(refusal(editor) { try $0.removeTrigger("Dusk", home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.setTriggerEnabled("Dusk", true, home: nil) }?.code == .notFound)
        #expect(refusal(editor) { try $0.renameTrigger("Dusk", to: "Dawn", home: nil) }?.code == .notFound)
    }

    @Test("edits in one home leave the namespace of another alone")
    func homesAreSeparate() throws {
        var editor = try EditorFixture.editor()
        try editor.addZone(name: "Downstairs", home: "Cabin")
        try editor.addServiceGroup(name: "Lights", home: "Cabin")
        try editor.addActionSet(name: "Evening", home: "Cabin")
        try editor.renameAccessory("Reading Lamp", to: "Floor Lamp", home: "Cabin")
        #expect(editor.homes[1].zones.map(\.id) == ["downstairs"])
        #expect(editor.homes[1].accessories[0].name == "Floor Lamp")
        #expect(editor.homes[0] == (try EditorFixture.homes())[0])
    }
}

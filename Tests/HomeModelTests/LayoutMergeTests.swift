import Testing
@testable import HomeModel

@Suite("Layout merge: configuration changes win, otherwise the store wins")
struct LayoutMergeTests {
    static func lamp(room: RoomID?, name: String = "Lamp") -> Accessory {
        Accessory(id: "lamp", name: name, roomID: room)
    }

    static func home(name: String = "Home", rooms: [Room] = [Room(id: "kitchen", name: "Kitchen")], accessories: [Accessory] = [lamp(room: "kitchen")]) -> Home {
        Home(id: "home", name: name, isPrimary: true, rooms: rooms, accessories: accessories)
    }

    @Test("first start: the configuration")
    func firstStart() {
        let config = [Self.home()]
        #expect(LayoutMerge.merge(stored: nil, lastApplied: nil, configuration: config) == config)
    }

    @Test("a rename made over MQTT survives a restart with the same configuration")
    func storeWinsWhenFileUnchanged() {
        let config = [Self.home()]
        var stored = config
        stored[0].rooms[0].name = "Cuisine"
        stored[0].accessories[0].name = "Big Lamp"
        let merged = LayoutMerge.merge(stored: stored, lastApplied: config, configuration: config)
        #expect(merged[0].rooms[0].name == "Cuisine")
        #expect(merged[0].accessories[0].name == "Big Lamp")
    }

    @Test("a change in the file wins over the store")
    func fileWinsWhenChanged() {
        let last = [Self.home()]
        var stored = last
        stored[0].rooms[0].name = "Cuisine"
        var config = last
        config[0].rooms[0].name = "Kitchen Area"
        config[0].accessories[0].roomID = nil
        let merged = LayoutMerge.merge(stored: stored, lastApplied: last, configuration: config)
        #expect(merged[0].rooms[0].name == "Kitchen Area")
        #expect(merged[0].accessories[0].roomID == nil)
    }

    @Test("objects made over MQTT are kept; objects removed from the file go")
    func additionsAndRemovals() {
        let last = [Self.home(rooms: [Room(id: "kitchen", name: "Kitchen"), Room(id: "attic", name: "Attic")],
                              accessories: [Self.lamp(room: "attic")])]
        var stored = last
        stored[0].rooms.append(Room(id: "mqtt-room", name: "Study"))
        stored[0].serviceGroups = [ServiceGroup(id: "g", name: "Reading")]
        let config = [Self.home(rooms: [Room(id: "kitchen", name: "Kitchen")], accessories: [Self.lamp(room: "attic")])]
        let merged = LayoutMerge.merge(stored: stored, lastApplied: last, configuration: config)
        #expect(merged[0].rooms.map(\.id) == ["kitchen", "mqtt-room"])
        #expect(merged[0].accessories[0].roomID == nil, "its room is gone: the default room")
        #expect(merged[0].serviceGroups.map(\.name) == ["Reading"])
    }

    @Test("an accessory's structure is always the device's")
    func structureFromDevice() {
        let last = [Self.home()]
        var stored = last
        stored[0].accessories[0].services = []
        var config = last
        config[0].accessories[0].services = [Service(iid: 8, type: "lightbulb", uuid: UUIDs.expand("43"))]
        let merged = LayoutMerge.merge(stored: stored, lastApplied: last, configuration: config)
        #expect(merged[0].accessories[0].services.map(\.iid) == [8])
    }

    @Test("exactly one primary home; a primary flag the file just set wins")
    func onePrimary() {
        let a = Home(id: "a", name: "A", isPrimary: true)
        let b = Home(id: "b", name: "B", isPrimary: false)
        let last = [a, b]
        var config = last
        config[0].isPrimary = false
        config[1].isPrimary = true
        let merged = LayoutMerge.merge(stored: last, lastApplied: last, configuration: config)
        #expect(merged.map(\.isPrimary) == [false, true])
        let none = LayoutMerge.merge(stored: [Home(id: "x", name: "X")], lastApplied: nil, configuration: [])
        #expect(none.map(\.isPrimary) == [true])
    }

    @Test("a home made over MQTT is kept; a home removed from the file goes")
    func homes() {
        let last = [Home(id: "a", name: "A", isPrimary: true), Home(id: "b", name: "B")]
        let stored = last + [Home(id: "c", name: "C")]
        let merged = LayoutMerge.merge(stored: stored, lastApplied: last, configuration: [last[0]])
        #expect(merged.map(\.id) == ["a", "c"])
    }
}

import Testing
@testable import HomeModel

/// Homes to lay out, built from blueprints.
enum Fixtures {
    typealias ServiceBlueprint = AccessoryBlueprint.ServiceBlueprint

    static let homeID: HomeID = "home-demo"
    static let livingRoom: RoomID = "room-living"
    static let kitchen: RoomID = "room-kitchen"
    static let bedroom: RoomID = "room-bedroom"

    static func accessory(_ id: AccessoryID, _ name: String, room: RoomID? = nil, bridge: AccessoryID? = nil,
                          category: Category = .other, services: [ServiceBlueprint]) -> Accessory {
        do {
            return try AccessoryBlueprint(id: id, name: name, category: category, roomID: room, bridgeID: bridge, services: services).build()
        } catch {
            Issue.record("blueprint \(id) does not build: \(error)")
            return Accessory(id: id, name: name)
        }
    }

    static let floorLamp = accessory("acc-lamp-a", "Floor Lamp", room: livingRoom, category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": .int(40)]),
    ])
    static let floorLampTwin = accessory("acc-lamp-b", "Floor Lamp", room: livingRoom, category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb"),
    ])
    static let floorLampCamel = accessory("acc-lamp-c", "FloorLamp", room: livingRoom, category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb"),
    ])
    static let thermostat = accessory("acc-thermostat", "Hallway Thermostat", category: .thermostat, services: [
        ServiceBlueprint(type: "thermostat"),
    ])
    static let lost = accessory("acc-lost", "Lost Sensor", room: "room-that-was-deleted", category: .sensor, services: [
        ServiceBlueprint(type: "temperature-sensor"),
    ])
    static let bridge = accessory("acc-bridge", "Hue Bridge", room: livingRoom, category: .bridge, services: [
        ServiceBlueprint(type: "protocol-information"),
    ])
    static let kitchenBulb = accessory("acc-bulb-1", "Hue Bulb", room: kitchen, bridge: "acc-bridge", category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": nil, "hue": nil]),
    ])
    static let bedroomBulb = accessory("acc-bulb-2", "Hue Bulb", room: bedroom, bridge: "acc-bridge", category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb"),
    ])
    static let namedStrip = accessory("acc-strip-named", "Power Strip", room: kitchen, category: .outlet, services: [
        ServiceBlueprint(type: "outlet", name: "Left"), ServiceBlueprint(type: "outlet", name: "Middle"), ServiceBlueprint(type: "outlet", name: "Right"),
    ])
    /// Three outlets of one name, listed against iid order.
    static let sameNameStrip: Accessory = {
        var strip = accessory("acc-strip-same", "Desk Strip", room: kitchen, category: .outlet, services: [
            ServiceBlueprint(type: "outlet", name: "Outlet"), ServiceBlueprint(type: "outlet", name: "Outlet"), ServiceBlueprint(type: "outlet", name: "Outlet"),
        ])
        strip.services = [strip.services[0]] + strip.services.dropFirst().reversed()
        return strip
    }()
    static let unnamedStrip = accessory("acc-strip-unnamed", "Garage Strip", room: kitchen, category: .outlet, services: [
        ServiceBlueprint(type: "outlet"), ServiceBlueprint(type: "outlet"),
    ])
    static let partlyNamedStrip = accessory("acc-strip-partly", "Shed Strip", room: kitchen, category: .outlet, services: [
        ServiceBlueprint(type: "outlet", name: "Left"), ServiceBlueprint(type: "outlet"),
    ])
    static let caseNamedStrip = accessory("acc-strip-case", "Attic Strip", room: kitchen, category: .outlet, services: [
        ServiceBlueprint(type: "outlet", name: "Outlet"), ServiceBlueprint(type: "outlet", name: "OUTLET"),
    ])
    static let hiddenLamp = accessory("acc-hidden", "Night Light", room: bedroom, category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb", isHidden: true), ServiceBlueprint(type: "switch"),
    ])
    static let firmwareLamp = accessory("acc-firmware", "Desk Lamp", room: bedroom, category: .lightbulb, services: [
        ServiceBlueprint(type: "lightbulb"), ServiceBlueprint(type: "firmware-update"),
    ])
    static let lock = accessory("acc-lock", "Front Door", room: "room-hall", category: .doorLock, services: [
        ServiceBlueprint(type: "lock-mechanism"),
    ])

    /// Custom and vendor types: a custom service with Eve's characteristics (the catalog names
    /// them), an unknown Eve one with a description, an unknown one without; Eve's history
    /// service, which the catalog hides.
    static let custom: Accessory = {
        var meter = accessory("acc-custom", "Energy Meter", room: kitchen, category: .outlet, services: [ServiceBlueprint(type: "outlet")])
        let serviceUUID = "F1E2D3C4-0000-4000-8000-00AABBCCDDEE"
        let history = "E863F007-079E-48FF-8F27-9C2605A29F52"
        meter.services.append(Service(iid: 40, type: history, uuid: history, characteristics: [
            Characteristic(iid: 41, type: "E863F11E-079E-48FF-8F27-9C2605A29F52", uuid: "E863F11E-079E-48FF-8F27-9C2605A29F52",
                           format: .data, perms: [.read, .write]),
        ]))
        meter.services.append(Service(iid: 20, type: serviceUUID, uuid: serviceUUID, characteristics: [
            Characteristic(iid: 25, type: "E863F1FF-079E-48FF-8F27-9C2605A29F52", uuid: "E863F1FF-079E-48FF-8F27-9C2605A29F52",
                           format: .data, perms: [.read]),
            Characteristic(iid: 21, type: "E863F10D-079E-48FF-8F27-9C2605A29F52", uuid: "E863F10D-079E-48FF-8F27-9C2605A29F52",
                           format: .float, perms: [.read, .events], description: "Total Consumption"),
            Characteristic(iid: 22, type: "E863F10A-079E-48FF-8F27-9C2605A29F52", uuid: "E863F10A-079E-48FF-8F27-9C2605A29F52",
                           format: .float, perms: [.read, .events]),
            Characteristic(iid: 23, type: "E863F126-079E-48FF-8F27-9C2605A29F52", uuid: "E863F126-079E-48FF-8F27-9C2605A29F52",
                           format: .float, perms: [.read], description: ""),
            Characteristic(iid: 24, type: "E863F110-079E-48FF-8F27-9C2605A29F52", uuid: "E863F110-079E-48FF-8F27-9C2605A29F52",
                           format: .uint16, perms: [.read], description: "💡 Volt/Ampere #1"),
        ]))
        // A custom characteristic inside a standard service.
        meter.services[1].characteristics.append(Characteristic(
            iid: 30, type: "E863F10C-079E-48FF-8F27-9C2605A29F52", uuid: "E863F10C-079E-48FF-8F27-9C2605A29F52",
            format: .uint32, perms: [.read], description: "Watts"))
        return meter
    }()

    static let demoHome = Home(
        id: homeID, name: "Demo Home", isPrimary: true,
        rooms: [
            Room(id: livingRoom, name: "Living Room"), Room(id: kitchen, name: "Küche"), Room(id: bedroom, name: "Bob's Bedroom"),
            Room(id: "room-hall", name: "Default Room"),
        ],
        accessories: [
            floorLampCamel, floorLampTwin, floorLamp, thermostat, lost, bridge, kitchenBulb, bedroomBulb, namedStrip, sameNameStrip,
            unnamedStrip, partlyNamedStrip, caseNamedStrip, hiddenLamp, firmwareLamp, lock, custom,
        ])

    static let holidayHome = Home(id: "home-holiday", name: "Holiday Home", rooms: [Room(id: "room-beach", name: "Beach/House #1")],
                                  accessories: [accessory("acc-beach", "$SYS", room: "room-beach", services: [ServiceBlueprint(type: "switch")])])
    /// Clashes with Demo Home canonically; its id sorts after it.
    static let demoHomeClash = Home(id: "home-z", name: "demo home")

    static let map = TopicMap(base: "homegate", homes: [demoHomeClash, holidayHome, demoHome])
}

@Suite("Topic map")
struct TopicMapTests {
    typealias Target = TopicMap.Target
    let map = Fixtures.map
    let home = Fixtures.homeID

    func levels(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: false)
    }

    func characteristic(_ accessory: AccessoryID, _ iid: Int) -> Target {
        .characteristic(home, CharacteristicReference(accessoryID: accessory, iid: iid))
    }

    func service(_ accessory: AccessoryID, _ iid: Int) -> Target {
        .service(home, ServiceReference(accessoryID: accessory, serviceIID: iid))
    }

    // MARK: Topics

    @Test("homes, rooms, accessories, services and characteristics have their topics")
    func exactTopics() {
        #expect(map.base == "homegate")
        #expect(map.topic(of: .home(home)) == "homegate/demo-home")
        #expect(map.topic(of: .room(home, Fixtures.livingRoom)) == "homegate/demo-home/living-room")
        #expect(map.topic(of: .room(home, Fixtures.kitchen)) == "homegate/demo-home/kuche")
        #expect(map.topic(of: .room(home, Fixtures.bedroom)) == "homegate/demo-home/bob-s-bedroom")
        #expect(map.topic(of: .accessory(home, "acc-lamp-a")) == "homegate/demo-home/living-room/floor-lamp")
        #expect(map.topic(of: service("acc-lamp-a", 8)) == "homegate/demo-home/living-room/floor-lamp/lightbulb")
        #expect(map.topic(of: characteristic("acc-lamp-a", 9)) == "homegate/demo-home/living-room/floor-lamp/lightbulb/on")
        #expect(map.topic(of: characteristic("acc-lamp-a", 10)) == "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness")
    }

    @Test("characteristic segments are the standard types' names")
    func standardCharacteristicSegments() {
        let thermostat = "homegate/demo-home/default-room/hallway-thermostat/thermostat"
        #expect(map.topic(of: service("acc-thermostat", 8)) == thermostat)
        let names = ["current-heating-cooling-state", "target-heating-cooling-state", "current-temperature", "target-temperature",
                     "temperature-display-units"]
        for (offset, name) in names.enumerated() {
            #expect(map.topic(of: characteristic("acc-thermostat", 9 + offset)) == "\(thermostat)/\(name)")
        }
        #expect(map.topic(of: .characteristic(home, CharacteristicReference(accessoryID: "acc-lock", iid: 10)))
            == "homegate/demo-home/default-room-2/front-door/lock-mechanism/lock-target-state")
    }

    @Test("accessories without a room, or with a room that is gone, are in the default room")
    func defaultRoom() {
        #expect(map.topic(of: .room(home, Home.defaultRoom.id)) == "homegate/demo-home/default-room")
        #expect(map.topic(of: .accessory(home, "acc-thermostat")) == "homegate/demo-home/default-room/hallway-thermostat")
        #expect(map.topic(of: .accessory(home, "acc-lost")) == "homegate/demo-home/default-room/lost-sensor")
        #expect(map.topic(of: characteristic("acc-lost", 9)) == "homegate/demo-home/default-room/lost-sensor/temperature-sensor/current-temperature")
    }

    @Test("a room a person named Default Room does not take the default room's segment")
    func roomNamedDefaultRoom() {
        #expect(map.topic(of: .room(home, "room-hall")) == "homegate/demo-home/default-room-2")
        #expect(map.topic(of: .accessory(home, "acc-lock")) == "homegate/demo-home/default-room-2/front-door")
    }

    @Test("accessories with colliding names in one room get suffixes in stable-id order")
    func collidingAccessories() {
        #expect(map.topic(of: .accessory(home, "acc-lamp-a")) == "homegate/demo-home/living-room/floor-lamp")
        #expect(map.topic(of: .accessory(home, "acc-lamp-b")) == "homegate/demo-home/living-room/floor-lamp-2")
        #expect(map.topic(of: .accessory(home, "acc-lamp-c")) == "homegate/demo-home/living-room/floorlamp-3")
        #expect(map.topic(of: characteristic("acc-lamp-b", 9)) == "homegate/demo-home/living-room/floor-lamp-2/lightbulb/on")
    }

    @Test("equal names in different rooms need no suffix")
    func sameNameOtherRooms() {
        #expect(map.topic(of: .accessory(home, "acc-bulb-1")) == "homegate/demo-home/kuche/hue-bulb")
        #expect(map.topic(of: .accessory(home, "acc-bulb-2")) == "homegate/demo-home/bob-s-bedroom/hue-bulb")
    }

    @Test("a bridge and the accessories behind it each sit in their own rooms")
    func bridge() {
        #expect(map.topic(of: .accessory(home, "acc-bridge")) == "homegate/demo-home/living-room/hue-bridge")
        #expect(map.topic(of: characteristic("acc-bulb-1", 9)) == "homegate/demo-home/kuche/hue-bulb/lightbulb/on")
        #expect(map.topic(of: characteristic("acc-bulb-1", 10)) == "homegate/demo-home/kuche/hue-bulb/lightbulb/brightness")
        #expect(map.topic(of: characteristic("acc-bulb-1", 11)) == "homegate/demo-home/kuche/hue-bulb/lightbulb/hue")
        #expect(map.topic(of: characteristic("acc-bulb-2", 9)) == "homegate/demo-home/bob-s-bedroom/hue-bulb/lightbulb/on")
        // The bridge itself offers only information: no service topics below it.
        let below = map.allTopics.values.filter { $0.hasPrefix("homegate/demo-home/living-room/hue-bridge/") }
        #expect(below.isEmpty, "\(below)")
    }

    @Test("outlets with distinct names take their names' slugs")
    func namedOutlets() {
        let strip = "homegate/demo-home/kuche/power-strip"
        #expect(map.topic(of: service("acc-strip-named", 8)) == "\(strip)/left")
        #expect(map.topic(of: service("acc-strip-named", 10)) == "\(strip)/middle")
        #expect(map.topic(of: service("acc-strip-named", 12)) == "\(strip)/right")
        #expect(map.topic(of: characteristic("acc-strip-named", 13)) == "\(strip)/right/on")
    }

    @Test("outlets with the same name, or unnamed, are outlet, outlet-2 ... in iid order", arguments: [
        ("acc-strip-same", "desk-strip"), ("acc-strip-unnamed", "garage-strip"), ("acc-strip-partly", "shed-strip"),
        ("acc-strip-case", "attic-strip"),
    ] as [(AccessoryID, String)])
    func sameNameOutlets(_ id: AccessoryID, segment: String) {
        let strip = "homegate/demo-home/kuche/\(segment)"
        #expect(map.topic(of: service(id, 8)) == "\(strip)/outlet")
        #expect(map.topic(of: service(id, 10)) == "\(strip)/outlet-2")
        #expect(map.topic(of: characteristic(id, 11)) == "\(strip)/outlet-2/on")
        if id == "acc-strip-same" {
            #expect(map.topic(of: service(id, 12)) == "\(strip)/outlet-3")
        }
    }

    @Test("a single service of a type takes the type's name, even if it has a name of its own")
    func singleNamedService() throws {
        let accessory = try AccessoryBlueprint(id: "a", name: "Lamp", services: [
            .init(type: "lightbulb", name: "Reading Light"), .init(type: "outlet", name: "Charger"),
        ]).build()
        let map = TopicMap(base: "hg", homes: [Home(id: "h", name: "H", accessories: [accessory])])
        #expect(map.topic(of: .service("h", ServiceReference(accessoryID: "a", serviceIID: 8))) == "hg/h/default-room/lamp/lightbulb")
        #expect(map.topic(of: .service("h", ServiceReference(accessoryID: "a", serviceIID: 10))) == "hg/h/default-room/lamp/outlet")
    }

    @Test("accessory information has no topics", arguments: ["acc-lamp-a", "acc-thermostat", "acc-bridge", "acc-strip-named"] as [AccessoryID])
    func accessoryInformation(_ id: AccessoryID) {
        #expect(map.topic(of: service(id, 1)) == nil)
        for iid in 2...7 {
            #expect(map.topic(of: characteristic(id, iid)) == nil)
        }
        let names = map.allTopics.values.filter { $0.contains("accessory-information") || $0.hasSuffix("/serial-number") }
        #expect(names.isEmpty, "\(names)")
    }

    @Test("services flagged hidden have no topics")
    func hiddenServices() {
        // The bridge's protocol information (hidden in the catalog): iid 8, version 9.
        #expect(map.topic(of: service("acc-bridge", 8)) == nil)
        #expect(map.topic(of: characteristic("acc-bridge", 9)) == nil)
        // A lightbulb flagged hidden on the accessory.
        #expect(map.topic(of: service("acc-hidden", 8)) == nil)
        #expect(map.topic(of: characteristic("acc-hidden", 9)) == nil)
        #expect(map.topic(of: service("acc-hidden", 10)) == "homegate/demo-home/bob-s-bedroom/night-light/switch")
        #expect(map.topic(of: characteristic("acc-hidden", 11)) == "homegate/demo-home/bob-s-bedroom/night-light/switch/on")
        #expect(!map.allTopics.values.contains { $0.contains("protocol-information") })
    }

    @Test("the firmware update service never gets value topics")
    func firmwareUpdateHidden() {
        // Desk Lamp: lightbulb 8 (on 9), firmware-update 10 (readiness 11, status 12).
        #expect(map.topic(of: characteristic("acc-firmware", 9)) == "homegate/demo-home/bob-s-bedroom/desk-lamp/lightbulb/on")
        #expect(map.topic(of: service("acc-firmware", 10)) == nil)
        #expect(map.topic(of: characteristic("acc-firmware", 11)) == nil)
        #expect(map.topic(of: characteristic("acc-firmware", 12)) == nil)
    }

    @Test("vendor and custom types: the catalog's vendor names, else the description, else a short stable form; never a bare UUID")
    func customTypes() {
        let meter = "homegate/demo-home/kuche/energy-meter"
        let custom = "\(meter)/f1e2d3c4"
        #expect(map.topic(of: service("acc-custom", 20)) == custom, "an unknown service without a name: the UUID's first eight digits")
        #expect(map.topic(of: characteristic("acc-custom", 21)) == "\(custom)/power", "Eve's power: the catalog's name wins over the description")
        #expect(map.topic(of: characteristic("acc-custom", 22)) == "\(custom)/voltage")
        #expect(map.topic(of: characteristic("acc-custom", 23)) == "\(custom)/current")
        #expect(map.topic(of: characteristic("acc-custom", 24)) == "\(custom)/volt-ampere-1", "unknown to the catalog: its description")
        #expect(map.topic(of: characteristic("acc-custom", 25)) == "\(custom)/eve-e863f1ff", "unknown, no description: the vendor and eight digits")
        #expect(map.topic(of: characteristic("acc-custom", 30)) == "\(meter)/outlet/energy")
        #expect(map.topic(of: characteristic("acc-custom", 9)) == "\(meter)/outlet/on")
        #expect(map.topic(of: service("acc-custom", 40)) == nil, "Eve's history service is hidden")
        #expect(map.topic(of: characteristic("acc-custom", 41)) == nil)
        #expect(!map.allTopics.values.contains { $0.split(separator: "/").contains { $0.count == 36 } }, "no 36-character UUID segment")
    }

    @Test("homes: clashing names get suffixes, hostile names are made safe")
    func homes() {
        #expect(map.topic(of: .home("home-z")) == "homegate/demo-home-2")
        #expect(map.topic(of: .home("home-holiday")) == "homegate/holiday-home")
        #expect(map.topic(of: .room("home-holiday", "room-beach")) == "homegate/holiday-home/beach-house-1")
        #expect(map.topic(of: .accessory("home-holiday", "acc-beach")) == "homegate/holiday-home/beach-house-1/sys")
        // A home without rooms still has its default room.
        #expect(map.topic(of: .room("home-z", Home.defaultRoom.id)) == "homegate/demo-home-2/default-room")
    }

    @Test("a different base topic prefixes everything")
    func base() {
        let map = TopicMap(base: "site/a", homes: [Fixtures.demoHome])
        #expect(map.topic(of: characteristic("acc-lamp-a", 10)) == "site/a/demo-home/living-room/floor-lamp/lightbulb/brightness")
    }

    @Test("unknown objects have no topic")
    func unknown() {
        #expect(map.topic(of: .home("nope")) == nil)
        #expect(map.topic(of: .accessory(home, "nope")) == nil)
        #expect(map.topic(of: characteristic("acc-lamp-a", 999)) == nil)
    }

    @Test("every topic is unique, safe, and as deep as its object")
    func allTopicsWellFormed() {
        let topics = map.allTopics
        #expect(Set(topics.values).count == topics.count)
        for (target, topic) in topics {
            let depth: Int
            switch target {
            case .home: depth = 2
            case .room: depth = 3
            case .accessory: depth = 4
            case .service: depth = 5
            case .characteristic: depth = 6
            }
            let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
            #expect(parts.count == depth, "\(topic)")
            #expect(!topic.contains("+") && !topic.contains("#") && !topic.contains("$") && !topic.contains(" ") && !topic.contains("\u{0}"), "\(topic)")
            #expect(parts.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }, "\(topic)")
        }
    }

    @Test("the layout does not depend on the order homes, rooms and accessories are listed in")
    func orderIndependent() {
        var shuffled = Fixtures.demoHome
        shuffled.accessories.reverse()
        shuffled.rooms.reverse()
        let other = TopicMap(base: "homegate", homes: [Fixtures.demoHome, Fixtures.holidayHome, Fixtures.demoHomeClash].reversed().map {
            $0.id == shuffled.id ? shuffled : $0
        })
        #expect(other.allTopics == map.allTopics)
    }

    // MARK: Resolution

    @Test("every topic resolves back to its object")
    func roundTrip() {
        for (target, topic) in map.allTopics {
            let parts = levels(topic).dropFirst()
            #expect(map.resolve(Array(parts)) == .found(target), "\(topic)")
        }
    }

    @Test("inbound spellings resolve by canonical comparison", arguments: [
        "demo-home/living-room/floor-lamp/lightbulb/brightness",
        "Demo Home/Living Room/Floor Lamp/Lightbulb/Brightness",
        "demohome/livingroom/floorlamp/lightbulb/brightness",
        "DEMO_HOME/LIVING_ROOM/FLOOR_LAMP/LIGHTBULB/BRIGHTNESS",
        "demo home/living room/floor lamp/lightbulb/brightness",
        "Demo-Home/living_Room/Floor-lamp/LightBulb/brightness",
    ])
    func canonicalResolution(_ path: String) {
        #expect(map.resolve(levels(path)) == .found(characteristic("acc-lamp-a", 10)))
    }

    @Test("the same room whatever the spelling", arguments: ["Living Room", "living-room", "livingroom", "LIVING_ROOM", "Living-Room"])
    func roomSpellings(_ room: String) {
        #expect(map.resolve(["demo-home", Substring(room)]) == .found(.room(home, Fixtures.livingRoom)))
    }

    @Test("names with diacritics, apostrophes and suffixes resolve", arguments: [
        ("Demo Home/Küche", TopicMap.Target.room(Fixtures.homeID, Fixtures.kitchen)),
        ("demo-home/kuche", TopicMap.Target.room(Fixtures.homeID, Fixtures.kitchen)),
        ("demo-home/KÜCHE/Power Strip/Left/On", TopicMap.Target.characteristic(Fixtures.homeID, CharacteristicReference(accessoryID: "acc-strip-named", iid: 9))),
        ("demo-home/Bob's Bedroom", TopicMap.Target.room(Fixtures.homeID, Fixtures.bedroom)),
        ("demo-home/bobs-bedroom", TopicMap.Target.room(Fixtures.homeID, Fixtures.bedroom)),
        ("demo-home/bob\u{2019}s bedroom", TopicMap.Target.room(Fixtures.homeID, Fixtures.bedroom)),
        ("demo-home/living-room/floor-lamp-2", TopicMap.Target.accessory(Fixtures.homeID, "acc-lamp-b")),
        ("demo-home/living-room/Floor Lamp 2", TopicMap.Target.accessory(Fixtures.homeID, "acc-lamp-b")),
        ("demo-home/living-room/floorlamp-3", TopicMap.Target.accessory(Fixtures.homeID, "acc-lamp-c")),
        ("demo-home-2", TopicMap.Target.home("home-z")),
        ("Demo Home 2/Default Room", TopicMap.Target.room("home-z", Home.defaultRoom.id)),
        ("demo-home/Default Room/Hallway Thermostat/Thermostat/Target Temperature",
         TopicMap.Target.characteristic(Fixtures.homeID, CharacteristicReference(accessoryID: "acc-thermostat", iid: 12))),
        ("demo-home/default-room-2/front-door/lock-mechanism/lock-target-state",
         TopicMap.Target.characteristic(Fixtures.homeID, CharacteristicReference(accessoryID: "acc-lock", iid: 10))),
        ("demo-home/kuche/energy-meter/F1E2D3C4/POWER",
         TopicMap.Target.characteristic(Fixtures.homeID, CharacteristicReference(accessoryID: "acc-custom", iid: 21))),
        ("demo-home/kuche/desk-strip/outlet-3", TopicMap.Target.service(Fixtures.homeID, ServiceReference(accessoryID: "acc-strip-same", serviceIID: 12))),
        ("holiday-home/beach-house-1/sys/switch/on", TopicMap.Target.characteristic("home-holiday", CharacteristicReference(accessoryID: "acc-beach", iid: 9))),
    ])
    func resolves(_ path: String, target: Target) {
        #expect(map.resolve(levels(path)) == .found(target))
    }

    @Test("unresolved topics name the first level that does not resolve", arguments: [
        ("nowhere", 0, "nowhere"),
        ("nowhere/living-room", 0, "nowhere"),
        ("demo-home/Garage", 1, "Garage"),
        ("demo-home/Garage/floor-lamp/lightbulb/on", 1, "Garage"),
        ("demo-home/living-room/Ceiling Lamp/lightbulb", 2, "Ceiling Lamp"),
        ("demo-home/living-room/floor-lamp/fan/on", 3, "fan"),
        ("demo-home/living-room/floor-lamp/lightbulb/hue", 4, "hue"),
        ("demo-home/living-room/floor-lamp/lightbulb/brightness/extra", 5, "extra"),
        ("demo-home/living-room/floor-lamp/accessory-information/name", 3, "accessory-information"),
        ("demo-home/living-room/hue-bridge/protocol-information/version", 3, "protocol-information"),
        ("demo-home/kuche/Power Strip/outlet/on", 3, "outlet"),
        ("demo-home//floor-lamp", 1, ""),
        ("demo-home/living-room/floor-lamp-4", 2, "floor-lamp-4"),
        ("demo-home/Kitchen", 1, "Kitchen"),
        ("+/#", 0, "+"),
        ("$SYS/broker", 0, "$SYS"),
    ])
    func unresolved(_ path: String, index: Int, segment: String) {
        #expect(map.resolve(levels(path)) == .unresolved(index: index, segment: segment))
    }

    @Test("a level found under another parent does not resolve under this one")
    func wrongParent() {
        // power-strip lives in the kitchen, not in the living room.
        #expect(map.resolve(levels("demo-home/living-room/power-strip")) == .unresolved(index: 2, segment: "power-strip"))
        // The other home has no living room.
        #expect(map.resolve(levels("demo-home-2/living-room")) == .unresolved(index: 1, segment: "living-room"))
    }

    @Test("a home of 10,000 accessories lays out and resolves")
    func tenThousandAccessories() {
        let rooms = (0..<10).map { Room(id: RoomID("room-\($0)"), name: "Room \($0)") }
        let template = Fixtures.floorLamp
        var accessories: [Accessory] = []
        accessories.reserveCapacity(10_000)
        for number in 0..<10_000 {
            var accessory = template
            accessory.id = AccessoryID("acc-" + String(repeating: "0", count: 5 - String(number).count) + String(number))
            accessory.name = "Lamp \(number / 20)" // every name twice in each room
            accessory.roomID = number % 100 == 99 ? nil : rooms[number % 10].id
            accessories.append(accessory)
        }
        let big = Home(id: "big", name: "Big House", rooms: rooms, accessories: accessories)
        let map = TopicMap(base: "homegate", homes: [big])
        let topics = map.allTopics
        // home + 11 rooms + 10,000 × (accessory, lightbulb, on, brightness)
        #expect(topics.count == 1 + 11 + 40_000)
        #expect(Set(topics.values).count == topics.count)
        #expect(map.topic(of: .accessory("big", "acc-00000")) == "homegate/big-house/room-0/lamp-0")
        #expect(map.topic(of: .accessory("big", "acc-00010")) == "homegate/big-house/room-0/lamp-0-2")
        #expect(map.topic(of: .accessory("big", "acc-00099")) == "homegate/big-house/default-room/lamp-4")
        #expect(map.topic(of: .characteristic("big", CharacteristicReference(accessoryID: "acc-09988", iid: 10)))
            == "homegate/big-house/room-8/lamp-499/lightbulb/brightness")
        #expect(map.topic(of: .accessory("big", "acc-09998")) == "homegate/big-house/room-8/lamp-499-2")
        #expect(map.resolve(levels("Big House/Room 8/Lamp 499/Lightbulb/Brightness"))
            == .found(.characteristic("big", CharacteristicReference(accessoryID: "acc-09988", iid: 10))))
        #expect(map.resolve(levels("big-house/room-8/lamp-499-2/lightbulb/on"))
            == .found(.characteristic("big", CharacteristicReference(accessoryID: "acc-09998", iid: 9))))
        #expect(map.resolve(levels("big-house/room-8/lamp-500")) == .unresolved(index: 2, segment: "lamp-500"))
        var mismatches = 0
        for (target, topic) in topics where map.resolve(Array(levels(topic).dropFirst())) != .found(target) {
            mismatches += 1
        }
        #expect(mismatches == 0)
    }
}

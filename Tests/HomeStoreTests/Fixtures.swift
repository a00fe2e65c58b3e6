import Foundation
import HomeModel
@testable import HomeStore

/// Sample layouts and a scratch directory for the store's tests.
enum Fixtures {
    /// Two homes, the first primary, with one of everything the model has.
    static let homes: [Home] = [main, cabin]

    static let main = Home(
        id: "home-main", name: "Main House", isPrimary: true,
        rooms: [Room(id: "living", name: "Living Room"), Room(id: "kitchen", name: "Kitchen"), Room(id: "bedroom", name: "Bedroom")],
        zones: [
            Zone(id: "downstairs", name: "Downstairs", roomIDs: ["living", "kitchen"]),
            Zone(id: "upstairs", name: "Upstairs", roomIDs: ["bedroom"]),
            Zone(id: "empty", name: "Nowhere"),
        ],
        accessories: [bridge, lamp, sensor, thermostat],
        serviceGroups: [
            ServiceGroup(id: "reading", name: "Reading Lights", services: [ServiceReference(accessoryID: "lamp", serviceIID: 10)]),
            ServiceGroup(id: "nothing", name: "Empty Group"),
        ],
        actionSets: [goodNight, ActionSet(id: "empty", name: "Do Nothing")],
        triggers: [
            TimerTrigger(id: "nightly", name: "Nightly", fireDate: Date(timeIntervalSince1970: 1_790_000_000),
                         recurrence: .init(unit: .day, every: 1), actionSetIDs: ["good-night"]),
            TimerTrigger(id: "once", name: "Once", fireDate: Date(timeIntervalSince1970: 1_790_123_456.125),
                         actionSetIDs: ["good-night", "empty"], isEnabled: false),
        ]
    )

    static let cabin = Home(
        id: "home-cabin", name: "Cabin",
        rooms: [Room(id: "porch", name: "Porch")],
        accessories: [Accessory(id: "porch-light", name: "Porch Light", category: .lightbulb, roomID: "porch",
                                services: [Service(iid: 10, type: "lightbulb", uuid: uuid("43"), isPrimary: true,
                                                   characteristics: [characteristic(11, "on", .bool, .bool(false))])])]
    )

    static let bridge = Accessory(
        id: "bridge", name: "Hue Bridge", manufacturer: "Signify", model: "BSB002", serialNumber: "0017881", firmwareRevision: "1.60",
        category: .bridge, roomID: "living", services: [information(name: "Hue Bridge")]
    )

    /// A bridged lightbulb: bool, int, float and string values.
    static let lamp = Accessory(
        id: "lamp", name: "Floor Lamp", manufacturer: "Signify", category: .lightbulb, roomID: "living", bridgeID: "bridge",
        services: [
            information(name: "Floor Lamp"),
            Service(iid: 10, type: "lightbulb", uuid: uuid("43"), name: "Lamp", isPrimary: true, linked: [20], characteristics: [
                characteristic(11, "on", .bool, .bool(true)),
                characteristic(12, "brightness", .int, .int(-40), unit: "percentage", bounds: (0, 100, 1)),
                characteristic(13, "hue", .float, .float(0.1), unit: "arcdegrees", bounds: (0, 360, 0.5)),
                characteristic(14, "name", .string, .string("Ünïcödé \"quoted\" / \\ \n tab\t"), perms: [.read]),
            ]),
            Service(iid: 20, type: "battery", uuid: uuid("96"), isHidden: true, characteristics: [
                characteristic(21, "battery-level", .uint8, .uint(UInt64.max)),
            ]),
        ]
    )

    /// A bridged sensor with no room, unreachable: uint, data and missing values.
    static let sensor = Accessory(
        id: "sensor", name: "Motion", category: .sensor, isReachable: false, bridgeID: "bridge",
        services: [Service(iid: 30, type: "motion-sensor", uuid: uuid("85"), characteristics: [
            characteristic(31, "motion-detected", .bool, nil, perms: [.read, .events]),
            characteristic(32, "status-flags", .uint16, .uint(3), validValues: [0, 1, 3]),
            characteristic(33, "setup-data", .tlv8, .data([0, 1, 2, 254, 255])),
            characteristic(34, "empty-data", .data, .data([])),
            characteristic(35, "lowest", .int, .int(Int64.min)),
        ])]
    )

    /// A standalone thermostat with a custom characteristic.
    static let thermostat = Accessory(
        id: "thermostat", name: "Thermostat", category: .thermostat, roomID: "default-room",
        services: [Service(iid: 40, type: "thermostat", uuid: uuid("4A"), characteristics: [
            characteristic(41, "current-temperature", .float, .float(21.5), unit: "celsius", bounds: (-270, 100, 0.1)),
            Characteristic(iid: 42, type: "E863F10D-079E-48FF-8F27-9C2605A29F52", uuid: "E863F10D-079E-48FF-8F27-9C2605A29F52",
                           format: .float, perms: [.read, .events], validValuesRange: [0, 5000], value: .float(1013.25),
                           description: "Air Pressure"),
        ])]
    )

    static let goodNight = ActionSet(id: "good-night", name: "Good Night", actions: [
        ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "lamp", iid: 11), value: .bool(false)),
        ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "lamp", iid: 12), value: .int(5)),
        ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "lamp", iid: 13), value: .float(359.5)),
        ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "lamp", iid: 14), value: .string("Night")),
        ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "sensor", iid: 32), value: .uint(1)),
        ActionSet.Action(characteristic: CharacteristicReference(accessoryID: "sensor", iid: 33), value: .data([9, 8, 7])),
    ])

    static func information(name: String) -> Service {
        Service(iid: 1, type: "accessory-information", uuid: uuid("3E"), characteristics: [
            characteristic(2, "identify", .bool, nil, perms: [.write]),
            characteristic(3, "name", .string, .string(name), perms: [.read]),
        ])
    }

    static func characteristic(_ iid: Int, _ type: String, _ format: Format, _ value: Value?, perms: [Permission] = [.read, .write, .events],
                               unit: String? = nil, bounds: (Double, Double, Double)? = nil, validValues: [Double]? = nil) -> Characteristic {
        Characteristic(iid: iid, type: type, uuid: uuid(String(iid, radix: 16).uppercased()), format: format, perms: perms, unit: unit,
                       minValue: bounds?.0, maxValue: bounds?.1, minStep: bounds?.2, validValues: validValues, value: value)
    }

    /// The full UUID of a HAP short type (`43` → `00000043-0000-1000-8000-0026BB765291`).
    static func uuid(_ short: String) -> String {
        String(repeating: "0", count: 8 - short.count) + short + "-0000-1000-8000-0026BB765291"
    }
}

/// Runs `body` with a new, empty directory, and removes the directory afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("HomeStoreTests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// The permission bits of the file or directory at `path`.
func mode(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// The path of the database file in `directory`.
func databasePath(in directory: String) -> String {
    URL(fileURLWithPath: directory).appendingPathComponent(HomeStore.fileName).path
}

import Foundation
import HomeModel
import Wire

/// A management request (`<base>/$request/<object>/<verb>` for the home itself, section 7 of the
/// contract), parsed: which change or action it asks for, its fields checked. Nothing here looks
/// at the home; ``Management`` decides, the ``Gateway`` carries out.
enum ManagementRequest: Equatable {
    /// A change to the layout, in `home` (nil: the primary home).
    case layout(LayoutChange, home: String?)
    /// Writes the accessory's Identify characteristic.
    case identify(accessory: String, home: String?)
    /// Pairs with a HomeKit device and places its accessories.
    case pair(Pairing)
    /// Removes the pairing of the device `accessory` belongs to.
    case unpair(accessory: String, home: String?)
    /// Lists the controllers the device `accessory` belongs to is paired with, after removing
    /// controller `remove` when it names one.
    case pairings(accessory: String, remove: String?, home: String?)
    /// Replaces the options stored for an accessory (nil: only answers them).
    case options(accessory: String, set: AccessoryOptions?, home: String?)
    /// Runs an action set's writes.
    case executeActionSet(String, home: String?)
    /// Turns the accessory browser on or off.
    case browse(Bool)
    /// Takes a camera's still image and publishes it on its `$snapshot` topic.
    case snapshot(Snapshot)

    /// A snapshot request's fields: the camera, and the size asked for.
    struct Snapshot: Equatable {
        var accessory: String
        var home: String?
        var width: Int
        var height: Int

        /// The size asked for when the request names none: HomeKit's own snapshot size.
        static let defaultWidth = 640
        static let defaultHeight = 480
        /// The largest side a request may ask for (8K).
        static let largestSide = 7680

        init(accessory: String, home: String?, width: Int = Self.defaultWidth, height: Int = Self.defaultHeight) {
            self.accessory = accessory
            self.home = home
            self.width = width
            self.height = height
        }

        init(_ fields: ManagementBody, home: String?) throws {
            self.init(accessory: try fields.string("accessory"), home: home,
                      width: try Self.side(fields, "width", default: Self.defaultWidth),
                      height: try Self.side(fields, "height", default: Self.defaultHeight))
        }

        private static func side(_ fields: ManagementBody, _ key: String, default fallback: Int) throws -> Int {
            guard let value = fields.raw[key], value != .null else { return fallback }
            guard value.isNumber, let whole = value.int, let side = Int(exactly: whole), (1...largestSide).contains(side) else {
                throw RequestError.invalid("\"\(key)\" must be a whole number of pixels from 1 to \(largestSide)")
            }
            return side
        }
    }

    /// A change of the layout, with the names (and topics) the request used.
    enum LayoutChange: Equatable {
        case addHome(name: String)
        case removeHome(String)
        case renameHome(String, to: String)
        case setPrimaryHome(String)
        case addRoom(name: String)
        case removeRoom(String)
        case renameRoom(String, to: String)
        case addZone(name: String)
        case removeZone(String)
        case renameZone(String, to: String)
        case addRoomToZone(room: String, zone: String)
        case removeRoomFromZone(room: String, zone: String)
        case assignRoom(accessory: String, room: String)
        case renameAccessory(String, to: String)
        case removeAccessory(String)
        case renameService(TargetName, to: String)
        case addServiceGroup(name: String)
        case removeServiceGroup(String)
        case renameServiceGroup(String, to: String)
        case addServiceToGroup(TargetName, group: String)
        case removeServiceFromGroup(TargetName, group: String)
        case addActionSet(name: String)
        case removeActionSet(String)
        case renameActionSet(String, to: String)
        case addAction(actionSet: String, TargetName, value: JSON)
        case removeAction(actionSet: String, TargetName)
        case addTrigger(TriggerFields)
        case removeTrigger(String)
        case setTriggerEnabled(String, Bool)
    }

    /// What a ``TargetName`` names.
    enum TargetKind: String {
        case service, characteristic
    }

    /// A service or characteristic as a request names it: by its topic (any spelling a set
    /// accepts), or by `accessory` and instance id.
    /// How a request names a service or characteristic: by its topic, by `accessory` and
    /// instance id, or (the simulator's controls) by its type on an accessory.
    enum TargetName: Equatable {
        case topic(String)
        case instance(accessory: String, iid: Int)
        /// The first visible characteristic of `type` on `accessory`, in `service` when given.
        case type(accessory: String, service: ServiceName?, type: String)
    }

    /// A service named by its instance id, or by its type or name.
    enum ServiceName: Equatable {
        case iid(Int)
        case name(String)
    }

    /// `trigger/add`'s fields.
    struct TriggerFields: Equatable {
        let name: String
        let fireDate: Date
        let recurrence: TimerTrigger.Recurrence?
        let actionSets: [String]
        let enabled: Bool
    }

    /// `accessory/pair`'s fields.
    struct Pairing: Equatable {
        /// Where the device listens: an address, or a device id the accessory browser found.
        enum Address: Equatable {
            /// `transport`: `ip` (HAP over IP) or `coap` (HAP over CoAP, a Thread accessory).
            case host(String, port: Int, transport: String)
            case found(deviceID: String)
            /// A Matter device, commissioned through the Matter Server (`transport`: `matter`):
            /// its setup code says which.
            case matter
        }

        let address: Address
        let code: String
        let room: String?
        let home: String?
    }

    /// The objects management requests are about.
    static let objects: Set<String> = ["home", "room", "zone", "accessory", "service", "service-group", "action-set", "trigger", "browser"]
}

// MARK: Parsing

extension ManagementRequest {
    /// Parses `<object>/<verb>` and its body.
    /// - Throws: ``RequestError``: `unknown-request`, or `invalid-request` for a missing
    ///   or mistyped field.
    init(object: String, verb: String, body: [String: JSON]) throws {
        let fields = ManagementBody(body)
        let home = try fields.optionalString("home")
        switch object {
        case "home":
            self = .layout(try Self.homeChange(verb, fields), home: nil)
        case "room", "zone":
            self = .layout(try Self.roomChange(object, verb, fields), home: home)
        case "accessory":
            self = try Self.accessoryRequest(verb, fields, home: home)
        case "service" where verb == "rename":
            self = .layout(.renameService(try fields.target(.service), to: try fields.string("newName")), home: home)
        case "service-group", "action-set", "trigger":
            self = try Self.sceneRequest(object, verb, fields, home: home)
        case "browser" where verb == "start" || verb == "stop":
            self = .browse(verb == "start")
        case "browser":
            throw RequestError(code: "unknown-request", message: "unknown request \"browser/\(verb)\"; known: start, stop")
        default:
            throw Self.unknown(object, verb)
        }
    }

    private static func unknown(_ object: String, _ verb: String) -> RequestError {
        RequestError(code: "unknown-request", message: "unknown request \"\(object)/\(verb)\"")
    }

    private static func homeChange(_ verb: String, _ fields: ManagementBody) throws -> LayoutChange {
        switch verb {
        case "add": .addHome(name: try fields.string("name"))
        case "remove": .removeHome(try fields.string("home"))
        case "rename": .renameHome(try fields.string("home"), to: try fields.string("newName"))
        case "set-primary": .setPrimaryHome(try fields.string("home"))
        default: throw unknown("home", verb)
        }
    }

    private static func roomChange(_ object: String, _ verb: String, _ fields: ManagementBody) throws -> LayoutChange {
        switch (object, verb) {
        case ("room", "add"): .addRoom(name: try fields.string("name"))
        case ("room", "remove"): .removeRoom(try fields.string("room"))
        case ("room", "rename"): .renameRoom(try fields.string("room"), to: try fields.string("newName"))
        case ("zone", "add"): .addZone(name: try fields.string("name"))
        case ("zone", "remove"): .removeZone(try fields.string("zone"))
        case ("zone", "rename"): .renameZone(try fields.string("zone"), to: try fields.string("newName"))
        case ("zone", "add-room"): .addRoomToZone(room: try fields.string("room"), zone: try fields.string("zone"))
        case ("zone", "remove-room"): .removeRoomFromZone(room: try fields.string("room"), zone: try fields.string("zone"))
        default: throw unknown(object, verb)
        }
    }

    private static func accessoryRequest(_ verb: String, _ fields: ManagementBody, home: String?) throws -> ManagementRequest {
        switch verb {
        case "assign-room": .layout(.assignRoom(accessory: try fields.string("accessory"), room: try fields.string("room")), home: home)
        case "rename": .layout(.renameAccessory(try fields.string("accessory"), to: try fields.string("newName")), home: home)
        case "remove": .layout(.removeAccessory(try fields.string("accessory")), home: home)
        case "identify": .identify(accessory: try fields.string("accessory"), home: home)
        case "pair": .pair(try Pairing(fields, home: home))
        case "unpair": .unpair(accessory: try fields.string("accessory"), home: home)
        case "pairings": .pairings(accessory: try fields.string("accessory"), remove: try fields.optionalString("remove"), home: home)
        case "snapshot": .snapshot(try Snapshot(fields, home: home))
        case "options": .options(accessory: try fields.string("accessory"), set: try options(fields), home: home)
        default:
            throw RequestError(code: "unknown-request",
                                       message: "unknown request \"accessory/\(verb)\"; known: assign-room, rename, remove, identify, pair, unpair, pairings, snapshot, options")
        }
    }

    /// `options`, read by the one reader of options; absent: none to set.
    private static func options(_ fields: ManagementBody) throws -> AccessoryOptions? {
        guard let json = fields.raw["options"] else { return nil }
        do throws(JSONOptionsSource.Failure) {
            return try AccessoryOptions(reading: JSONOptionsSource(json, keyPath: "options"))
        } catch {
            throw RequestError.invalid("\(error)")
        }
    }

    private static func sceneRequest(_ object: String, _ verb: String, _ fields: ManagementBody, home: String?) throws -> ManagementRequest {
        if (object, verb) == ("action-set", "execute") { return .executeActionSet(try fields.string("actionSet"), home: home) }
        let change: LayoutChange = switch (object, verb) {
        case ("service-group", "add"): .addServiceGroup(name: try fields.string("name"))
        case ("service-group", "remove"): .removeServiceGroup(try fields.string("group"))
        case ("service-group", "rename"): .renameServiceGroup(try fields.string("group"), to: try fields.string("newName"))
        case ("service-group", "add-service"): .addServiceToGroup(try fields.target(.service), group: try fields.string("group"))
        case ("service-group", "remove-service"): .removeServiceFromGroup(try fields.target(.service), group: try fields.string("group"))
        case ("action-set", "add"): .addActionSet(name: try fields.string("name"))
        case ("action-set", "remove"): .removeActionSet(try fields.string("actionSet"))
        case ("action-set", "rename"): .renameActionSet(try fields.string("actionSet"), to: try fields.string("newName"))
        case ("action-set", "add-action"): try addAction(fields)
        case ("action-set", "remove-action"): .removeAction(actionSet: try fields.string("actionSet"), try fields.target(.characteristic))
        case ("trigger", "add"): .addTrigger(try TriggerFields(fields))
        case ("trigger", "remove"): .removeTrigger(try fields.string("trigger"))
        case ("trigger", "enable"), ("trigger", "disable"): .setTriggerEnabled(try fields.string("trigger"), verb == "enable")
        default: throw unknown(object, verb)
        }
        return .layout(change, home: home)
    }

    private static func addAction(_ fields: ManagementBody) throws -> LayoutChange {
        guard let value = fields.raw["value"], value != .null else { throw RequestError.invalid("\"value\" is required") }
        return .addAction(actionSet: try fields.string("actionSet"), try fields.target(.characteristic), value: value)
    }
}

extension ManagementRequest.TriggerFields {
    init(_ fields: ManagementBody) throws {
        self.init(name: try fields.string("name"), fireDate: try fields.date("fireDate"), recurrence: try fields.recurrence(),
                  actionSets: try fields.strings("actionSets"), enabled: try fields.bool("enabled", default: true))
    }
}

extension ManagementRequest.Pairing {
    init(_ fields: ManagementBody, home: String?) throws {
        let address: Address
        if let device = try fields.optionalString("device") {
            address = .found(deviceID: device.uppercased())
        } else if try fields.optionalString("transport") == "matter" {
            address = .matter
        } else {
            let host = try fields.string("host")
            let port = try fields.int("port")
            guard (1...65535).contains(port) else { throw RequestError.invalid("\"port\" must be 1 to 65535") }
            let transport = try fields.optionalString("transport") ?? "ip"
            guard ["ip", "coap"].contains(transport) else {
                throw RequestError.invalid("\"transport\" must be \"ip\", \"coap\" or \"matter\", not \"\(transport)\"")
            }
            address = .host(host, port: port, transport: transport)
        }
        self.init(address: address, code: try fields.string("code"), room: try fields.optionalString("room"), home: home)
    }
}

import Accessories
import Foundation
import HomeModel
import Wire

/// `<base>/$request/<object>/<verb>` for the home itself (section 7 of the contract): homes,
/// rooms, zones, accessories, services, service groups, action sets, timer triggers, pairing.
///
/// Parsing (the body's fields) happens here; deciding (HomeKit's rules) is ``HomeEditor``'s.
/// Every change is stored, announced on `$events`, republished in `$layout`, and moves the
/// topics (clearing the old retained ones).
extension Gateway {
    /// The objects this file answers for.
    static let managedObjects: Set<String> = ["home", "room", "zone", "accessory", "service", "service-group", "action-set", "trigger", "browser"]

    /// Answers one management request; throws ``RequestError`` with the wire code.
    func managementRequest(object: String, verb: String, body: [String: JSON]) async throws -> [String: JSON] {
        let request = ManagementBody(body)
        let home = try request.optionalString("home")
        switch (object, verb) {
        case ("home", "add"):
            let added = try edit { try $0.addHome(name: request.string("name")) }
            return ["home": .string(added.name), "id": .string(added.id.rawValue)]
        case ("home", "remove"):
            try edit { try $0.removeHome(request.string("home")) }
        case ("home", "rename"):
            try edit { try $0.renameHome(request.string("home"), to: request.string("newName")) }
        case ("home", "set-primary"):
            try edit { try $0.setPrimaryHome(request.string("home")) }
        case ("room", "add"):
            let room = try edit { try $0.addRoom(name: request.string("name"), home: home) }
            return ["room": .string(room.name), "id": .string(room.id.rawValue)]
        case ("room", "remove"):
            try edit { try $0.removeRoom(request.string("room"), home: home) }
        case ("room", "rename"):
            try edit { try $0.renameRoom(request.string("room"), to: request.string("newName"), home: home) }
        case ("zone", "add"):
            let zone = try edit { try $0.addZone(name: request.string("name"), home: home) }
            return ["zone": .string(zone.name), "id": .string(zone.id.rawValue)]
        case ("zone", "remove"):
            try edit { try $0.removeZone(request.string("zone"), home: home) }
        case ("zone", "rename"):
            try edit { try $0.renameZone(request.string("zone"), to: request.string("newName"), home: home) }
        case ("zone", "add-room"):
            try edit { try $0.addRoom(request.string("room"), toZone: request.string("zone"), home: home) }
        case ("zone", "remove-room"):
            try edit { try $0.removeRoom(request.string("room"), fromZone: request.string("zone"), home: home) }
        case ("accessory", _):
            return try await accessoryRequest(verb, request, home: home)
        case ("service", "rename"):
            let target = try named(.service, in: request, home: home)
            try edit { try $0.renameService(accessory: target.accessory, service: target.iid, to: request.string("newName"), home: target.home) }
        case ("service-group", _), ("action-set", _), ("trigger", _):
            return try await sceneRequest(object, verb, request, home: home)
        case ("browser", _):
            return try browserRequest(verb)
        default:
            throw RequestError(code: "unknown-request", message: "unknown request \"\(object)/\(verb)\"")
        }
        return [:]
    }

    private func accessoryRequest(_ verb: String, _ request: ManagementBody, home: String?) async throws -> [String: JSON] {
        switch verb {
        case "assign-room":
            try edit { try $0.assignAccessory(request.string("accessory"), toRoom: request.string("room"), home: home) }
        case "rename":
            try edit { try $0.renameAccessory(request.string("accessory"), to: request.string("newName"), home: home) }
        case "remove":
            let id = try accessoryID(request.string("accessory"), home: home)
            if driver.placement(of: id) != nil {
                throw RequestError(code: "not-allowed", message: "\(id) is a paired HomeKit device: accessory/unpair removes it (with everything behind its bridge)")
            }
            let removed = try edit { try $0.removeAccessory(request.string("accessory"), home: home) }
            return ["removed": .array(removed.map { .string($0.rawValue) })]
        case "identify":
            let id = try accessoryID(request.string("accessory"), home: home)
            return try await identify(id)
        case "pair":
            return try await pair(request, home: home)
        case "unpair":
            let id = try accessoryID(request.string("accessory"), home: home)
            guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway cannot pair") }
            do {
                try await pairing.unpair(id)
            } catch {
                throw RequestError(code: "device-error", message: "\(error)")
            }
            return ["accessory": .string(id.rawValue)]
        default:
            throw RequestError(code: "unknown-request", message: "unknown request \"accessory/\(verb)\"; known: assign-room, rename, remove, identify, pair, unpair")
        }
        return [:]
    }

    private func sceneRequest(_ object: String, _ verb: String, _ request: ManagementBody, home: String?) async throws -> [String: JSON] {
        switch (object, verb) {
        case ("service-group", "add"):
            let group = try edit { try $0.addServiceGroup(name: request.string("name"), home: home) }
            return ["group": .string(group.name), "id": .string(group.id.rawValue)]
        case ("service-group", "remove"):
            try edit { try $0.removeServiceGroup(request.string("group"), home: home) }
        case ("service-group", "rename"):
            try edit { try $0.renameServiceGroup(request.string("group"), to: request.string("newName"), home: home) }
        case ("service-group", "add-service"):
            let target = try named(.service, in: request, home: home)
            try edit { try $0.addService(accessory: target.accessory, service: target.iid, toGroup: request.string("group"), home: target.home) }
            return target.answer(key: "service")
        case ("service-group", "remove-service"):
            let target = try named(.service, in: request, home: home)
            try edit { try $0.removeService(accessory: target.accessory, service: target.iid, fromGroup: request.string("group"), home: target.home) }
            return target.answer(key: "service")
        case ("action-set", "add"):
            let actionSet = try edit { try $0.addActionSet(name: request.string("name"), home: home) }
            return ["actionSet": .string(actionSet.name), "id": .string(actionSet.id.rawValue)]
        case ("action-set", "remove"):
            try edit { try $0.removeActionSet(request.string("actionSet"), home: home) }
        case ("action-set", "rename"):
            try edit { try $0.renameActionSet(request.string("actionSet"), to: request.string("newName"), home: home) }
        case ("action-set", "add-action"):
            guard let value = request.raw["value"], value != .null else { throw RequestError.invalid("\"value\" is required") }
            let target = try named(.characteristic, in: request, home: home)
            let written = try labelledActionValue(value, target)
            try edit { try $0.addAction(toActionSet: request.string("actionSet"), accessory: target.accessory,
                                        characteristic: target.iid, value: written, home: target.home) }
            return target.answer(key: "characteristic")
        case ("action-set", "remove-action"):
            let target = try named(.characteristic, in: request, home: home)
            try edit { try $0.removeAction(fromActionSet: request.string("actionSet"), accessory: target.accessory,
                                           characteristic: target.iid, home: target.home) }
            return target.answer(key: "characteristic")
        case ("action-set", "execute"):
            let name = try request.string("actionSet")
            let (homeIndex, actionSet) = try lookUp { editor throws(EditError) in
                (try editor.homeIndex(home), try editor.actionSet(name, home: home))
            }
            guard let execution = await executeActionSet(actionSet.id, inHome: homes[homeIndex].id, cause: "request") else {
                throw RequestError.notFound("the action set is gone")
            }
            return ["actionSet": .string(execution.actionSet), "allOk": .bool(execution.ok), "results": .array(results(execution.outcomes))]
        case ("trigger", "add"):
            let trigger = try edit { try $0.addTrigger(name: request.string("name"), fireDate: request.date("fireDate"),
                                                       recurrence: request.recurrence(), actionSets: request.strings("actionSets"),
                                                       enabled: request.bool("enabled", default: true), home: home) }
            return ["trigger": .string(trigger.name), "id": .string(trigger.id.rawValue)]
        case ("trigger", "remove"):
            try edit { try $0.removeTrigger(request.string("trigger"), home: home) }
        case ("trigger", "enable"), ("trigger", "disable"):
            try edit { try $0.setTriggerEnabled(request.string("trigger"), verb == "enable", home: home) }
        default:
            throw RequestError(code: "unknown-request", message: "unknown request \"\(object)/\(verb)\"")
        }
        return [:]
    }

    // MARK: Applying edits

    /// Runs an edit on a copy of the homes; on success the copy becomes the layout (stored,
    /// announced, republished); on failure nothing changes.
    @discardableResult
    func edit<T>(_ change: (inout HomeEditor) throws -> T) throws -> T {
        var editor = HomeEditor(homes: homes)
        let result: T
        do {
            result = try change(&editor)
        } catch let error as EditError {
            throw RequestError(code: error.code.rawValue, message: error.message)
        }
        commit(editor.homes)
        return result
    }

    /// A look-up through the editor's rules, without a change.
    func lookUp<T>(_ find: (HomeEditor) throws(EditError) -> T) throws -> T {
        do {
            return try find(HomeEditor(homes: homes))
        } catch {
            throw RequestError(code: error.code.rawValue, message: error.message)
        }
    }

    /// Takes a new layout: index, store, `$events`, retained topics (old ones cleared).
    func commit(_ newHomes: [Home]) {
        let before = homes
        guard newHomes != before else { return }
        homes = newHomes
        reindex()
        layoutDidChange(saving: true)
        for event in LayoutChanges.events(from: before, to: homes) { announce(event.kind, event.fields) }
        republishAfterLayoutChange()
    }

    private func accessoryID(_ name: String, home: String?) throws -> AccessoryID {
        let location = try lookUp { editor throws(EditError) in try editor.accessoryLocation(name, home: home) }
        return homes[location.home].accessories[location.accessory].id
    }

    // MARK: Devices

    /// Identify: the accessory's Identify characteristic (Accessory Information) is written `true`.
    private func identify(_ id: AccessoryID) async throws -> [String: JSON] {
        guard let (_, accessory) = accessory(id) else { throw RequestError.notFound("no accessory \(id)") }
        let identify = accessory.services.first { $0.type == "accessory-information" }?.characteristic(ofType: "identify")
        guard let identify else { throw RequestError(code: "not-allowed", message: "\(accessory.name) has no Identify characteristic") }
        let outcome = await outcomes(of: .single(CommandMachine.Item(CharacteristicReference(accessoryID: id, iid: identify.iid), .write(.bool(true)))))
        let status = outcome.first?.outcome.status ?? .communicationFailure
        guard status == .success else {
            let message = if case .failed(let error)? = outcome.first?.outcome { error.message } else { status.name }
            throw RequestError(code: status == .timedOut ? "timeout" : "device-error", message: "\(accessory.name) did not identify: \(message)", status: status)
        }
        return ["accessory": .string(id.rawValue)]
    }

    private func pair(_ request: ManagementBody, home: String?) async throws -> [String: JSON] {
        guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway cannot pair") }
        let (host, port) = try pairingAddress(request)
        let code = try request.string("code")
        let room = try request.optionalString("room")
        if let room {
            do { _ = try HomeKitName(room) } catch { throw RequestError(code: "invalid-name", message: error.description) }
        }
        let homeName = try home.map { name in try lookUp { editor throws(EditError) in editor.homes[try editor.homeIndex(name)].name } }
        do {
            let ids = try await pairing.pair(host: host, port: port, code: code, placement: Placement(home: homeName, room: room))
            return ["accessories": .array(ids.map { .string($0.rawValue) })]
        } catch let error as PairingFailure {
            throw RequestError(code: error.code, message: error.message)
        }
    }
}

/// Pairing with HomeKit devices, as the gateway's management requests need it; the executable
/// provides it (the engine knows nothing of HAP).
public protocol PairingService: Sendable {
    /// Pairs with the accessory server at `host`:`port`, stores the pairing and starts using it;
    /// returns the ids its accessories get. Throws ``PairingFailure``.
    func pair(host: String, port: Int, code: String, placement: Placement) async throws -> [AccessoryID]
    /// Removes the pairing of the device that `accessory` belongs to, on the device and here.
    func unpair(_ accessory: AccessoryID) async throws
    /// Turns the accessory browser on or off; whether it is on now (a configuration may keep it on).
    func setBrowsing(_ on: Bool) -> Bool
    /// The accessory browser's rounds: the accessories found, not paired with this gateway;
    /// `[]` when it is turned off. One consumer.
    var browserUpdates: AsyncStream<[FoundAccessory]> { get }
}

/// Why pairing failed: a management error code (`device-error`, `invalid-request`, `timeout`)
/// and a message.
public struct PairingFailure: Error, CustomStringConvertible {
    public let code: String
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A request body's fields, checked: a missing or mistyped field is `invalid-request`.
struct ManagementBody {
    let raw: [String: JSON]

    init(_ raw: [String: JSON]) {
        self.raw = raw
    }

    func string(_ key: String) throws -> String {
        guard let value = raw[key]?.string, !value.isEmpty else { throw Gateway.RequestError.invalid("\"\(key)\" is required (a string)") }
        return value
    }

    func optionalString(_ key: String) throws -> String? {
        guard let value = raw[key], value != .null else { return nil }
        guard let text = value.string, !text.isEmpty else { throw Gateway.RequestError.invalid("\"\(key)\" must be a string") }
        return text
    }

    func int(_ key: String) throws -> Int {
        guard let number = raw[key], number.isNumber, let whole = number.int, let value = Int(exactly: whole) else {
            throw Gateway.RequestError.invalid("\"\(key)\" is required (a whole number)")
        }
        return value
    }

    func bool(_ key: String, default fallback: Bool) throws -> Bool {
        guard let value = raw[key], value != .null else { return fallback }
        guard case .bool(let flag) = value else { throw Gateway.RequestError.invalid("\"\(key)\" must be true or false") }
        return flag
    }

    func strings(_ key: String) throws -> [String] {
        guard let value = raw[key], value != .null else { return [] }
        guard let list = value.array?.compactMap(\.string), list.count == value.array?.count else { throw Gateway.RequestError.invalid("\"\(key)\" must be a list of names") }
        return list
    }

    /// An ISO 8601 date with an offset (`2026-11-21T07:00:00+01:00`, fractions allowed).
    func date(_ key: String) throws -> Date {
        let text = try string(key)
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: text) ?? fractional.date(from: text) else {
            throw Gateway.RequestError.invalid("\"\(key)\" must be an ISO 8601 date with an offset, as 2026-11-21T07:00:00+01:00")
        }
        return date
    }

    /// `null` or `{"unit": "minute" | "hour" | "day" | "week", "every": N}`.
    func recurrence() throws -> TimerTrigger.Recurrence? {
        guard let value = raw["recurrence"], value != .null else { return nil }
        guard let object = value.object, let unitName = object["unit"]?.string,
              let unit = TimerTrigger.Recurrence.Unit(rawValue: unitName) else {
            throw Gateway.RequestError.invalid("\"recurrence\" must be null or {\"unit\": \"minute\" | \"hour\" | \"day\" | \"week\", \"every\": N}")
        }
        guard let every = object["every"]?.int.flatMap({ Int(exactly: $0) }), object["every"]?.isNumber == true, every >= 1 else { throw Gateway.RequestError.invalid("\"recurrence.every\" must be a whole number of at least 1") }
        return TimerTrigger.Recurrence(unit: unit, every: every)
    }
}

import Accessories
import Foundation
import HomeModel
import Wire

/// Management's decisions, on values: a parsed ``ManagementRequest`` against the homes as they
/// are. A layout change gives the new homes and the answer; a device action gets the objects it
/// is about resolved. HomeKit's rules themselves are ``HomeEditor``'s; this resolves the names and
/// topics a request uses, and words the answers. No store, no MQTT, no devices: the ``Gateway``
/// carries out what it decides (`Gateway+Management.swift`).
struct Management {
    /// The homes a request is decided against.
    let homes: [Home]
    /// Their topics, for services and characteristics named by topic.
    let map: TopicMap
    /// The topic base (`homegate`), which a topic in a request may start with.
    let base: String
    /// Whether an accessory belongs to a paired HomeKit device (which only unpairing removes).
    let isPairedDevice: (AccessoryID) -> Bool

    /// A layout change decided: the homes after it and the request's answer.
    struct Outcome {
        let homes: [Home]
        let answer: [String: JSON]
    }

    /// A service or characteristic a request names, resolved.
    struct Target {
        let accessory: String
        let iid: Int
        /// The home to look it up in (the topic's, when named by topic).
        let home: String?
        let topic: String?

        /// The answer naming it both ways: `accessory`, the iid under `key`, and `topic`.
        func answer(key: String) -> [String: JSON] {
            ["accessory": .string(accessory), key: .int(iid), "topic": .string(topic)]
        }
    }

    /// Applies `change` to a copy of the homes. Nothing changes when it throws.
    /// - Throws: ``RequestError`` with HomeKit's rule that refused it (`name-in-use`,
    ///   `not-found`, `not-allowed`, ...).
    func apply(_ change: ManagementRequest.LayoutChange, home: String?) throws -> Outcome {
        var editor = HomeEditor(homes: homes)
        let answer = try translatingEditErrors { try apply(change, home: home, to: &editor) }
        return Outcome(homes: editor.homes, answer: answer)
    }

    /// The id of the accessory `name` (a name or an id) in `home`.
    func accessoryID(_ name: String, home: String?) throws -> AccessoryID {
        let location = try translatingEditErrors { try HomeEditor(homes: homes).accessoryLocation(name, home: home) }
        return homes[location.home].accessories[location.accessory].id
    }

    /// The action set `name` in `home`, with its home's id.
    func actionSet(_ name: String, home: String?) throws -> (home: HomeID, actionSet: ActionSetID) {
        try translatingEditErrors {
            let editor = HomeEditor(homes: homes)
            return (homes[try editor.homeIndex(home)].id, try editor.actionSet(name, home: home).id)
        }
    }

    /// Where a newly paired device's accessories go: `room` (a valid name; created if missing)
    /// in `home` (an existing home's name as it is spelled there; nil: the primary home).
    func placement(room: String?, home: String?) throws -> Placement {
        if let room {
            do { _ = try HomeKitName(room) } catch { throw RequestError(code: "invalid-name", message: error.description) }
        }
        let homeName = try home.map { name in try translatingEditErrors { homes[try HomeEditor(homes: homes).homeIndex(name)].name } }
        return Placement(home: homeName, room: room)
    }

    // MARK: Layout changes

    private func apply(_ change: ManagementRequest.LayoutChange, home: String?, to editor: inout HomeEditor) throws -> [String: JSON] {
        switch change {
        case .addHome(let name):
            let added = try editor.addHome(name: name)
            return ["home": .string(added.name), "id": .string(added.id.rawValue)]
        case .removeHome(let name): try editor.removeHome(name)
        case .renameHome(let name, let newName): try editor.renameHome(name, to: newName)
        case .setPrimaryHome(let name): try editor.setPrimaryHome(name)
        case .addRoom(let name):
            let room = try editor.addRoom(name: name, home: home)
            return ["room": .string(room.name), "id": .string(room.id.rawValue)]
        case .removeRoom(let name): try editor.removeRoom(name, home: home)
        case .renameRoom(let name, let newName): try editor.renameRoom(name, to: newName, home: home)
        case .addZone(let name):
            let zone = try editor.addZone(name: name, home: home)
            return ["zone": .string(zone.name), "id": .string(zone.id.rawValue)]
        case .removeZone(let name): try editor.removeZone(name, home: home)
        case .renameZone(let name, let newName): try editor.renameZone(name, to: newName, home: home)
        case .addRoomToZone(let room, let zone): try editor.addRoom(room, toZone: zone, home: home)
        case .removeRoomFromZone(let room, let zone): try editor.removeRoom(room, fromZone: zone, home: home)
        case .assignRoom(let accessory, let room): try editor.assignAccessory(accessory, toRoom: room, home: home)
        case .renameAccessory(let accessory, let newName): try editor.renameAccessory(accessory, to: newName, home: home)
        case .removeAccessory(let accessory):
            return try removeAccessory(accessory, home: home, from: &editor)
        case .renameService(let name, let newName):
            let target = try resolve(name, .service, home: home)
            try editor.renameService(accessory: target.accessory, service: target.iid, to: newName, home: target.home)
        default:
            return try applySceneChange(change, home: home, to: &editor)
        }
        return [:]
    }

    private func applySceneChange(_ change: ManagementRequest.LayoutChange, home: String?, to editor: inout HomeEditor) throws -> [String: JSON] {
        switch change {
        case .addServiceGroup(let name):
            let group = try editor.addServiceGroup(name: name, home: home)
            return ["group": .string(group.name), "id": .string(group.id.rawValue)]
        case .removeServiceGroup(let name): try editor.removeServiceGroup(name, home: home)
        case .renameServiceGroup(let name, let newName): try editor.renameServiceGroup(name, to: newName, home: home)
        case .addServiceToGroup(let name, let group):
            let target = try resolve(name, .service, home: home)
            try editor.addService(accessory: target.accessory, service: target.iid, toGroup: group, home: target.home)
            return target.answer(key: "service")
        case .removeServiceFromGroup(let name, let group):
            let target = try resolve(name, .service, home: home)
            try editor.removeService(accessory: target.accessory, service: target.iid, fromGroup: group, home: target.home)
            return target.answer(key: "service")
        case .addActionSet(let name):
            let actionSet = try editor.addActionSet(name: name, home: home)
            return ["actionSet": .string(actionSet.name), "id": .string(actionSet.id.rawValue)]
        case .removeActionSet(let name): try editor.removeActionSet(name, home: home)
        case .renameActionSet(let name, let newName): try editor.renameActionSet(name, to: newName, home: home)
        case .addAction(let actionSet, let name, let value):
            let target = try resolve(name, .characteristic, home: home)
            try editor.addAction(toActionSet: actionSet, accessory: target.accessory, characteristic: target.iid,
                                 value: try labelledActionValue(value, target), home: target.home)
            return target.answer(key: "characteristic")
        case .removeAction(let actionSet, let name):
            let target = try resolve(name, .characteristic, home: home)
            try editor.removeAction(fromActionSet: actionSet, accessory: target.accessory, characteristic: target.iid, home: target.home)
            return target.answer(key: "characteristic")
        case .addTrigger(let fields):
            let trigger = try editor.addTrigger(name: fields.name, fireDate: fields.fireDate, recurrence: fields.recurrence,
                                                actionSets: fields.actionSets, enabled: fields.enabled, home: home)
            return ["trigger": .string(trigger.name), "id": .string(trigger.id.rawValue)]
        case .removeTrigger(let name): try editor.removeTrigger(name, home: home)
        case .setTriggerEnabled(let name, let enabled): try editor.setTriggerEnabled(name, enabled, home: home)
        default: preconditionFailure("\(change) is not a scene change")
        }
        return [:]
    }

    /// An accessory of the simulator or the file goes; a paired device's accessories go only
    /// with its pairing (`accessory/unpair`).
    private func removeAccessory(_ name: String, home: String?, from editor: inout HomeEditor) throws -> [String: JSON] {
        let id = try accessoryID(name, home: home)
        if isPairedDevice(id) {
            throw RequestError(code: "not-allowed", message: "\(id) is a paired HomeKit device: accessory/unpair removes it (with everything behind its bridge)")
        }
        let removed = try editor.removeAccessory(name, home: home)
        return ["removed": .array(removed.map { .string($0.rawValue) })]
    }

    // MARK: Names and topics

    /// The service or characteristic `name` refers to: the one resolver of every request
    /// (management, history, the simulator's controls).
    func resolve(_ name: ManagementRequest.TargetName, _ kind: ManagementRequest.TargetKind, home: String?) throws -> Target {
        switch name {
        case .instance(let accessory, let iid):
            return Target(accessory: accessory, iid: iid, home: home, topic: topic(ofAccessory: accessory, iid: iid, kind))
        case .topic(let text):
            return try resolve(topic: text, kind)
        case .type(let accessory, let service, let type):
            let iid = try characteristic(ofType: type, in: service, on: accessory)
            return Target(accessory: accessory, iid: iid, home: home, topic: topic(ofAccessory: accessory, iid: iid, .characteristic))
        }
    }

    /// The instance id of the first visible characteristic of `type` on accessory `id`, in
    /// `service` when given.
    private func characteristic(ofType type: String, in service: ManagementRequest.ServiceName?, on id: String) throws -> Int {
        guard let accessory = homes.lazy.flatMap(\.accessories).first(where: { $0.id.rawValue == id }) else {
            throw RequestError.notFound("no accessory \"\(id)\"")
        }
        let candidates = accessory.visibleServices.filter { candidate in
            switch service {
            case .iid(let iid)?: candidate.iid == iid
            case .name(let name)?: candidate.type == name || candidate.name == name
            case nil: true
            }
        }
        guard let characteristic = candidates.lazy.compactMap({ $0.characteristic(ofType: type) }).first else {
            throw RequestError.notFound("\(accessory.name) has no characteristic \"\(type)\"")
        }
        return characteristic.iid
    }

    private func resolve(topic text: String, _ kind: ManagementRequest.TargetKind) throws -> Target {
        var path = Substring(text.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        if path.hasPrefix(base + "/") { path = path.dropFirst(base.count + 1) }
        let levels = path.split(separator: "/", omittingEmptySubsequences: false)
        switch (map.resolve(levels), kind) {
        case (.found(.characteristic(let homeID, let reference)), .characteristic):
            return Target(accessory: reference.accessoryID.rawValue, iid: reference.iid, home: homeID.rawValue,
                          topic: map.topic(of: .characteristic(homeID, reference)))
        case (.found(.service(let homeID, let reference)), .service):
            return Target(accessory: reference.accessoryID.rawValue, iid: reference.serviceIID, home: homeID.rawValue,
                          topic: map.topic(of: .service(homeID, reference)))
        case (.found, _):
            throw RequestError.invalid("\"\(kind.rawValue)\": \(text) is not a \(kind.rawValue)'s topic")
        case (.unresolved(let index, let segment), _):
            throw RequestError.notFound("\"\(kind.rawValue)\": " + map.describeUnresolved(levels: levels, index: index, segment: segment, base: base))
        }
    }

    /// The topic of an accessory's service or characteristic named by its id and iid (none for a name).
    private func topic(ofAccessory accessory: String, iid: Int, _ kind: ManagementRequest.TargetKind) -> String? {
        let id = AccessoryID(accessory)
        guard let home = homes.first(where: { home in home.accessories.contains { $0.id == id } }) else { return nil }
        switch kind {
        case .characteristic: return map.topic(of: .characteristic(home.id, CharacteristicReference(accessoryID: id, iid: iid)))
        case .service: return map.topic(of: .service(home.id, ServiceReference(accessoryID: id, serviceIID: iid)))
        }
    }

    /// An action's value may be a label of the characteristic's valid values (`"secured"`).
    private func labelledActionValue(_ value: JSON, _ target: Target) throws -> JSON {
        let id = AccessoryID(target.accessory)
        guard case .string(let text) = value,
              let accessory = homes.lazy.flatMap(\.accessories).first(where: { $0.id == id }),
              let (_, characteristic) = accessory.characteristic(target.iid),
              let labels = ValueLabels.of(characteristic) else { return value }
        guard let number = labels.value(named: text) else {
            if characteristic.format == .string { return value }
            throw RequestError(code: "invalid-value", message: "\(characteristic.displayName) has no label \"\(text)\"; it takes \(labels.listing)")
        }
        return characteristic.format == .float ? .double(number) : .int(Int64(number))
    }

    /// HomeKit's refusals as request errors, with the same code.
    private func translatingEditErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as EditError {
            throw RequestError(code: error.code.rawValue, message: error.message)
        }
    }
}

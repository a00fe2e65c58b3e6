import struct Foundation.Date
import Wire

/// `service-group/...`, `action-set/...` (but `execute`) and `trigger/...`.
extension HomeEditor {
    // MARK: Service groups

    @discardableResult
    public mutating func addServiceGroup(name: String, home: String?) throws(EditError) -> ServiceGroup {
        let index = try homeIndex(home)
        let text = try validName(name, in: index, for: nil)
        let taken = Set(homes[index].serviceGroups.map(\.id.rawValue))
        let group = ServiceGroup(id: ServiceGroupID(Self.newID(text, fallback: "group", taken: taken)), name: text)
        homes[index].serviceGroups.append(group)
        return group
    }

    public mutating func removeServiceGroup(_ group: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        homes[index].serviceGroups.remove(at: try groupIndex(group, in: index))
    }

    public mutating func renameServiceGroup(_ group: String, to newName: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let groupIndex = try groupIndex(group, in: index)
        homes[index].serviceGroups[groupIndex].name = try validName(newName, in: index, for: .serviceGroup(homes[index].serviceGroups[groupIndex].id))
    }

    /// Adds a service to a group. Hidden and information services: `not-allowed`; already in
    /// the group: `invalid-request`.
    public mutating func addService(accessory: String, service iid: Int, toGroup group: String, home: String?) throws(EditError) {
        let homeIndex = try homeIndex(home)
        let groupIndex = try groupIndex(group, in: homeIndex)
        let location = try accessoryLocation(accessory, in: homeIndex)
        _ = try visibleServiceIndex(iid, at: location, doing: "grouped")
        let target = homes[location.home].accessories[location.accessory]
        let reference = ServiceReference(accessoryID: target.id, serviceIID: iid)
        let groupName = homes[homeIndex].serviceGroups[groupIndex].name
        guard !homes[homeIndex].serviceGroups[groupIndex].services.contains(reference) else {
            throw .invalidRequest("service \(iid) of \"\(target.name)\" is already in the service group \"\(groupName)\"")
        }
        homes[homeIndex].serviceGroups[groupIndex].services.append(reference)
    }

    /// Takes a service out of a group. Not in it: `not-found`.
    public mutating func removeService(accessory: String, service iid: Int, fromGroup group: String, home: String?) throws(EditError) {
        let homeIndex = try homeIndex(home)
        let groupIndex = try groupIndex(group, in: homeIndex)
        let location = try accessoryLocation(accessory, in: homeIndex)
        let target = homes[location.home].accessories[location.accessory]
        let reference = ServiceReference(accessoryID: target.id, serviceIID: iid)
        guard let position = homes[homeIndex].serviceGroups[groupIndex].services.firstIndex(of: reference) else {
            throw .notFound("service \(iid) of \"\(target.name)\" is not in the service group \"\(homes[homeIndex].serviceGroups[groupIndex].name)\"")
        }
        homes[homeIndex].serviceGroups[groupIndex].services.remove(at: position)
    }

    // MARK: Action sets

    @discardableResult
    public mutating func addActionSet(name: String, home: String?) throws(EditError) -> ActionSet {
        let index = try homeIndex(home)
        let text = try validName(name, in: index, for: nil)
        let taken = Set(homes[index].actionSets.map(\.id.rawValue))
        let actionSet = ActionSet(id: ActionSetID(Self.newID(text, fallback: "action-set", taken: taken)), name: text)
        homes[index].actionSets.append(actionSet)
        return actionSet
    }

    /// Removes an action set; triggers forget it.
    public mutating func removeActionSet(_ actionSet: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let id = homes[index].actionSets.remove(at: try actionSetIndex(actionSet, in: index)).id
        for trigger in homes[index].triggers.indices {
            homes[index].triggers[trigger].actionSetIDs.removeAll { $0 == id }
        }
    }

    public mutating func renameActionSet(_ actionSet: String, to newName: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let setIndex = try actionSetIndex(actionSet, in: index)
        homes[index].actionSets[setIndex].name = try validName(newName, in: index, for: .actionSet(homes[index].actionSets[setIndex].id))
    }

    /// Adds a write to an action set. The characteristic must be writable (else `not-allowed`,
    /// `brightness is read-only`) and of a service with topics (else `not-allowed`); the value
    /// (a JSON scalar, as the request gives it) must fit its format, bounds, step, valid
    /// values and length (else `invalid-request`, saying why). A second action for the same
    /// characteristic replaces the first, in its place (as HomeKit).
    public mutating func addAction(toActionSet actionSet: String, accessory: String, characteristic iid: Int, value: JSON, home: String?) throws(EditError) {
        let homeIndex = try homeIndex(home)
        let setIndex = try actionSetIndex(actionSet, in: homeIndex)
        let location = try accessoryLocation(accessory, in: homeIndex)
        let target = homes[location.home].accessories[location.accessory]
        guard let (service, characteristic) = target.characteristic(iid) else {
            throw .notFound("\"\(target.name)\" (\(target.id)) has no characteristic with iid \(iid)")
        }
        try Self.checkVisible(service, of: target, doing: "written by an action set")
        let written: Value
        do throws(StatusError) {
            guard characteristic.isWritable else { throw StatusError(.readOnly, "\(characteristic.displayName) is read-only") }
            written = try Value.parse(json: value, format: characteristic.format, name: characteristic.displayName)
            try characteristic.validateWrite(written)
        } catch {
            throw error.status == .readOnly ? .notAllowed(error.message) : .invalidRequest(error.message)
        }
        let action = ActionSet.Action(characteristic: CharacteristicReference(accessoryID: target.id, iid: iid), value: written)
        if let existing = homes[homeIndex].actionSets[setIndex].actions.firstIndex(where: { $0.characteristic == action.characteristic }) {
            homes[homeIndex].actionSets[setIndex].actions[existing] = action
        } else {
            homes[homeIndex].actionSets[setIndex].actions.append(action)
        }
    }

    /// Removes the action on a characteristic from an action set. None: `not-found`.
    public mutating func removeAction(fromActionSet actionSet: String, accessory: String, characteristic iid: Int, home: String?) throws(EditError) {
        let homeIndex = try homeIndex(home)
        let setIndex = try actionSetIndex(actionSet, in: homeIndex)
        let location = try accessoryLocation(accessory, in: homeIndex)
        let target = homes[location.home].accessories[location.accessory]
        let reference = CharacteristicReference(accessoryID: target.id, iid: iid)
        guard let position = homes[homeIndex].actionSets[setIndex].actions.firstIndex(where: { $0.characteristic == reference }) else {
            throw .notFound("the action set \"\(homes[homeIndex].actionSets[setIndex].name)\" has no action on characteristic \(iid) of \"\(target.name)\"")
        }
        homes[homeIndex].actionSets[setIndex].actions.remove(at: position)
    }

    // MARK: Triggers

    /// Adds a timer trigger running `actionSets` (named as requests name them; each must exist,
    /// else `not-found`; a set named twice runs once) at `fireDate`, then every `recurrence`
    /// (`every` at least 1, else `invalid-request`).
    @discardableResult
    public mutating func addTrigger(name: String, fireDate: Date, recurrence: TimerTrigger.Recurrence?, actionSets: [String], enabled: Bool,
                                    home: String?) throws(EditError) -> TimerTrigger {
        let index = try homeIndex(home)
        let text = try validName(name, in: index, for: nil)
        if let recurrence, recurrence.every < 1 {
            throw .invalidRequest("a recurrence must repeat every 1 \(recurrence.unit.rawValue) or more, got every \(recurrence.every)")
        }
        var ids: [ActionSetID] = []
        for name in actionSets {
            let id = homes[index].actionSets[try actionSetIndex(name, in: index)].id
            if !ids.contains(id) { ids.append(id) }
        }
        let taken = Set(homes[index].triggers.map(\.id.rawValue))
        let trigger = TimerTrigger(id: TriggerID(Self.newID(text, fallback: "trigger", taken: taken)), name: text, fireDate: fireDate,
                                   recurrence: recurrence, actionSetIDs: ids, isEnabled: enabled)
        homes[index].triggers.append(trigger)
        return trigger
    }

    public mutating func removeTrigger(_ trigger: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        homes[index].triggers.remove(at: try triggerIndex(trigger, in: index))
    }

    /// Renames a trigger (not in the contract's table; here for completeness).
    public mutating func renameTrigger(_ trigger: String, to newName: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let triggerIndex = try triggerIndex(trigger, in: index)
        homes[index].triggers[triggerIndex].name = try validName(newName, in: index, for: .trigger(homes[index].triggers[triggerIndex].id))
    }

    /// Enables or disables a trigger; already so: nothing changes.
    public mutating func setTriggerEnabled(_ trigger: String, _ enabled: Bool, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        homes[index].triggers[try triggerIndex(trigger, in: index)].isEnabled = enabled
    }
}

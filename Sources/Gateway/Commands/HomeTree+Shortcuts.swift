import HomeModel
import Wire

/// A shortcut of section 7 read against the tree, the first step of `Gateway+Shortcuts.swift`:
/// the home, then the action set, or the group's or zone's services with the characteristic
/// and each value checked for it. Names compare like every segment (case, `-`, `_`, spaces,
/// apostrophes ignored).
extension HomeTree {
    /// What a shortcut asks for.
    enum ShortcutPlan {
        /// Run the action set of the home (`$action-sets/<name>/execute`).
        case actionSet(home: HomeID, ActionSet)
        /// The writes of a group or zone shortcut: those to make, those refused before they had a
        /// value (listed in the one acknowledgement), and the acknowledgement's `group` or `zone`.
        case writes([CommandMachine.Item], refused: [CommandMachine.Result], extra: [String: JSON])
    }

    /// The plan for `shortcut`; a shortcut that names nothing is refused, saying what is missing.
    func plan(for shortcut: Inbound.Shortcut) throws(StatusError) -> ShortcutPlan {
        guard case .found(.home(let homeID)) = map.resolve([shortcut.home]), let home = homes.first(where: { $0.id == homeID }) else {
            throw StatusError(.noSuchResource, "no home \"\(shortcut.home)\" under \(base)")
        }
        switch shortcut.target {
        case .actionSet(let name):
            guard let actionSet = home.actionSets.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
                throw StatusError(.noSuchResource, "no action set \"\(name)\" in \(home.name)")
            }
            return .actionSet(home: home.id, actionSet)
        case .group(let name, let characteristic):
            guard let group = home.serviceGroups.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
                throw StatusError(.noSuchResource, "no service group \"\(name)\" in \(home.name)")
            }
            let services = group.services.compactMap { reference in
                home.accessory(reference.accessoryID).flatMap { accessory in accessory.service(reference.serviceIID).map { (accessory, $0) } }
            }
            return try writes(to: services, type: characteristic, what: "the group \(group.name)", body: shortcut.body, extra: ["group": .string(group.name)])
        case .zone(let name, let serviceType, let characteristic):
            guard let zone = home.zones.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
                throw StatusError(.noSuchResource, "no zone \"\(name)\" in \(home.name)")
            }
            let rooms = Set(zone.roomIDs)
            let services = home.accessories.filter { accessory in accessory.roomID.map(rooms.contains) ?? false }.flatMap { accessory in
                accessory.visibleServices.filter { Slug.canonical($0.type) == Slug.canonical(serviceType) }.map { (accessory, $0) }
            }
            return try writes(to: services, type: characteristic, what: "the zone \(zone.name)", body: shortcut.body, extra: ["zone": .string(zone.name)])
        case .malformed(let path):
            throw StatusError(.noSuchResource, "\(path): expected <home>/$action-sets/<name>/execute, <home>/$groups/<group>/<characteristic>/set or <home>/$zones/<zone>/<service-type>/<characteristic>/set")
        }
    }

    /// The payload written to the characteristic of `type` in each service that has it; a value
    /// that does not suit a characteristic is refused there, never reaching its device.
    private func writes(to services: [(Accessory, Service)], type: String, what: String, body: Inbound.Body, extra: [String: JSON]) throws(StatusError) -> ShortcutPlan {
        var writes: [CommandMachine.Item] = []
        var refused: [CommandMachine.Result] = []
        for (accessory, service) in services {
            guard let characteristic = service.characteristics.first(where: { Slug.canonical($0.type) == Slug.canonical(type) }) else { continue }
            let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
            do {
                writes.append(CommandMachine.Item(reference, .write(try CommandValue.read(body, for: characteristic))))
            } catch {
                // Refused before it had a value: the acknowledgement lists it by characteristic and status.
                refused.append(CommandMachine.Result(item: CommandMachine.Item(reference, .write(.bool(false))), outcome: .failed(error)))
            }
        }
        guard !writes.isEmpty || !refused.isEmpty else {
            throw StatusError(.noSuchResource, "no service in \(what) has a characteristic \"\(type)\"")
        }
        return .writes(writes, refused: refused, extra: extra)
    }
}

import Foundation
import HomeModel
import MQTT
import Wire

/// The shortcuts of section 7, answered like a set (on `<topic>/result` and the Response Topic)
/// with one aggregated acknowledgement:
/// - `<base>/<home>/$action-sets/<name>/execute`: the action set's writes, together;
/// - `<base>/<home>/$groups/<group>/<characteristic>/set`: every service of the group that has
///   the characteristic;
/// - `<base>/<home>/$zones/<zone>/<service-type>/<characteristic>/set`: every service of that
///   type in the zone's rooms.
/// Names in these topics compare like every segment (case, `-`, `_`, spaces, apostrophes ignored).
extension Gateway {
    /// A shortcut arrived.
    func handle(_ shortcut: Inbound.Shortcut, from message: Message) {
        let reply = Reply(to: message, id: shortcut.body.id)
        guard case .found(.home(let homeID)) = tree.map.resolve([shortcut.home]),
              let home = tree.homes.first(where: { $0.id == homeID }) else {
            acknowledge(reply, failure: .noSuchResource, "no home \"\(shortcut.home)\" under \(base)")
            return
        }
        switch shortcut.target {
        case .actionSet(let name):
            executeShortcut(home: home, name: name, reply: reply)
        case .group(let name, let characteristic):
            groupShortcut(home: home, group: name, type: characteristic, body: shortcut.body, reply: reply)
        case .zone(let name, let serviceType, let characteristic):
            zoneShortcut(home: home, zone: name, serviceType: serviceType, type: characteristic, body: shortcut.body, reply: reply)
        case .malformed(let path):
            acknowledge(reply, failure: .noSuchResource, "\(path): expected <home>/$action-sets/<name>/execute, <home>/$groups/<group>/<characteristic>/set or <home>/$zones/<zone>/<service-type>/<characteristic>/set")
        }
    }

    private func executeShortcut(home: Home, name: Substring, reply: Reply) {
        guard let actionSet = home.actionSets.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
            acknowledge(reply, failure: .noSuchResource, "no action set \"\(name)\" in \(home.name)")
            return
        }
        work.start { [weak self] in
            guard let self else { return }
            guard let execution = await self.executeActionSet(actionSet.id, inHome: home.id, cause: "shortcut") else {
                await self.acknowledge(reply, failure: .noSuchResource, "the action set \(actionSet.name) is gone")
                return
            }
            await self.acknowledgeAll(reply, execution.outcomes, extra: ["actionSet": .string(actionSet.name)])
        }
    }

    private func groupShortcut(home: Home, group name: Substring, type: String, body: Inbound.Body, reply: Reply) {
        guard let group = home.serviceGroups.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
            acknowledge(reply, failure: .noSuchResource, "no service group \"\(name)\" in \(home.name)")
            return
        }
        let services = group.services.compactMap { reference in
            home.accessory(reference.accessoryID).flatMap { accessory in accessory.service(reference.serviceIID).map { (accessory, $0) } }
        }
        writeServices(services, type: type, what: "the group \(group.name)", body: body, reply: reply, extra: ["group": .string(group.name)])
    }

    private func zoneShortcut(home: Home, zone name: Substring, serviceType: String, type: String, body: Inbound.Body, reply: Reply) {
        guard let zone = home.zones.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
            acknowledge(reply, failure: .noSuchResource, "no zone \"\(name)\" in \(home.name)")
            return
        }
        let rooms = Set(zone.roomIDs)
        let services = home.accessories.filter { accessory in accessory.roomID.map(rooms.contains) ?? false }.flatMap { accessory in
            accessory.visibleServices.filter { Slug.canonical($0.type) == Slug.canonical(serviceType) }.map { (accessory, $0) }
        }
        writeServices(services, type: type, what: "the zone \(zone.name)", body: body, reply: reply, extra: ["zone": .string(zone.name)])
    }

    /// Writes the payload to the characteristic of `type` in each service that has it; values
    /// that do not suit a characteristic fail there without reaching its device. One
    /// acknowledgement lists every outcome.
    private func writeServices(_ services: [(Accessory, Service)], type: String, what: String, body: Inbound.Body, reply: Reply, extra: [String: JSON]) {
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
            acknowledge(reply, failure: .noSuchResource, "no service in \(what) has a characteristic \"\(type)\"")
            return
        }
        guard refused.isEmpty else {
            // Some values are refused: the others run, and one acknowledgement lists them all.
            work.start { [weak self, writes, refused] in
                guard let self else { return }
                let outcomes = await self.outcomes(of: .each(writes))
                await self.acknowledgeAll(reply, outcomes + refused, extra: extra)
            }
            return
        }
        submit(.each(writes), to: .reply(reply, .aggregated(extra)))
    }

    /// The aggregated acknowledgement: `ok` only if every write succeeded; `results` per write.
    private func acknowledgeAll(_ reply: Reply, _ outcomes: [CommandMachine.Result], extra: [String: JSON]) {
        let (body, status) = tree.aggregatedAcknowledgement(outcomes, extra: extra)
        acknowledge(reply, body, status: status)
    }
}

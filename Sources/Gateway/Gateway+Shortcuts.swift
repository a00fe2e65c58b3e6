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
    /// Whether `levels` (after the base) is a shortcut; if so it is handled.
    func handleShortcut(levels: [Substring], message: Message) -> Bool {
        guard levels.count >= 4, ["$action-sets", "$groups", "$zones"].contains(levels[1]) else { return false }
        let body = JSON.body(message.payload)
        let reply = Reply(to: message, id: body?["id"])
        if message.retain { send(message.topic.string, [], retain: true) } // runs once
        guard case .found(.home(let homeID)) = map.resolve([levels[0]]),
              let home = homes.first(where: { $0.id == homeID }) else {
            acknowledge(reply, failure: .noSuchResource, "no home \"\(levels[0])\" under \(base)")
            return true
        }
        switch (levels[1], levels.count, levels.last) {
        case ("$action-sets", 4, "execute"):
            executeShortcut(home: home, name: levels[2], reply: reply)
        case ("$groups", 5, "set"):
            groupShortcut(home: home, group: levels[2], type: String(levels[3]), message: message, body: body, reply: reply)
        case ("$zones", 6, "set"):
            zoneShortcut(home: home, zone: levels[2], serviceType: String(levels[3]), type: String(levels[4]), message: message, body: body, reply: reply)
        default:
            acknowledge(reply, failure: .noSuchResource, "\(levels.joined(separator: "/")): expected <home>/$action-sets/<name>/execute, <home>/$groups/<group>/<characteristic>/set or <home>/$zones/<zone>/<service-type>/<characteristic>/set")
        }
        return true
    }

    private func executeShortcut(home: Home, name: Substring, reply: Reply) {
        guard let actionSet = home.actionSets.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
            acknowledge(reply, failure: .noSuchResource, "no action set \"\(name)\" in \(home.name)")
            return
        }
        spawn {
            guard let execution = await self.executeActionSet(actionSet.id, inHome: home.id, cause: "shortcut") else {
                await self.acknowledge(reply, failure: .noSuchResource, "the action set \(actionSet.name) is gone")
                return
            }
            await self.acknowledgeAll(reply, execution.outcomes, extra: ["actionSet": .string(actionSet.name)])
        }
    }

    private func groupShortcut(home: Home, group name: Substring, type: String, message: Message, body: [String: JSON]?, reply: Reply) {
        guard let group = home.serviceGroups.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
            acknowledge(reply, failure: .noSuchResource, "no service group \"\(name)\" in \(home.name)")
            return
        }
        let services = group.services.compactMap { reference in
            home.accessory(reference.accessoryID).flatMap { accessory in accessory.service(reference.serviceIID).map { (accessory, $0) } }
        }
        writeServices(services, type: type, what: "the group \(group.name)", message: message, body: body, reply: reply, extra: ["group": .string(group.name)])
    }

    private func zoneShortcut(home: Home, zone name: Substring, serviceType: String, type: String, message: Message, body: [String: JSON]?, reply: Reply) {
        guard let zone = home.zones.first(where: { Slug.canonical($0.name) == Slug.canonical(name) }) else {
            acknowledge(reply, failure: .noSuchResource, "no zone \"\(name)\" in \(home.name)")
            return
        }
        let rooms = Set(zone.roomIDs)
        let services = home.accessories.filter { accessory in accessory.roomID.map(rooms.contains) ?? false }.flatMap { accessory in
            accessory.visibleServices.filter { Slug.canonical($0.type) == Slug.canonical(serviceType) }.map { (accessory, $0) }
        }
        writeServices(services, type: type, what: "the zone \(zone.name)", message: message, body: body, reply: reply, extra: ["zone": .string(zone.name)])
    }

    /// Writes the payload to the characteristic of `type` in each service that has it; values
    /// that do not suit a characteristic fail there without reaching its device.
    private func writeServices(_ services: [(Accessory, Service)], type: String, what: String, message: Message, body: [String: JSON]?,
                               reply: Reply, extra: [String: JSON]) {
        var writes: [(CharacteristicReference, Value)] = []
        var refused: [WriteOutcome] = []
        for (accessory, service) in services {
            guard let characteristic = service.characteristics.first(where: { Slug.canonical($0.type) == Slug.canonical(type) }) else { continue }
            let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
            do {
                writes.append((reference, try shortcutValue(message.payload, body: body, for: characteristic)))
            } catch {
                refused.append(WriteOutcome(reference: reference, value: .bool(false), status: error.status, message: error.message))
            }
        }
        guard !writes.isEmpty || !refused.isEmpty else {
            acknowledge(reply, failure: .noSuchResource, "no service in \(what) has a characteristic \"\(type)\"")
            return
        }
        spawn {
            let outcomes = await self.writeTogether(writes) + refused
            await self.acknowledgeAll(reply, outcomes, extra: extra)
        }
    }

    private func shortcutValue(_ payload: [UInt8], body: [String: JSON]?, for characteristic: Characteristic) throws(StatusError) -> Value {
        guard characteristic.isWritable else { throw StatusError(.readOnly, "\(characteristic.displayName) is read-only") }
        let value: Value
        if let body {
            guard let raw = body["value"] else { throw StatusError(.invalidValue, "the JSON object has no \"value\"") }
            value = try Value.parse(json: raw, format: characteristic.format, name: characteristic.displayName)
        } else {
            value = try Value.parse(payload: String(decoding: payload, as: UTF8.self), format: characteristic.format, name: characteristic.displayName)
        }
        try characteristic.validate(value)
        return value
    }

    /// The aggregated acknowledgement: `ok` only if every write succeeded; `results` per write.
    private func acknowledgeAll(_ reply: Reply, _ outcomes: [WriteOutcome], extra: [String: JSON]) {
        let failure = outcomes.first { !$0.ok }?.status ?? .success
        acknowledge(reply, aggregatedAcknowledgement(outcomes, extra: extra), status: failure)
    }
}

import Accessories
import Foundation
import HomeModel
import HomeStore
import Wire

/// `$layout` (the homes' structure, retained, in parts: ``LayoutDocument``; republished at most
/// about once a second while structure changes keep coming), `$meta` (per accessory, retained),
/// `$events` (one message per change, not retained), and layout changes from a reloaded
/// configuration.
extension Gateway {
    /// Marks the layout changed: `$layout` follows within the layout interval; `saving` also
    /// stores it.
    func layoutDidChange(saving: Bool) {
        retained.layoutChanged()
        if saving { triggersChanged() }
        guard saving, store != nil else { return }
        let layout = LayoutDigest(homes)
        guard layout != savedLayout else { return }
        storeWriter.saveLayout(homes, previous: savedLayout)
        savedLayout = layout
    }

    /// Commits a change of the layout, the one way every change does (a management request, a
    /// reloaded configuration, a device's new structure, accessories removed), in this order:
    /// the topic map made again (unless the caller already did: `reindexed`), the layout marked
    /// changed and stored, one `$events` message per change since `before`, then `announcing`
    /// (what the change adds to `$events`), then the retained topics of the new layout
    /// (old ones cleared).
    func commitLayoutChange(from before: [Home], reindexed: Bool = false, announcing: () -> Void = {}) {
        if !reindexed { reindex() }
        layoutDidChange(saving: true)
        for event in LayoutChanges.events(from: before, to: homes) { announce(event.kind, event.fields) }
        announcing()
        republishAfterLayoutChange()
    }

    /// Publishes `$layout` whenever it changed, at most once per layout interval: the parts
    /// that changed, and clears those no longer there.
    func publishLayoutWhenChanged() async throws {
        while true {
            try await Task.sleep(for: configuration.layoutInterval)
            metrics.recordQueueDepth(machine.waitingCount)
            guard retained.takeLayoutChange() else { continue }
            carry(retained.assertLayout(LayoutDocument(base: base, map: map, options: policy.options).messages(for: homes)))
        }
    }

    /// Announces a change on `$events`.
    func announce(_ event: String, _ fields: [String: JSON]) {
        var body = fields
        body["event"] = .string(event)
        send(TopicGrammar.topic(base, .events), JSON.object(body).encoded(), retain: false)
    }

    /// Applies a new layout (a reloaded configuration merged with the store): renames and moves
    /// change topics; old retained topics are cleared and values republished on the new ones;
    /// accessories gone from `newHomes` leave (their topics cleared). An accessory new in
    /// `newHomes` joins when the simulator has it (give the simulator the reloaded devices first,
    /// ``Accessories/Simulator/replaceDevices(_:)``), with the device's structure, values and
    /// reachability, and its topics and `$layout` are published like the others'.
    /// - Returns: the accessories of `newHomes` left out because no device is known for them (they
    ///   appear at the next start).
    @discardableResult
    public func reload(homes newHomes: [Home]) -> Set<AccessoryID> {
        let before = homes
        var merged = newHomes
        var leftOut: Set<AccessoryID> = []
        for homeIndex in merged.indices {
            // Devices keep their structure, values and reachability; the new name and room are the layout's.
            let home = merged[homeIndex]
            merged[homeIndex].accessories = home.accessories.compactMap { accessory in
                guard var device = self.accessory(accessory.id)?.accessory ?? joining(accessory, home: home) else {
                    logger.notice("accessory \(accessory.id) is new in the configuration; it appears at the next start")
                    leftOut.insert(accessory.id)
                    return nil
                }
                device.name = accessory.name
                device.roomID = accessory.roomID
                return device
            }
        }
        homes = merged
        commitLayoutChange(from: before)
        logger.info("configuration reloaded")
        return leftOut
    }

    /// A simulated accessory new in a reloaded layout, as the simulator has it; nil if the
    /// simulator does not have it.
    private func joining(_ accessory: Accessory, home: Home) -> Accessory? {
        guard let device = simulator?.accessory(accessory.id) else { return nil }
        logger.info("accessory \(accessory.id) (\(accessory.name)) is new in the configuration; it joins \(home.name), \(home.room(of: accessory).name)")
        return device
    }

    // MARK: Payloads

    /// `<accessory>/$meta`: what the accessory is (``metaObject(_:index:)``), and `services`:
    /// per service topic segment its `type` and `characteristics`, per characteristic topic
    /// segment its metadata (as `<characteristic>/$meta` has it), every characteristic with a
    /// topic that the options do not exclude. One message describes what a person needs to drive
    /// the accessory; `characteristicMeta` holds each kind's metadata once encoded, shared.
    func metaPayload(_ accessory: Accessory, in home: Home, index: HomeIndex, characteristicMeta: inout [ObjectIdentifier: [UInt8]]) -> [UInt8] {
        let object = metaObject(accessory, index: index)
        // `services` is the last key in sorted order: it follows the others before the closing brace.
        assert(object.keys.allSatisfy { $0 < "services" }, "a key of an accessory's $meta sorts after services")
        var bytes = JSON.object(object).encoded()
        bytes.removeLast()
        bytes.append(contentsOf: #","services":{"#.utf8)
        var firstService = true
        for (segment, service, serviceTopic) in serviceSegments(of: accessory, home: home.id) {
            if !firstService { bytes.append(UInt8(ascii: ",")) }
            firstService = false
            bytes.append(contentsOf: JSON.string(segment).encoded())
            bytes.append(contentsOf: #":{"characteristics":{"#.utf8)
            var firstCharacteristic = true
            for characteristic in service.characteristics {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let topic = map.topic(of: .characteristic(home.id, reference)), !policy.rule(reference).excluded else { continue }
                let key = ObjectIdentifier(characteristic.definition)
                let meta = characteristicMeta[key] ?? LayoutDocument.characteristicMeta(characteristic)
                characteristicMeta[key] = meta
                if !firstCharacteristic { bytes.append(UInt8(ascii: ",")) }
                firstCharacteristic = false
                bytes.append(contentsOf: JSON.string(String(topic.dropFirst(serviceTopic.count + 1))).encoded())
                bytes.append(UInt8(ascii: ":"))
                bytes.append(contentsOf: meta)
            }
            bytes.append(contentsOf: #"},"type":"#.utf8)
            bytes.append(contentsOf: JSON.string(service.type).encoded())
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(contentsOf: "}}".utf8)
        return bytes
    }

    /// The accessory's services that have topics, by their topic segment, in segment order.
    private func serviceSegments(of accessory: Accessory, home: HomeID) -> [(segment: String, service: Service, topic: String)] {
        guard let accessoryTopic = map.topic(of: .accessory(home, accessory.id)) else { return [] }
        return accessory.visibleServices.compactMap { service -> (String, Service, String)? in
            guard let topic = map.topic(of: .service(home, ServiceReference(accessoryID: accessory.id, serviceIID: service.iid))) else { return nil }
            return (String(topic.dropFirst(accessoryTopic.count + 1)), service, topic)
        }.sorted { $0.0 < $1.0 }
    }

    private func metaObject(_ accessory: Accessory, index: HomeIndex) -> [String: JSON] {
        [
            "id": .string(accessory.id.rawValue), "name": .string(accessory.name), "manufacturer": .string(accessory.manufacturer),
            "model": .string(accessory.model), "serialNumber": .string(accessory.serialNumber),
            "firmwareRevision": .string(accessory.firmwareRevision), "category": .string(accessory.category.name),
            "room": .string(index.roomName(of: accessory)), "bridge": .string(accessory.bridgeID?.rawValue),
            "bridged": .array((index.bridged[accessory.id] ?? []).map(JSON.string)),
        ]
    }
}

/// The `$events` a layout change produces.
enum LayoutChanges {
    struct Event {
        let kind: String
        let fields: [String: JSON]
    }

    static func events(from before: [Home], to after: [Home]) -> [Event] {
        var events: [Event] = []
        let old = Dictionary(before.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for home in after {
            guard let previous = old[home.id] else {
                events.append(Event(kind: "home-added", fields: ["home": .string(home.name)]))
                continue
            }
            if previous.name != home.name { events.append(Event(kind: "home-renamed", fields: ["home": .string(home.name), "oldName": .string(previous.name)])) }
            events += roomEvents(previous, home) + zoneEvents(previous, home) + accessoryEvents(previous, home)
            events += serviceEvents(previous, home) + groupEvents(previous, home) + actionSetEvents(previous, home) + triggerEvents(previous, home)
        }
        for home in before where !after.contains(where: { $0.id == home.id }) {
            events.append(Event(kind: "home-removed", fields: ["home": .string(home.name)]))
        }
        let oldPrimary = before.first(where: \.isPrimary)
        if let primary = after.first(where: \.isPrimary), primary.id != oldPrimary?.id {
            events.append(Event(kind: "home-primary", fields: ["home": .string(primary.name), "oldHome": .string(oldPrimary?.name)]))
        }
        return events
    }

    private static func roomEvents(_ before: Home, _ after: Home) -> [Event] {
        diff(before.rooms, after.rooms, id: \.id, name: \.name, object: "room", home: after.name)
    }

    private static func zoneEvents(_ before: Home, _ after: Home) -> [Event] {
        var events = diff(before.zones, after.zones, id: \.id, name: \.name, object: "zone", home: after.name)
        let old = Dictionary(before.zones.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for zone in after.zones {
            guard let previous = old[zone.id], previous.roomIDs != zone.roomIDs else { continue }
            events.append(Event(kind: "zone-updated", fields: [
                "home": .string(after.name), "zone": .string(zone.name),
                "rooms": .array(zone.roomIDs.compactMap { after.room(withID: $0).map { JSON.string($0.name) } }),
            ]))
        }
        return events
    }

    private static func accessoryEvents(_ before: Home, _ after: Home) -> [Event] {
        var events = diff(before.accessories, after.accessories, id: \.id, name: \.name, object: "accessory", home: after.name)
        let old = Dictionary(before.accessories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for accessory in after.accessories {
            guard let previous = old[accessory.id], previous.roomID != accessory.roomID else { continue }
            events.append(Event(kind: "accessory-assigned", fields: [
                "home": .string(after.name), "accessory": .string(accessory.id.rawValue), "name": .string(accessory.name),
                "room": .string(after.room(of: accessory).name), "oldRoom": .string(before.room(of: previous).name),
            ]))
        }
        return events
    }

    /// `service-renamed`: the accessory by id, with its name; the service by iid.
    private static func serviceEvents(_ before: Home, _ after: Home) -> [Event] {
        var events: [Event] = []
        let old = Dictionary(before.accessories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for accessory in after.accessories {
            guard let previous = old[accessory.id] else { continue }
            for service in accessory.services {
                guard let previousService = previous.service(service.iid), previousService.name != service.name else { continue }
                events.append(Event(kind: "service-renamed", fields: [
                    "home": .string(after.name), "accessory": .string(accessory.id.rawValue), "name": .string(accessory.name),
                    "service": .int(service.iid), "newName": .string(service.name), "oldName": .string(previousService.name),
                ]))
            }
        }
        return events
    }

    private static func groupEvents(_ before: Home, _ after: Home) -> [Event] {
        var events = diff(before.serviceGroups, after.serviceGroups, id: \.id, name: \.name, object: "service-group", key: "serviceGroup", home: after.name)
        let old = Dictionary(before.serviceGroups.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for group in after.serviceGroups {
            guard let previous = old[group.id], previous.services != group.services else { continue }
            events.append(Event(kind: "service-group-updated", fields: [
                "home": .string(after.name), "serviceGroup": .string(group.name),
                "services": .array(group.services.map { .object(["accessory": .string($0.accessoryID.rawValue), "service": .int($0.serviceIID)]) }),
            ]))
        }
        return events
    }

    private static func actionSetEvents(_ before: Home, _ after: Home) -> [Event] {
        var events = diff(before.actionSets, after.actionSets, id: \.id, name: \.name, object: "action-set", key: "actionSet", home: after.name)
        let old = Dictionary(before.actionSets.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for actionSet in after.actionSets {
            guard let previous = old[actionSet.id], previous.actions != actionSet.actions else { continue }
            events.append(Event(kind: "action-set-updated", fields: [
                "home": .string(after.name), "actionSet": .string(actionSet.name),
                "actions": .array(actionSet.actions.map { action in
                    .object(["accessory": .string(action.characteristic.accessoryID.rawValue), "characteristic": .int(action.characteristic.iid),
                             "value": .value(action.value)])
                }),
            ]))
        }
        return events
    }

    /// `trigger-added/-removed/-renamed`, `trigger-enabled/-disabled`, and `trigger-updated` when
    /// its fire date, recurrence or action sets change.
    private static func triggerEvents(_ before: Home, _ after: Home) -> [Event] {
        var events = diff(before.triggers, after.triggers, id: \.id, name: \.name, object: "trigger", home: after.name)
        let old = Dictionary(before.triggers.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for trigger in after.triggers {
            guard let previous = old[trigger.id] else { continue }
            if previous.isEnabled != trigger.isEnabled {
                events.append(Event(kind: trigger.isEnabled ? "trigger-enabled" : "trigger-disabled",
                                    fields: ["home": .string(after.name), "trigger": .string(trigger.name)]))
            }
            guard previous.fireDate != trigger.fireDate || previous.recurrence != trigger.recurrence || previous.actionSetIDs != trigger.actionSetIDs else { continue }
            events.append(Event(kind: "trigger-updated", fields: [
                "home": .string(after.name), "trigger": .string(trigger.name),
                "fireDate": .string(Gateway.iso(trigger.fireDate)), "enabled": .bool(trigger.isEnabled),
                "recurrence": trigger.recurrence.map { .object(["unit": .string($0.unit.rawValue), "every": .int($0.every)]) } ?? .null,
                "actionSets": .array(trigger.actionSetIDs.compactMap { id in after.actionSets.first { $0.id == id }.map { JSON.string($0.name) } }),
            ]))
        }
        return events
    }

    /// `<object>-added/-removed/-renamed`, the object's name under `key` (default: `object`).
    private static func diff<T, ID: Hashable>(_ before: [T], _ after: [T], id: KeyPath<T, ID>, name: KeyPath<T, String>, object: String, key: String? = nil,
                                             home: String) -> [Event] {
        var events: [Event] = []
        let old = Dictionary(before.map { ($0[keyPath: id], $0) }, uniquingKeysWith: { first, _ in first })
        let new = Set(after.map { $0[keyPath: id] })
        func fields(_ element: T) -> [String: JSON] {
            // An accessory is named by its id (as in accessory-reachability), with its name beside it.
            if let accessoryID = element[keyPath: id] as? AccessoryID {
                return ["home": .string(home), "accessory": .string(accessoryID.rawValue), "name": .string(element[keyPath: name])]
            }
            return ["home": .string(home), key ?? object: .string(element[keyPath: name])]
        }
        for element in after {
            var fields = fields(element)
            if let previous = old[element[keyPath: id]] {
                guard previous[keyPath: name] != element[keyPath: name] else { continue }
                fields["oldName"] = .string(previous[keyPath: name])
                events.append(Event(kind: "\(object)-renamed", fields: fields))
            } else {
                events.append(Event(kind: "\(object)-added", fields: fields))
            }
        }
        for element in before where !new.contains(element[keyPath: id]) {
            events.append(Event(kind: "\(object)-removed", fields: fields(element)))
        }
        return events
    }
}

/// Look-ups over one home done once per payload, not once per accessory.
struct HomeIndex {
    /// Bridge id -> the ids behind it, in stable-id order.
    let bridged: [AccessoryID: [String]]
    private let roomNames: [RoomID: String]

    init(_ home: Home) {
        var bridged: [AccessoryID: [String]] = [:]
        for accessory in home.accessories.sorted(by: { $0.id < $1.id }) {
            if let bridge = accessory.bridgeID { bridged[bridge, default: []].append(accessory.id.rawValue) }
        }
        self.bridged = bridged
        roomNames = Dictionary(home.allRooms.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    func roomName(of accessory: Accessory) -> String {
        accessory.roomID.flatMap { roomNames[$0] } ?? Home.defaultRoom.name
    }
}

extension Gateway {
    /// Whether the broker connection is up.
    public var isConnectedToBroker: Bool { connected }
}

import Foundation
import HomeModel
import Wire

/// `$layout`: the structure of the homes (no values, no reachability: those have their own
/// topics), split so that no message is large, whatever the size of the home:
///
/// - `<base>/$layout`: the index: `format` (2), `contract` (``contractVersion``), `base`, and per
///   home `id`, `name`, `primary`, `topic` and `layout` (the topic of the home's part).
/// - `<base>/$layout/<home>`: one home: `id`, `name`, `primary`, `topic`, `rooms` (each with
///   `id`, `name`, `topic`, `accessories` (how many) and `layout`, the topics of its parts, in
///   order), `zones`, `serviceGroups`, `actionSets`, `triggers`.
/// - `<base>/$layout/<home>/<room>`, then `/2`, `/3` ...: the room's accessories with their
///   services and characteristics, in parts of at most about ``partLimit`` bytes (`home`, `room`,
///   `part`, `parts`, `accessories`).
///
/// A client subscribes to `<base>/$layout/#` and joins the parts (see `docs/mqtt-api.md`).
public struct LayoutDocument {
    /// The version of the MQTT contract (`docs/mqtt-api.md`, "Versions of this contract"): raised
    /// whenever what the gateway publishes changes in a way a client must know of.
    public static let contractVersion = 3
    /// The size a room's part stays under (unless one accessory alone is larger).
    static let partLimit = 64 * 1024

    let base: String
    let map: TopicMap
    /// The options of the accessories that have any (shown with them, so the page and tools see them).
    var options: [AccessoryID: AccessoryOptions] = [:]

    /// Every message of the layout: topic and payload, each part before the message that names
    /// it (a room's parts, then its home's part; the index last), so that a client reading in
    /// order never finds an index or home part naming a part older than itself.
    func messages(for homes: [Home]) -> [(topic: String, payload: [UInt8])] {
        var messages: [(topic: String, payload: [UInt8])] = []
        var index: [JSON] = []
        for home in homes {
            guard let homeTopic = map.topic(of: .home(home.id)) else { continue }
            let homeLayout = layoutTopic(for: homeTopic)
            index.append(.object(["id": .string(home.id.rawValue), "name": .string(home.name), "primary": .bool(home.isPrimary),
                                  "topic": .string(homeTopic), "layout": .string(homeLayout)]))
            let (homeMessage, roomMessages) = self.messages(for: home, homeTopic: homeTopic, homeLayout: homeLayout)
            messages.append(contentsOf: roomMessages)
            messages.append(homeMessage)
        }
        messages.append((TopicGrammar.topic(base, .layout), JSON.object(["format": 2, "contract": .int(Int64(Self.contractVersion)), "base": .string(base), "homes": .array(index)]).encoded()))
        return messages
    }

    /// `<base>/<home>/...` -> `<base>/$layout/<home>/...`
    private func layoutTopic(for topic: String) -> String {
        TopicGrammar.topic(base, .layout) + topic.dropFirst(base.count)
    }

    private func messages(for home: Home, homeTopic: String, homeLayout: String) -> ((topic: String, payload: [UInt8]), [(topic: String, payload: [UInt8])]) {
        let index = HomeIndex(home)
        var rooms: [JSON] = []
        var roomMessages: [(topic: String, payload: [UInt8])] = []
        let known = Set(home.rooms.map(\.id))
        let byRoom = Dictionary(grouping: home.accessories) { accessory in
            accessory.roomID.flatMap { known.contains($0) ? $0 : nil } ?? Home.defaultRoom.id
        }
        for room in home.allRooms {
            guard let roomTopic = map.topic(of: .room(home.id, room.id)) else { continue }
            let accessories = byRoom[room.id] ?? []
            let parts = self.parts(of: accessories.map { accessoryObject($0, in: home, index: index).encoded() })
            let first = layoutTopic(for: roomTopic)
            let topics = parts.indices.map { $0 == 0 ? first : "\(first)/\($0 + 1)" }
            for (number, part) in parts.enumerated() {
                roomMessages.append((topics[number], roomPart(home: home, room: room, number: number + 1, of: parts.count, accessories: part)))
            }
            rooms.append(.object(["id": .string(room.id.rawValue), "name": .string(room.name), "topic": .string(roomTopic),
                                  "accessories": .int(accessories.count), "layout": .array(topics.map(JSON.string))]))
        }
        let object: JSON = .object([
            "id": .string(home.id.rawValue), "name": .string(home.name), "primary": .bool(home.isPrimary), "topic": .string(homeTopic),
            "rooms": .array(rooms), "zones": .array(zones(of: home)), "serviceGroups": .array(groups(of: home)),
            "actionSets": .array(actionSets(of: home)), "triggers": .array(triggers(of: home)),
        ])
        return ((homeLayout, object.encoded()), roomMessages)
    }

    /// Accessories' encoded objects in parts of at most ``partLimit`` bytes (at least one part,
    /// empty for an empty room).
    private func parts(of accessories: [[UInt8]]) -> [[[UInt8]]] {
        var parts: [[[UInt8]]] = [[]]
        var size = 0
        for accessory in accessories {
            if size + accessory.count + 1 > Self.partLimit, !parts[parts.count - 1].isEmpty {
                parts.append([])
                size = 0
            }
            parts[parts.count - 1].append(accessory)
            size += accessory.count + 1
        }
        return parts
    }

    /// One part of a room: the accessories' objects, already encoded, joined in place.
    private func roomPart(home: Home, room: Room, number: Int, of count: Int, accessories: [[UInt8]]) -> [UInt8] {
        var output: [UInt8] = Array(#"{"accessories":["#.utf8)
        output.reserveCapacity(accessories.reduce(128) { $0 + $1.count + 1 })
        for (position, accessory) in accessories.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: accessory)
        }
        output.append(contentsOf: #"],"home":"#.utf8)
        JSON.writeString(home.id.rawValue, into: &output)
        output.append(contentsOf: #","part":\#(number),"parts":\#(count),"room":"#.utf8)
        JSON.writeString(room.id.rawValue, into: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    // MARK: Objects

    private func topic(_ target: TopicMap.Target) -> JSON {
        .string(map.topic(of: target))
    }

    func accessoryObject(_ accessory: Accessory, in home: Home, index: HomeIndex) -> JSON {
        .object([
            "id": .string(accessory.id.rawValue), "name": .string(accessory.name), "topic": topic(.accessory(home.id, accessory.id)),
            "category": .string(accessory.category.name), "manufacturer": .string(accessory.manufacturer), "model": .string(accessory.model),
            "serialNumber": .string(accessory.serialNumber), "firmwareRevision": .string(accessory.firmwareRevision),
            "bridge": .string(accessory.bridgeID?.rawValue), "bridged": .array((index.bridged[accessory.id] ?? []).map(JSON.string)),
            "services": .array(accessory.visibleServices.map { serviceObject($0, accessory: accessory, home: home) }),
        ].merging(optionFields(of: accessory.id)) { first, _ in first })
    }

    /// `options` (as set, the layers joined) and `disabled`, for an accessory that has options.
    private func optionFields(of id: AccessoryID) -> [String: JSON] {
        guard !options.isEmpty, let given = options[id] else { return [:] }
        return ["options": given.json, "disabled": .bool(given.disabled == true)]
    }

    private func serviceObject(_ service: Service, accessory: Accessory, home: Home) -> JSON {
        let reference = ServiceReference(accessoryID: accessory.id, serviceIID: service.iid)
        return .object([
            "iid": .int(service.iid), "type": .string(service.type), "name": .string(service.name), "primary": .bool(service.isPrimary),
            "linked": .array(service.linked.map(JSON.int)), "topic": topic(.service(home.id, reference)),
            "characteristics": .array(service.characteristics.map { characteristicObject($0, accessory: accessory, home: home) }),
        ])
    }

    private func characteristicObject(_ characteristic: Characteristic, accessory: Accessory, home: Home) -> JSON {
        let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
        var object = Self.characteristicFields(characteristic)
        object["iid"] = .int(characteristic.iid)
        object["topic"] = topic(.characteristic(home.id, reference))
        if let validValues = characteristic.validValues { object["validValues"] = .array(validValues.map(JSON.double)) }
        return .object(object)
    }

    /// What a characteristic is, as `$layout` and `<characteristic>/$meta` describe it: type,
    /// UUID, format, perms, unit, bounds, valid values (`$meta` gives them with their labels),
    /// description; `momentary` when it has no lasting value.
    static func characteristicFields(_ characteristic: Characteristic) -> [String: JSON] {
        var object: [String: JSON] = [
            "type": .string(characteristic.type), "uuid": .string(characteristic.uuid),
            "format": .string(characteristic.format.rawValue), "perms": .array(characteristic.perms.map { .string($0.rawValue) }),
        ]
        if characteristic.isMomentary { object["momentary"] = true }
        if let unit = characteristic.unit { object["unit"] = .string(unit) }
        if let minValue = characteristic.minValue { object["minValue"] = .double(minValue) }
        if let maxValue = characteristic.maxValue { object["maxValue"] = .double(maxValue) }
        if let minStep = characteristic.minStep { object["minStep"] = .double(minStep) }
        if let maxLen = characteristic.maxLen { object["maxLen"] = .int(maxLen) }
        if let range = characteristic.validValuesRange { object["validValuesRange"] = .array(range.map(JSON.double)) }
        if let description = characteristic.description { object["description"] = .string(description) }
        return object
    }

    /// `<characteristic>/$meta`: the fields above, the valid values with their labels
    /// (`[{"value": 0, "label": "unsecured"}, ...]`; a value without a label has none).
    static func characteristicMeta(_ characteristic: Characteristic) -> [UInt8] {
        JSON.object(characteristicMetaFields(characteristic)).encoded()
    }

    /// The members of `<characteristic>/$meta` (also what `homegate topics --json` prints).
    public static func characteristicMetaFields(_ characteristic: Characteristic) -> [String: JSON] {
        var object = characteristicFields(characteristic)
        let labels = ValueLabels.of(characteristic)
        let values = characteristic.validValues ?? labels?.entries.map(\.value)
        if let values {
            object["validValues"] = .array(values.map { value in
                var entry: [String: JSON] = ["value": .double(value)]
                if let label = labels?.entries.first(where: { $0.value == value })?.label { entry["label"] = .string(label) }
                return .object(entry)
            })
        }
        return object
    }

    private func zones(of home: Home) -> [JSON] {
        home.zones.map { zone in
            .object(["id": .string(zone.id.rawValue), "name": .string(zone.name),
                     "rooms": .array(zone.roomIDs.compactMap { home.room(withID: $0).map { JSON.string($0.name) } })])
        }
    }

    private func groups(of home: Home) -> [JSON] {
        home.serviceGroups.map { group in
            .object(["id": .string(group.id.rawValue), "name": .string(group.name), "services": .array(group.services.map { service in
                .object(["accessory": .string(service.accessoryID.rawValue), "service": .int(service.serviceIID)])
            })])
        }
    }

    private func actionSets(of home: Home) -> [JSON] {
        home.actionSets.map { set in
            .object(["id": .string(set.id.rawValue), "name": .string(set.name), "actions": .array(set.actions.map { action in
                .object(["accessory": .string(action.characteristic.accessoryID.rawValue), "characteristic": .int(action.characteristic.iid),
                         "value": action.value.json])
            })])
        }
    }

    private func triggers(of home: Home) -> [JSON] {
        home.triggers.map { trigger in
            .object([
                "id": .string(trigger.id.rawValue), "name": .string(trigger.name),
                "fireDate": .string(ISODate.text(trigger.fireDate)), "enabled": .bool(trigger.isEnabled),
                "actionSets": .array(trigger.actionSetIDs.compactMap { id in home.actionSets.first { $0.id == id }.map { JSON.string($0.name) } }),
                "recurrence": trigger.recurrence.map { .object(["unit": .string($0.unit.rawValue), "every": .int($0.every)]) } ?? .null,
            ])
        }
    }
}

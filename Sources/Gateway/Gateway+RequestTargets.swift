import Foundation
import HomeModel
import Wire

/// Services and characteristics in management requests: by `accessory` and instance id, or by
/// their topic in any spelling a set accepts (with or without the base, `~` for the primary
/// home): `{"characteristic": "demo-home/living-room/floor-lamp/lightbulb/on"}`.
extension Gateway {
    enum TargetKind: String {
        case service, characteristic
    }

    /// A service or characteristic a request names.
    struct RequestTarget {
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

    /// The service or characteristic `request` names by topic (a string in `service` or
    /// `characteristic`) or by `accessory` and iid.
    func named(_ kind: TargetKind, in request: ManagementBody, home: String?) throws -> RequestTarget {
        guard case .string(let text)? = request.raw[kind.rawValue] else {
            let accessory = try request.string("accessory")
            let iid = try request.int(kind.rawValue)
            let topic = self.topic(ofAccessory: accessory, iid: iid, kind)
            return RequestTarget(accessory: accessory, iid: iid, home: home, topic: topic)
        }
        var path = Substring(text.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        if path.hasPrefix(base + "/") { path = path.dropFirst(base.count + 1) }
        let levels = path.split(separator: "/", omittingEmptySubsequences: false)
        switch (map.resolve(levels), kind) {
        case (.found(.characteristic(let homeID, let reference)), .characteristic):
            return RequestTarget(accessory: reference.accessoryID.rawValue, iid: reference.iid, home: homeID.rawValue,
                                 topic: map.topic(of: .characteristic(homeID, reference)))
        case (.found(.service(let homeID, let reference)), .service):
            return RequestTarget(accessory: reference.accessoryID.rawValue, iid: reference.serviceIID, home: homeID.rawValue,
                                 topic: map.topic(of: .service(homeID, reference)))
        case (.found, _):
            throw RequestError.invalid("\"\(kind.rawValue)\": \(text) is not a \(kind.rawValue)'s topic")
        case (.unresolved(let index, let segment), _):
            throw RequestError.notFound("\"\(kind.rawValue)\": " + describeUnresolved(levels: levels, index: index, segment: segment))
        }
    }

    /// An action's value may be a label of the characteristic's valid values (`"secured"`).
    func labelledActionValue(_ value: JSON, _ target: RequestTarget) throws -> JSON {
        guard case .string(let text) = value,
              let (_, accessory) = accessory(AccessoryID(target.accessory)),
              let (_, characteristic) = accessory.characteristic(target.iid),
              let labels = ValueLabels.of(characteristic) else { return value }
        guard let number = labels.value(named: text) else {
            if characteristic.format == .string { return value }
            throw RequestError(code: "invalid-value", message: "\(characteristic.displayName) has no label \"\(text)\"; it takes \(labels.listing)")
        }
        return characteristic.format == .float ? .double(number) : .int(Int64(number))
    }

    /// The topic of an accessory's service or characteristic named by its id and iid (none for a name).
    private func topic(ofAccessory accessory: String, iid: Int, _ kind: TargetKind) -> String? {
        let id = AccessoryID(accessory)
        guard let location = locations[id] else { return nil }
        let homeID = homes[location.home].id
        switch kind {
        case .characteristic: return map.topic(of: .characteristic(homeID, CharacteristicReference(accessoryID: id, iid: iid)))
        case .service: return map.topic(of: .service(homeID, ServiceReference(accessoryID: id, serviceIID: iid)))
        }
    }
}

import HomeModel
import Wire

/// What the requests other than management ones (history, the simulator's controls, snapshots)
/// look up in the tree, through the one resolver of every request (``Management/resolve(_:_:home:)``).
extension HomeTree {
    /// A characteristic a request names, as the tree has it.
    struct Requested {
        let reference: CharacteristicReference
        let characteristic: Characteristic
        /// Its topic; nil for a hidden characteristic.
        let topic: String?
    }

    /// The characteristic `name` refers to (by topic, by instance id or by type), in `home` when given.
    /// - Throws: ``RequestError``: `not-found`, `invalid-request` (a topic of something else).
    func requestedCharacteristic(_ name: ManagementRequest.TargetName, home: String?) throws -> Requested {
        let management = Management(homes: homes, map: map, base: base, isPairedDevice: { _ in false })
        let target = try management.resolve(name, .characteristic, home: home)
        let id = AccessoryID(target.accessory)
        guard let (_, accessory) = accessory(id) else { throw RequestError.notFound("no accessory \"\(id)\"") }
        guard let (_, characteristic) = accessory.characteristic(target.iid) else {
            throw RequestError.notFound("\(accessory.name) has no characteristic with iid \(target.iid)")
        }
        return Requested(reference: CharacteristicReference(accessoryID: id, iid: target.iid), characteristic: characteristic, topic: target.topic)
    }

    /// The accessory with the id `name`, which the tree must have.
    /// - Throws: ``RequestError`` `not-found`.
    func requestedAccessory(_ name: String) throws -> AccessoryID {
        let id = AccessoryID(name)
        guard locations[id] != nil else { throw RequestError.notFound("no accessory \"\(id)\"") }
        return id
    }

}

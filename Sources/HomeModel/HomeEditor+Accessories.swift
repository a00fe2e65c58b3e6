/// `accessory/assign-room`, `accessory/rename`, `accessory/remove`, `service/rename`.
extension HomeEditor {
    // MARK: Accessories

    /// Moves an accessory to a room (the default room included). A bridge moves alone: the
    /// accessories behind it stay where they are.
    public mutating func assignAccessory(_ accessory: String, toRoom room: String, home: String?) throws(EditError) {
        let location = try accessoryLocation(accessory, home: home)
        let id = try roomID(room, in: location.home)
        homes[location.home].accessories[location.accessory].roomID = id == Home.defaultRoom.id ? nil : id
    }

    /// Renames an accessory (in the home; the device keeps its own name).
    public mutating func renameAccessory(_ accessory: String, to newName: String, home: String?) throws(EditError) {
        let location = try accessoryLocation(accessory, home: home)
        let id = homes[location.home].accessories[location.accessory].id
        let oldName = homes[location.home].accessories[location.accessory].name
        let name = try validName(newName, in: location.home, for: .accessory(id))
        homes[location.home].accessories[location.accessory].name = name
        // A service named after its accessory (a lamp's lightbulb "Floor Lamp") takes the new
        // name with it, as the Home app shows it; services with names of their own keep them.
        for index in homes[location.home].accessories[location.accessory].services.indices {
            guard let serviceName = homes[location.home].accessories[location.accessory].services[index].name,
                  HomeKitName.key(serviceName) == HomeKitName.key(oldName) else { continue }
            homes[location.home].accessories[location.accessory].services[index].name = name
        }
    }

    /// Removes an accessory from its home. A bridge takes the accessories behind it; an accessory
    /// behind a bridge cannot be removed on its own (`not-allowed`, as HomeKit: remove the
    /// bridge). Service groups and action sets forget the services and actions of every
    /// accessory removed.
    /// - Returns: every id removed: the accessory's, then those behind it in stable-id order.
    @discardableResult
    public mutating func removeAccessory(_ accessory: String, home: String?) throws(EditError) -> [AccessoryID] {
        let location = try accessoryLocation(accessory, home: home)
        let target = homes[location.home].accessories[location.accessory]
        if let bridge = target.bridgeID {
            let bridgeName = homes[location.home].accessory(bridge).map { "\"\($0.name)\" (\(bridge))" } ?? "\"\(bridge)\""
            throw .notAllowed("\"\(target.name)\" (\(target.id)) is behind the bridge \(bridgeName); it leaves the home only with its bridge")
        }
        let removed = [target.id] + homes[location.home].bridged(by: target.id).map(\.id)
        let gone = Set(removed)
        homes[location.home].accessories.removeAll { gone.contains($0.id) }
        for group in homes[location.home].serviceGroups.indices {
            homes[location.home].serviceGroups[group].services.removeAll { gone.contains($0.accessoryID) }
        }
        for actionSet in homes[location.home].actionSets.indices {
            homes[location.home].actionSets[actionSet].actions.removeAll { gone.contains($0.characteristic.accessoryID) }
        }
        return removed
    }

    // MARK: Services

    /// Renames a service. Information services and hidden ones cannot be renamed (`not-allowed`);
    /// the name must be unique among the accessory's services.
    public mutating func renameService(accessory: String, service iid: Int, to newName: String, home: String?) throws(EditError) {
        let location = try accessoryLocation(accessory, home: home)
        let serviceIndex = try visibleServiceIndex(iid, at: location, doing: "renamed")
        let name = try Self.homeKitName(newName)
        let target = homes[location.home].accessories[location.accessory]
        for other in target.services where other.iid != iid {
            guard let otherName = other.name, name.clashes(with: otherName) else { continue }
            throw Self.inUse(name.text, by: "service \(other.iid) (\(other.type)) of \"\(target.name)\"", exact: otherName == name.text, in: "")
        }
        homes[location.home].accessories[location.accessory].services[serviceIndex].name = name.text
    }

    /// The index of the service `iid` of the accessory at `location`, refusing information and
    /// hidden services (they have no topics) with `not-allowed`.
    func visibleServiceIndex(_ iid: Int, at location: (home: Int, accessory: Int), doing verb: String) throws(EditError) -> Int {
        let accessory = homes[location.home].accessories[location.accessory]
        guard let index = accessory.services.firstIndex(where: { $0.iid == iid }) else {
            throw .notFound("\"\(accessory.name)\" (\(accessory.id)) has no service with iid \(iid)")
        }
        try Self.checkVisible(accessory.services[index], of: accessory, doing: verb)
        return index
    }

    static func checkVisible(_ service: Service, of accessory: Accessory, doing verb: String) throws(EditError) {
        if Service.informationTypes.contains(service.type) {
            throw .notAllowed("service \(service.iid) of \"\(accessory.name)\" is its \(service.type.split(separator: "-").joined(separator: " ")) service; it cannot be \(verb)")
        }
        if !service.isVisible {
            throw .notAllowed("service \(service.iid) (\(service.type)) of \"\(accessory.name)\" is hidden; it cannot be \(verb)")
        }
    }
}

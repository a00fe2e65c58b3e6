/// `room/...` and `zone/...`.
extension HomeEditor {
    // MARK: Rooms

    @discardableResult
    public mutating func addRoom(name: String, home: String?) throws(EditError) -> Room {
        let index = try homeIndex(home)
        let text = try validName(name, in: index, for: nil)
        let taken = Set(homes[index].allRooms.map(\.id.rawValue))
        let room = Room(id: RoomID(Self.newID(text, fallback: "room", taken: taken)), name: text)
        homes[index].rooms.append(room)
        return room
    }

    /// Removes a room: its accessories go to the default room; zones forget it. The default room
    /// cannot be removed.
    public mutating func removeRoom(_ room: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let id = try roomID(room, in: index)
        guard id != Home.defaultRoom.id else {
            throw .notAllowed("the default room cannot be removed; it holds every accessory not assigned to a room")
        }
        homes[index].rooms.removeAll { $0.id == id }
        for accessory in homes[index].accessories.indices where homes[index].accessories[accessory].roomID == id {
            homes[index].accessories[accessory].roomID = nil
        }
        for zone in homes[index].zones.indices {
            homes[index].zones[zone].roomIDs.removeAll { $0 == id }
        }
    }

    /// Renames a room. The default room cannot be renamed.
    public mutating func renameRoom(_ room: String, to newName: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let id = try roomID(room, in: index)
        guard id != Home.defaultRoom.id else { throw .notAllowed("the default room cannot be renamed") }
        let text = try validName(newName, in: index, for: .room(id))
        if let room = homes[index].rooms.firstIndex(where: { $0.id == id }) { homes[index].rooms[room].name = text }
    }

    // MARK: Zones

    @discardableResult
    public mutating func addZone(name: String, home: String?) throws(EditError) -> Zone {
        let index = try homeIndex(home)
        let text = try validName(name, in: index, for: nil)
        let zone = Zone(id: ZoneID(Self.newID(text, fallback: "zone", taken: Set(homes[index].zones.map(\.id.rawValue)))), name: text)
        homes[index].zones.append(zone)
        return zone
    }

    public mutating func removeZone(_ zone: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        homes[index].zones.remove(at: try zoneIndex(zone, in: index))
    }

    public mutating func renameZone(_ zone: String, to newName: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let zoneIndex = try zoneIndex(zone, in: index)
        homes[index].zones[zoneIndex].name = try validName(newName, in: index, for: .zone(homes[index].zones[zoneIndex].id))
    }

    /// Puts a room in a zone. Already in it: `invalid-request`; the default room cannot be in a
    /// zone (`not-allowed`).
    public mutating func addRoom(_ room: String, toZone zone: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let zoneIndex = try zoneIndex(zone, in: index)
        let id = try roomID(room, in: index)
        let zoneName = homes[index].zones[zoneIndex].name
        guard id != Home.defaultRoom.id else { throw .notAllowed("the default room cannot be in a zone") }
        guard !homes[index].zones[zoneIndex].roomIDs.contains(id) else {
            throw .invalidRequest("the room \"\(roomName(id, in: index))\" is already in the zone \"\(zoneName)\"")
        }
        homes[index].zones[zoneIndex].roomIDs.append(id)
    }

    /// Takes a room out of a zone. Not in it: `not-found`.
    public mutating func removeRoom(_ room: String, fromZone zone: String, home: String?) throws(EditError) {
        let index = try homeIndex(home)
        let zoneIndex = try zoneIndex(zone, in: index)
        let id = try roomID(room, in: index)
        guard let position = homes[index].zones[zoneIndex].roomIDs.firstIndex(of: id) else {
            throw .notFound("the room \"\(roomName(id, in: index))\" is not in the zone \"\(homes[index].zones[zoneIndex].name)\"")
        }
        homes[index].zones[zoneIndex].roomIDs.remove(at: position)
    }

    func roomName(_ id: RoomID, in home: Int) -> String {
        homes[home].room(withID: id)?.name ?? id.rawValue
    }
}

import HomeModel

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

extension [Home] {
    /// Where each accessory is: its home's index and its index in that home's accessories.
    var accessoryLocations: [AccessoryID: (home: Int, accessory: Int)] {
        var locations: [AccessoryID: (home: Int, accessory: Int)] = [:]
        for (homeIndex, home) in enumerated() {
            for (index, accessory) in home.accessories.enumerated() {
                locations[accessory.id] = (homeIndex, index)
            }
        }
        return locations
    }
}

extension Accessory {
    /// The device's description of this accessory: the device's structure, values and identity;
    /// this one's name and room (the home's), and its reachability (which changes through the
    /// engine's `setReachable`).
    func described(by device: Accessory) -> Accessory {
        var accessory = device
        accessory.name = name
        accessory.roomID = roomID
        accessory.isReachable = isReachable
        return accessory
    }
}

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

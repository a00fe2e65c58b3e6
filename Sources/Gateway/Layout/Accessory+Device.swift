import HomeModel

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

import HomeModel

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

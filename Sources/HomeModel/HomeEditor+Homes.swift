/// `home/add`, `home/remove`, `home/rename`, `home/set-primary`.
extension HomeEditor {
    /// Adds an empty home. The first home becomes primary.
    @discardableResult
    public mutating func addHome(name: String) throws(EditError) -> Home {
        let text = try validHomeName(name, for: nil)
        let id = HomeID(Self.newID(text, fallback: "home", taken: Set(homes.map(\.id.rawValue))))
        let home = Home(id: id, name: text, isPrimary: !homes.contains(where: \.isPrimary))
        homes.append(home)
        return home
    }

    /// Removes a home and everything in it. If it was primary, the first remaining home becomes
    /// primary. Removing the last home is allowed.
    public mutating func removeHome(_ home: String) throws(EditError) {
        let index = try homeIndex(home)
        let wasPrimary = homes[index].isPrimary
        homes.remove(at: index)
        if wasPrimary, !homes.isEmpty { homes[0].isPrimary = true }
    }

    public mutating func renameHome(_ home: String, to newName: String) throws(EditError) {
        let index = try homeIndex(home)
        homes[index].name = try validHomeName(newName, for: homes[index].id)
    }

    /// Makes a home the primary one (the others stop being primary). Already primary: nothing changes.
    public mutating func setPrimaryHome(_ home: String) throws(EditError) {
        let index = try homeIndex(home)
        for other in homes.indices { homes[other].isPrimary = other == index }
    }
}

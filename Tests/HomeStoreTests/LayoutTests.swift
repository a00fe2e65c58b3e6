import Foundation
import GRDB
import HomeModel
import Testing
@testable import HomeStore

@Suite("Layout")
struct LayoutTests {
    @Test("a layout of two homes reads back equal, every value kind and every list order kept")
    func roundTrip() throws {
        let store = try HomeStore.inMemory()
        try store.saveHomes(Fixtures.homes)
        let loaded = try store.loadHomes()
        #expect(loaded == Fixtures.homes)
        #expect(loaded.map(\.id) == ["home-main", "home-cabin"])
        #expect(loaded.first?.isPrimary == true)
        #expect(loaded.first?.bridged(by: "bridge").map(\.id) == ["lamp", "sensor"])
    }

    @Test("saving again replaces the whole layout")
    func replaces() throws {
        try withTemporaryDirectory { directory in
            let store = try HomeStore(directory: directory)
            try store.saveHomes(Fixtures.homes)
            var main = Fixtures.main
            main.rooms.removeAll { $0.id == "bedroom" }
            main.zones[1].roomIDs = []
            let lamp = main.accessories.firstIndex { $0.id == "lamp" }!
            main.accessories[lamp].name = "Reading Lamp"
            main.accessories[lamp].roomID = "kitchen"
            main.accessories[lamp].setValue(.int(80), iid: 12)
            main.accessories.swapAt(0, 3)
            main.triggers.removeLast()
            try store.saveHomes([main])
            #expect(try store.loadHomes() == [main])

            let rows = try DatabaseQueue(path: databasePath(in: directory)).read { db in
                try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM room) + (SELECT count(*) FROM zone_room) + (SELECT count(*) FROM accessory)")
            }
            #expect(rows == 2 + 2 + 4, "no row of the removed home or room is left behind")
        }
    }

    @Test("a save that fails leaves the previous layout whole")
    func failedSaveIsAtomic() throws {
        let store = try HomeStore.inMemory()
        try store.saveHomes(Fixtures.homes)
        var broken = Fixtures.main
        broken.rooms.append(Room(id: "living", name: "Second Living Room"))
        let error = #expect(throws: StoreError.self) { try store.saveHomes([broken]) }
        #expect(error?.kind == .write)
        #expect(error?.description.contains("save the layout") == true)
        #expect(try store.loadHomes() == Fixtures.homes)
    }

    @Test("no layout before the first save; a saved layout of no homes is a layout")
    func hasLayout() throws {
        let store = try HomeStore.inMemory()
        #expect(try store.hasLayout() == false)
        #expect(try store.loadHomes() == [])
        try store.saveHomes([])
        #expect(try store.hasLayout())
        #expect(try store.loadHomes() == [])
        try store.saveHomes(Fixtures.homes)
        #expect(try store.hasLayout())
    }

    @Test("trigger dates are stored as seconds since 1970, to the precision of that number")
    func fireDates() throws {
        let store = try HomeStore.inMemory()
        let exact = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_790_000_000.001),
                     Date(timeIntervalSince1970: -86_400.5), Date(timeIntervalSinceReferenceDate: 800_000_000)]
        let fine = Date(timeIntervalSinceReferenceDate: 800_000_000.123456789)
        let home = Home(id: "h", name: "Home", isPrimary: true, triggers: (exact + [fine]).enumerated().map { index, date in
            TimerTrigger(id: TriggerID("t\(index)"), name: "T\(index)", fireDate: date)
        })
        try store.saveHomes([home])
        let loaded = try #require(try store.loadHomes().first?.triggers.map(\.fireDate))
        #expect(Array(loaded.prefix(exact.count)) == exact)
        #expect(abs(loaded[exact.count].timeIntervalSince(fine)) < 1e-6, "a date finer than a double of seconds since 1970 is rounded to it")
    }
}

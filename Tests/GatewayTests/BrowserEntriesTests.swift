import Accessories
import Testing
import Wire
@testable import Gateway

/// The browser's entries on their own: a round's changes, the retained set, a pairing's address.
@Suite("browser entries")
struct BrowserEntriesTests {
    static func found(_ id: String, port: Int = 51_826) -> FoundAccessory {
        FoundAccessory(deviceID: id, name: "Strip \(id.prefix(2))", model: "LS1", category: 5, host: "10.0.0.7", port: port, isPaired: false)
    }

    @Test("new entries are retained and announced; a changed one retained again, silently; a gone one cleared and announced")
    func rounds() throws {
        var entries = BrowserEntries(base: "hg")
        let first = entries.take([Self.found("AA:01"), Self.found("BB:02")])
        #expect(first.count == 2)
        guard case .retain(let topic, _, let announced)? = first.first else {
            Issue.record("retained first: \(first)")
            return
        }
        #expect(topic == "hg/$browser/AA:01" && announced?["device"] == "AA:01")
        #expect(entries.take([Self.found("AA:01"), Self.found("BB:02")]).isEmpty, "nothing changed")
        let moved = entries.take([Self.found("AA:01", port: 9)])
        #expect(moved.count == 2)
        guard case .retain(_, _, nil) = moved[0], case .clear("hg/$browser/BB:02", let removed) = moved[1] else {
            Issue.record("retained again without announcing, then cleared: \(moved)")
            return
        }
        #expect(removed["device"] == "BB:02")
        #expect(Set(entries.retained.keys) == ["hg/$browser/AA:01"])
    }

    @Test("a pairing by device id takes where the browser found it; an unknown id is not found, naming those found")
    func addresses() throws {
        var entries = BrowserEntries(base: "hg")
        _ = entries.take([Self.found("AA:01")])
        let address = try entries.address(.found(deviceID: "AA:01"))
        #expect(address.host == "10.0.0.7" && address.port == 51_826 && address.transport == "ip")
        do {
            _ = try entries.address(.found(deviceID: "CC:03"))
            Issue.record("an unknown device is refused")
        } catch let error as RequestError {
            #expect(error.code == "not-found" && error.message.contains("AA:01"), "\(error.message)")
        }
    }
}

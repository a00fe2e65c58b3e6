import Foundation
import Testing
@testable import HomeStore

@Suite("Pairings")
struct PairingStoreTests {
    @Test("the controller identity is made once: a second save keeps the first")
    func controllerIdentity() throws {
        let store = try HomeStore.inMemory()
        #expect(try store.controllerIdentity() == nil)
        let first = try store.saveControllerIdentity(pairingID: "A1", privateKey: [1, 2, 3])
        #expect(first.pairingID == "A1")
        let second = try store.saveControllerIdentity(pairingID: "B2", privateKey: [4, 5, 6])
        #expect(second.pairingID == "A1")
        #expect(second.privateKey == [1, 2, 3])
        #expect(try store.controllerIdentity()?.pairingID == "A1")
    }

    @Test("pairings are saved, listed in pairing order, readdressed and removed; they survive reopening")
    func pairings() throws {
        try withTemporaryDirectory { directory in
            do {
                let store = try HomeStore(directory: directory)
                try store.savePairing(StoredPairing(deviceID: "AA:BB", publicKey: [9], host: "10.0.0.2", port: 51826, name: "Bridge",
                                                    home: "Home", room: "Hall", pairedAt: Date(timeIntervalSince1970: 100)))
                try store.savePairing(StoredPairing(deviceID: "CC:DD", publicKey: [8], host: "10.0.0.3", port: 80, name: "Lamp",
                                                    pairedAt: Date(timeIntervalSince1970: 50)))
                try store.updatePairingAddress(deviceID: "AA:BB", host: "10.0.0.9", port: 1234)
            }
            let store = try HomeStore(directory: directory)
            let pairings = try store.pairings()
            #expect(pairings.map(\.deviceID) == ["CC:DD", "AA:BB"])
            #expect(pairings.last == StoredPairing(deviceID: "AA:BB", publicKey: [9], host: "10.0.0.9", port: 1234, name: "Bridge",
                                                   home: "Home", room: "Hall", pairedAt: Date(timeIntervalSince1970: 100)))
            #expect(try store.removePairing(deviceID: "CC:DD"))
            #expect(try store.removePairing(deviceID: "CC:DD") == false)
            #expect(try store.pairings().map(\.deviceID) == ["AA:BB"])
        }
    }
}

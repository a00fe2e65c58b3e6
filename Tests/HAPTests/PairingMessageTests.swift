import Testing
@testable import HAP
@testable import Wire

/// How pair-setup and pair-verify read a step's message before its contents: the state and the
/// accessory's error item (found by the pairing fuzz target: an empty error item used to count as
/// no error, so pair-verify's M4 passed as success).
@Suite("Pairing messages")
struct PairingMessageTests {
    @Test func aMessageOfTheExpectedStateWithoutErrorPasses() throws {
        let message = TLV8([(.state, [4])])
        #expect(try PairSetup.expect(message, state: 4, step: "M4", operation: "pair-verify") == message)
    }

    @Test func anErrorCodeIsRefusedAndNamed() {
        let error = #expect(throws: HAPError.self) {
            try PairSetup.expect(TLV8([(.state, [4]), (.error, [2])]), state: 4, step: "M4")
        }
        #expect(error?.pairingError == .authentication)
        #expect(error?.message.contains("the setup code is wrong") == true)
    }

    @Test(arguments: [[UInt8](), [2, 0], [UInt8](repeating: 7, count: 300)])
    func anErrorItemOfAnotherLengthIsRefusedToo(value: [UInt8]) {
        let error = #expect(throws: HAPError.self) {
            try PairSetup.expect(TLV8([(.state, [4]), (.error, value)]), state: 4, step: "M4", operation: "pair-verify")
        }
        #expect(error?.kind == .pairing)
        #expect(error?.message == "pair-verify M4: the accessory answered an error item of \(value.count) bytes instead of 1")
    }

    @Test func anotherStateIsRefused() {
        #expect(throws: HAPError.self) { try PairSetup.expect(TLV8([(.state, [2])]), state: 4, step: "M4") }
    }
}

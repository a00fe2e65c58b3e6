import Testing
import HAP
import Wire

@Suite("Wire codes")
struct CodeTests {
    @Test func pairingErrorCodesMapAndDescribe() {
        let names = [
            1: "(unknown)", 2: "(authentication)", 3: "(backoff)", 4: "(maxPeers)", 5: "(maxTries)",
            6: "(unavailable)", 7: "(busy)",
        ]
        for (raw, name) in names {
            let code = PairingErrorCode(rawValue: UInt8(raw))
            #expect(code?.rawValue == UInt8(raw))
            #expect(code?.description.hasSuffix(name) == true, "\(raw): \(code.map(String.init(describing:)) ?? "nil")")
        }
        #expect(PairingErrorCode(rawValue: 0) == nil)
        #expect(PairingErrorCode(rawValue: 8) == nil)
        #expect(PairingErrorCode.authentication.description
            == "the accessory refused the setup code or the signature (authentication)")
        #expect(PairingErrorCode.unavailable.description
            == "the accessory is already paired with another controller or not accepting pairings (unavailable)")
    }

    @Test func statusCodesMapAndDescribe() {
        let codes: [(Int, HAPStatus)] = [
            (0, .success), (-70401, .insufficientPrivileges), (-70402, .communicationFailure),
            (-70403, .busy), (-70404, .readOnly), (-70405, .writeOnly), (-70406, .notificationNotSupported),
            (-70407, .outOfResources), (-70408, .timedOut), (-70409, .noSuchResource),
            (-70410, .invalidValue), (-70411, .insufficientAuthorization), (-70412, .notAllowedInCurrentState),
        ]
        var descriptions = Set<String>()
        for (raw, code) in codes {
            #expect(HAPStatus(rawValue: raw) == code)
            #expect(!code.description.isEmpty)
            descriptions.insert(code.description)
        }
        #expect(descriptions.count == codes.count)
        #expect(HAPStatus(rawValue: -70400) == nil)
        #expect(HAPStatus(rawValue: -70413) == nil)
    }

    @Test func tlvTypesHaveTheirWireValues() {
        let types: [(UInt8, TLVType)] = [
            (0, .method), (1, .identifier), (2, .salt), (3, .publicKey), (4, .proof), (5, .encryptedData),
            (6, .state), (7, .error), (8, .retryDelay), (9, .certificate), (0x0A, .signature),
            (0x0B, .permissions), (0x0C, .fragmentData), (0x0D, .fragmentLast), (0x13, .flags), (0xFF, .separator),
        ]
        for (raw, type) in types {
            #expect(type.rawValue == raw)
        }
    }
}

import Testing
@testable import HAP
@testable import Wire

@Suite("TLV8")
struct TLV8Tests {
    @Test func roundTripKeepsOrderAndValues() throws {
        let tlv = TLV8([(.state, [1]), (.method, [0]), (.identifier, Array("controller".utf8))])
        let bytes = tlv.encoded()
        #expect(bytes == [0x06, 1, 1, 0x00, 1, 0, 0x01, 10] + Array("controller".utf8))
        #expect(try TLV8(decoding: bytes) == tlv)
    }

    @Test func longValueIsFragmentedAndJoined() throws {
        let value = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = TLV8([(.publicKey, value)]).encoded()
        #expect(bytes.count == 2 + 255 + 2 + 45)
        #expect(Array(bytes[0..<2]) == [0x03, 255])
        #expect(Array(bytes[257..<259]) == [0x03, 45])
        let decoded = try TLV8(decoding: bytes)
        #expect(decoded.items.count == 1)
        #expect(decoded[.publicKey] == value)
    }

    @Test func valueOfExactly510BytesIsTwoFullFragments() throws {
        let value = [UInt8](repeating: 7, count: 510)
        let bytes = TLV8([(.encryptedData, value)]).encoded()
        #expect(bytes.count == 514)
        #expect(try TLV8(decoding: bytes)[.encryptedData] == value)
    }

    @Test func differentTypesInARowStaySeparate() throws {
        let decoded = try TLV8(decoding: [0x06, 1, 2, 0x02, 2, 0xAA, 0xBB, 0x03, 1, 0xCC])
        #expect(decoded.items.count == 3)
        #expect(decoded.byte(.state) == 2)
        #expect(decoded[.salt] == [0xAA, 0xBB])
        #expect(decoded[.publicKey] == [0xCC])
        #expect(decoded[.proof] == nil)
        #expect(decoded.byte(.salt) == nil)
    }

    @Test func zeroLengthValue() throws {
        let tlv = TLV8([(.separator, []), (.state, [4])])
        #expect(tlv.encoded() == [0xFF, 0, 0x06, 1, 4])
        let decoded = try TLV8(decoding: tlv.encoded())
        #expect(decoded[.separator] == [])
        #expect(decoded == tlv)
    }

    @Test func appendBuildsItems() {
        var tlv = TLV8()
        tlv.append(.state, byte: 5)
        tlv.append(.encryptedData, [1, 2, 3])
        #expect(tlv.items == [TLV8.Item(type: 6, value: [5]), TLV8.Item(type: 5, value: [1, 2, 3])])
    }

    @Test func unknownTypesDecode() throws {
        let decoded = try TLV8(decoding: [0x42, 1, 9])
        #expect(decoded.items == [TLV8.Item(type: 0x42, value: [9])])
    }

    @Test func separatorsSplitAPairingsList() throws {
        var list = TLV8()
        list.append(.state, byte: 2)
        list.append(.identifier, Array("A".utf8))
        list.append(.publicKey, [1])
        list.append(.permissions, byte: 1)
        list.append(.separator, [])
        list.append(.identifier, Array("B".utf8))
        list.append(.publicKey, [2])
        list.append(.permissions, byte: 0)
        let records = try TLV8(decoding: list.encoded()).split()
        #expect(records.count == 2)
        #expect(records[0][.identifier] == Array("A".utf8))
        #expect(records[0].byte(.permissions) == 1)
        #expect(records[1][.identifier] == Array("B".utf8))
        #expect(records[1][.publicKey] == [2])
        #expect(records[1].byte(.permissions) == 0)
    }

    @Test func splitDropsEmptyRecords() {
        let tlv = TLV8([(.separator, []), (.identifier, [1]), (.separator, []), (.separator, [])])
        #expect(tlv.split() == [TLV8([(.identifier, [1])])])
    }

    @Test func truncatedValueThrowsWithOffset() {
        let error = #expect(throws: TLVError.self) {
            try TLV8(decoding: [0x06, 1, 1, 0x03, 5, 1, 2])
        }
        #expect(error?.offset == 3)
        #expect(error?.description == "TLV8 truncated at byte 3: item of type 3 declares 5 value bytes, 2 are left")
    }

    @Test func truncatedHeaderThrows() {
        #expect(throws: TLVError(reason: .truncatedHeader(offset: 3))) {
            try TLV8(decoding: [0x06, 1, 1, 0x03])
        }
        #expect(TLVError(reason: .truncatedHeader(offset: 3)).description.contains("truncated at byte 3"))
    }

    @Test func emptyInputIsEmptyList() throws {
        #expect(try TLV8(decoding: [UInt8]()) == TLV8())
        #expect(TLV8().encoded().isEmpty)
    }
}

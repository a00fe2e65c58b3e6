import Foundation
import Testing
import Wire
@testable import HAP

/// HAP's PDU layer and the CoAP accessory database, on bytes laid out as aiohomekit 4.0.1's CoAP
/// controller (`aiohomekit/controller/coap/pdu.py`, `structs.py`, `tlv8.py`) reads and writes them.
@Suite("HAP PDUs and the CoAP accessory database")
struct HAPPDUTests {
    @Test("a read request: control 0, opcode, transaction, iid and length little-endian")
    func request() {
        #expect(HAPPDU.Request(opcode: .read, transaction: 0x2A, iid: 0x0102, body: []).encoded() == [0x00, 0x03, 0x2A, 0x02, 0x01, 0x00, 0x00])
        #expect(HAPPDU.writeBody([1], ttl: .milliseconds(2500)) == [0x01, 0x01, 0x01, 0x08, 0x01, 25])
    }

    @Test("responses: several in one payload; a PDU without the response bit or cut short is refused")
    func responses() throws {
        let payload: [UInt8] = [0x02, 7, 0, 3, 0, 0x01, 0x01, 0x01, 0x02, 8, 4, 0, 0]
        #expect(try HAPPDU.responses(in: payload) == [HAPPDU.Response(transaction: 7, status: 0, body: [1, 1, 1]), HAPPDU.Response(transaction: 8, status: 4, body: [])])
        #expect(throws: HAPError.self) { try HAPPDU.responses(in: [0x00, 7, 0, 0, 0]) }
        #expect(throws: HAPError.self) { try HAPPDU.responses(in: [0x02, 7, 0, 9, 0, 1]) }
        #expect(try HAPPDU.value(inBody: [1, 1, 1]) == [1])
    }

    @Test("events: control, iid, length, body")
    func events() throws {
        #expect(try HAPPDU.events(in: [0x00, 0x0A, 0x00, 0x03, 0x00, 0x01, 0x01, 0x00]) == [HAPPDU.Event(iid: 10, body: [1, 1, 0])])
    }

    @Test("values in binary by format", arguments: [
        (GATTFormat.bool, [UInt8]([1]), JSON.bool(true)),
        (.uint8, [200], .int(200)),
        (.uint16, [0x34, 0x12], .int(0x1234)),
        (.uint32, [0xFF, 0xFF, 0xFF, 0xFF], .int(4_294_967_295)),
        (.uint64, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .uint(UInt64.max)),
        (.int32, [0xFE, 0xFF, 0xFF, 0xFF], .int(-2)),
        (.float, Array(withUnsafeBytes(of: Float(21.5).bitPattern.littleEndian, Array.init)), .double(21.5)),
        (.string, Array("Küche".utf8), .string("Küche")),
        (.data, [0x03], .string("Aw==")),
    ])
    func values(format: GATTFormat, bytes: [UInt8], json: JSON) throws {
        #expect(try format.json(from: bytes) == json)
        #expect(format.bytes(from: json) == bytes)
    }

    @Test("no bytes is a value not known yet, in every format (aiohomekit reads it as None)",
          arguments: [GATTFormat.bool, .uint8, .uint16, .uint32, .uint64, .int32, .float, .string, .data])
    func noBytesIsNoValueYet(format: GATTFormat) throws {
        #expect(try format.json(from: []) == nil)
    }

    @Test("values that do not fit: a wrong width is malformed; a write out of the format's range is refused")
    func misfits() {
        #expect(throws: HAPError.self) { try GATTFormat.uint16.json(from: [1]) }
        #expect(GATTFormat.uint8.bytes(from: .int(256)) == nil)
        #expect(GATTFormat.uint8.bytes(from: .int(-1)) == nil)
        #expect(GATTFormat.int32.bytes(from: .int(1 << 40)) == nil)
        #expect(GATTFormat.data.bytes(from: .string("not base64!")) == nil)
        #expect(GATTFormat.bool.bytes(from: .string("on")) == nil)
    }

    // MARK: The database

    /// A TLV item; values over 255 bytes fragmented as HAP does.
    private static func item(_ type: UInt8, _ value: [UInt8]) -> [UInt8] {
        TLV8.Item(type: type, value: value).encodedAlone
    }

    /// A list as aiohomekit writes a sequence: records joined by an empty 0x00 item.
    private static func list(_ records: [[UInt8]]) -> [UInt8] {
        Array(records.joined(separator: [0x00, 0x00]))
    }

    private static func uuid(_ short: UInt32) -> [UInt8] {
        // 0000XXXX-0000-1000-8000-0026BB765291 as a 128-bit little-endian number.
        let base: [UInt8] = [0x91, 0x52, 0x76, 0xBB, 0x26, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00]
        return base + withUnsafeBytes(of: short.littleEndian, Array.init)
    }

    private static func characteristic(type: UInt32, iid: UInt16, properties: UInt16, format: UInt8, unit: UInt16 = 0x2700, extra: [UInt8] = []) -> [UInt8] {
        item(0x13, item(0x04, uuid(type)) + item(0x05, [UInt8(iid & 0xFF), UInt8(iid >> 8)]) + item(0x0A, [UInt8(properties & 0xFF), UInt8(properties >> 8)])
            + item(0x0C, [format, 0, UInt8(unit & 0xFF), UInt8(unit >> 8), 1, 0, 0]) + extra)
    }

    static func lightbulbDatabase() -> [UInt8] {
        let float = { (value: Float) in withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init) }
        let information = item(0x15, item(0x06, [0x3E]) + item(0x07, [1, 0]) + item(0x14, list([
            characteristic(type: 0x23, iid: 2, properties: 0x0010, format: 0x19),
            characteristic(type: 0x14, iid: 3, properties: 0x0020, format: 0x01),
        ])))
        let bulb = item(0x15, item(0x06, uuid(0x43)) + item(0x07, [10, 0]) + item(0x0F, [1, 0]) + item(0x10, [1, 0]) + item(0x14, list([
            item(0x13, item(0x04, [0x25]) + item(0x05, [11, 0]) + item(0x0A, [0xB0, 0x01]) + item(0x0C, [0x01, 0, 0x00, 0x27, 1, 0, 0])),
            characteristic(type: 0x8, iid: 12, properties: 0x00B0, format: 0x10, unit: 0x27AD, extra: item(0x0D, [0, 0, 0, 0, 100, 0, 0, 0]) + item(0x0E, [1, 0, 0, 0])),
            characteristic(type: 0x11, iid: 13, properties: 0x0090, format: 0x14, unit: 0x272F, extra: item(0x0D, float(-10) + float(50)) + item(0x0E, float(0.1))),
            characteristic(type: 0x8E, iid: 14, properties: 0x0048, format: 0x04, extra: item(0x11, [0, 1, 3])),
        ])))
        let accessory = item(0x19, item(0x1A, [1, 0]) + item(0x16, list([information, bulb])))
        return item(0x18, list([accessory]))
    }

    @Test("a lightbulb's database: short and whole types, services, characteristics, permissions, formats, units, ranges, steps, valid values")
    func database() throws {
        let database = try GATTDatabase(decoding: Self.lightbulbDatabase())
        #expect(database.warnings.isEmpty)
        let accessory = try #require(database.accessories.first)
        #expect(accessory.aid == 1)
        #expect(accessory.services.map(\.type) == ["0000003E-0000-1000-8000-0026BB765291", "00000043-0000-1000-8000-0026BB765291"])
        let bulb = accessory.services[1]
        #expect(bulb.isPrimary && !bulb.isHidden && bulb.linked == [1])
        let on = bulb.characteristics[0]
        #expect(on.type == "00000025-0000-1000-8000-0026BB765291" && on.format == "bool" && on.perms == ["pr", "pw", "ev"])
        let brightness = bulb.characteristics[1]
        #expect(brightness.format == "int" && brightness.unit == "percentage" && brightness.minValue == 0 && brightness.maxValue == 100 && brightness.minStep == 1)
        let temperature = bulb.characteristics[2]
        #expect(temperature.format == "float" && temperature.unit == "celsius" && temperature.minValue == -10 && temperature.maxValue == 50)
        #expect(temperature.minStep == 0.1, "the step without its float32 noise")
        #expect(bulb.characteristics[3].perms == ["tw", "hd"])
        #expect(bulb.characteristics[3].validValues == [0, 1, 3])
        #expect(database.formats[CharacteristicAddress(aid: 1, iid: 13)] == .float)
        #expect(database.formats.count == 6)
    }

    @Test("a database that is not TLV8 or lists no accessory is refused; an unusable characteristic is skipped with a warning")
    func badDatabases() throws {
        #expect(throws: HAPError.self) { try GATTDatabase(decoding: [0x18, 0x05, 0x00]) }
        #expect(throws: HAPError.self) { try GATTDatabase(decoding: Self.item(0x17, [1])) }
        let noIID = Self.item(0x13, Self.item(0x04, Self.uuid(0x25)))
        let service = Self.item(0x15, Self.item(0x06, Self.uuid(0x43)) + Self.item(0x07, [10, 0]) + Self.item(0x14, noIID))
        let database = try GATTDatabase(decoding: Self.item(0x18, Self.item(0x19, Self.item(0x1A, [1, 0]) + Self.item(0x16, service))))
        #expect(database.accessories[0].services[0].characteristics.isEmpty)
        #expect(database.warnings == ["accessory 1: a characteristic of service 10 without a usable type or instance id is skipped"])
    }
}

extension TLV8.Item {
    /// This item alone in wire form (fragmented at 255 bytes).
    var encodedAlone: [UInt8] {
        var tlv = TLV8()
        tlv.items = [self]
        return tlv.encoded()
    }
}

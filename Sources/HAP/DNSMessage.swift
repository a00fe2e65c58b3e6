/// Just enough of the DNS message format (RFC 1035, with the Multicast DNS details of RFC 6762)
/// for HAP discovery: encoding queries, and decoding responses with name compression and the
/// PTR, SRV, TXT, A and AAAA records DNS-SD uses (other types are kept as raw bytes).
///
/// Decoding checks every length and offset against the packet and throws ``DNSMessageError``
/// for anything that does not fit; it never reads outside the bytes it was given.
struct DNSMessage: Sendable, Equatable {
    /// The header's identifier. Multicast DNS uses 0; responders echo a legacy query's.
    var id: UInt16
    /// The header's flag bits (QR, opcode, AA, TC, RD, RA, Z, AD, CD, RCODE).
    var flags: UInt16
    var questions: [DNSQuestion]
    var answers: [DNSRecord]
    var authorities: [DNSRecord]
    var additionals: [DNSRecord]

    /// The QR bit: a response rather than a query.
    static let responseFlag: UInt16 = 0x8000

    init(id: UInt16 = 0, flags: UInt16 = 0, questions: [DNSQuestion] = [], answers: [DNSRecord] = [],
         authorities: [DNSRecord] = [], additionals: [DNSRecord] = []) {
        self.id = id
        self.flags = flags
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    /// A standard query (all flags clear) for `questions`.
    static func query(id: UInt16, _ questions: [DNSQuestion]) -> DNSMessage {
        DNSMessage(id: id, questions: questions)
    }

    var isResponse: Bool { flags & Self.responseFlag != 0 }

    /// Every record of the answer, authority and additional sections, in that order.
    var allRecords: [DNSRecord] { answers + authorities + additionals }

    /// The header and the questions in wire format, names uncompressed. (Records are not
    /// encoded: a one-shot query carries none.)
    func encodedQuery() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(12 + questions.count * 32)
        bytes.appendDNSUInt16(id)
        bytes.appendDNSUInt16(flags)
        bytes.appendDNSUInt16(UInt16(clamping: questions.count))
        bytes.appendDNSUInt16(UInt16(0))
        bytes.appendDNSUInt16(UInt16(0))
        bytes.appendDNSUInt16(UInt16(0))
        for question in questions.prefix(Int(UInt16.max)) {
            question.name.encode(into: &bytes)
            bytes.appendDNSUInt16(question.type.rawValue)
            bytes.appendDNSUInt16((question.unicastResponse ? 0x8000 : 0) | (question.recordClass & 0x7FFF))
        }
        return bytes
    }

    /// Decodes a whole message.
    init(decoding bytes: [UInt8]) throws(DNSMessageError) {
        var reader = DNSReader(bytes)
        id = try reader.uint16("the header")
        flags = try reader.uint16("the header")
        let questionCount = try reader.uint16("the header")
        let answerCount = try reader.uint16("the header")
        let authorityCount = try reader.uint16("the header")
        let additionalCount = try reader.uint16("the header")
        // Each question takes at least 5 bytes and each record at least 11: refuse counts the
        // packet cannot hold before reserving anything for them.
        let minimum = Int(questionCount) * 5 + (Int(answerCount) + Int(authorityCount) + Int(additionalCount)) * 11
        guard minimum <= reader.remaining else {
            throw .truncated(offset: bytes.count, reading: "the \(questionCount) questions and \(Int(answerCount) + Int(authorityCount) + Int(additionalCount)) records the header announces")
        }
        var questions: [DNSQuestion] = []
        for _ in 0..<questionCount {
            let name = try reader.name()
            let type = try reader.uint16("a question")
            let classField = try reader.uint16("a question")
            questions.append(DNSQuestion(name: name, type: DNSRecordType(rawValue: type), unicastResponse: classField & 0x8000 != 0, recordClass: classField & 0x7FFF))
        }
        self.questions = questions
        answers = try reader.records(Int(answerCount))
        authorities = try reader.records(Int(authorityCount))
        additionals = try reader.records(Int(additionalCount))
    }
}

/// Why a DNS message could not be decoded.
enum DNSMessageError: Error, Equatable, CustomStringConvertible {
    /// The packet ended while reading something.
    case truncated(offset: Int, reading: String)
    /// A compression pointer that does not point to an earlier name (which could loop).
    case badPointer(offset: Int, target: Int)
    /// A label type DNS does not define (the top bits 01 or 10).
    case badLabel(offset: Int, byte: UInt8)
    /// A name longer than DNS allows (255 bytes in wire format).
    case nameTooLong(offset: Int)
    /// A record's data does not have the length its type needs, or a name in it runs past it.
    case badRecordData(offset: Int, type: DNSRecordType, length: Int)

    var description: String {
        switch self {
        case .truncated(let offset, let reading):
            return "malformed DNS message: it ends at byte \(offset) while reading \(reading)"
        case .badPointer(let offset, let target):
            return "malformed DNS message: the compression pointer at byte \(offset) points to byte \(target), not to an earlier name (it could loop)"
        case .badLabel(let offset, let byte):
            return "malformed DNS message: byte \(offset) starts a label of unknown type (0x\(String(byte, radix: 16)))"
        case .nameTooLong(let offset):
            return "malformed DNS message: the name at byte \(offset) is longer than 255 bytes"
        case .badRecordData(let offset, let type, let length):
            return "malformed DNS message: the \(type) record data at byte \(offset) does not fit its length (\(length) bytes)"
        }
    }
}

/// A DNS record type (the 16-bit TYPE field).
struct DNSRecordType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    var rawValue: UInt16

    init(rawValue: UInt16) { self.rawValue = rawValue }

    static let a = DNSRecordType(rawValue: 1)
    static let ptr = DNSRecordType(rawValue: 12)
    static let txt = DNSRecordType(rawValue: 16)
    static let aaaa = DNSRecordType(rawValue: 28)
    static let srv = DNSRecordType(rawValue: 33)
    static let nsec = DNSRecordType(rawValue: 47)
    static let any = DNSRecordType(rawValue: 255)

    var description: String {
        switch self {
        case .a: return "A"
        case .ptr: return "PTR"
        case .txt: return "TXT"
        case .aaaa: return "AAAA"
        case .srv: return "SRV"
        case .nsec: return "NSEC"
        case .any: return "ANY"
        default: return "TYPE\(rawValue)"
        }
    }
}

/// The Internet class, the only one mDNS uses.
let dnsClassIN: UInt16 = 1

/// A domain name as its labels (`["Küche Lamp", "_hap", "_tcp", "local"]`). Labels are bytes on
/// the wire and may contain dots; they are decoded as UTF-8 (DNS-SD names are UTF-8).
///
/// Names compare and hash ignoring ASCII case, as DNS requires.
struct DNSName: Sendable, Hashable, CustomStringConvertible {
    var labels: [String]

    init(labels: [String]) { self.labels = labels }

    /// A name from dotted text (`_hap._tcp.local`, a final dot optional). Only for names whose
    /// labels have no dots of their own.
    init(_ dotted: String) {
        labels = dotted.split(separator: ".", omittingEmptySubsequences: true).map(String.init)
    }

    /// The name with its first label dropped (the parent domain).
    var parent: DNSName { DNSName(labels: Array(labels.dropFirst())) }

    /// The dotted text, without the final dot (labels' own dots are not escaped).
    var description: String { labels.joined(separator: ".") }

    private var folded: [String] {
        labels.map { String(decoding: $0.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self) }
    }

    static func == (lhs: DNSName, rhs: DNSName) -> Bool { lhs.folded == rhs.folded }

    func hash(into hasher: inout Hasher) { hasher.combine(folded) }

    /// Appends the uncompressed wire format. Labels longer than 63 bytes are cut there (they
    /// cannot be sent otherwise).
    func encode(into bytes: inout [UInt8]) {
        for label in labels {
            let utf8 = Array(label.utf8.prefix(63))
            guard !utf8.isEmpty else { continue }
            bytes.append(UInt8(utf8.count))
            bytes.append(contentsOf: utf8)
        }
        bytes.append(0)
    }
}

/// One entry of the question section.
struct DNSQuestion: Sendable, Hashable {
    var name: DNSName
    var type: DNSRecordType
    /// The QU bit (RFC 6762 §5.4): the asker prefers a unicast answer.
    var unicastResponse: Bool
    var recordClass: UInt16

    init(name: DNSName, type: DNSRecordType, unicastResponse: Bool = false, recordClass: UInt16 = dnsClassIN) {
        self.name = name
        self.type = type
        self.unicastResponse = unicastResponse
        self.recordClass = recordClass
    }
}

/// One resource record of the answer, authority or additional section.
struct DNSRecord: Sendable, Equatable {
    var name: DNSName
    var type: DNSRecordType
    /// The class without the cache-flush bit.
    var recordClass: UInt16
    /// The cache-flush bit (RFC 6762 §10.2): this record replaces what a cache has for the name.
    var cacheFlush: Bool
    /// Seconds; 0 announces that the record is gone (a "goodbye").
    var ttl: UInt32
    var data: DNSRecordData
}

/// The decoded data of a record.
enum DNSRecordData: Sendable, Equatable {
    case ptr(DNSName)
    case srv(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName)
    /// The character strings, each as bytes (DNS-SD's `key=value` entries).
    case txt([[UInt8]])
    /// An IPv4 address, 4 bytes in network order.
    case a([UInt8])
    /// An IPv6 address, 16 bytes in network order.
    case aaaa([UInt8])
    /// Any other type, undecoded.
    case other([UInt8])
}

/// Reads a packet front to back; every read checks the bounds first.
private struct DNSReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func uint8(_ what: String) throws(DNSMessageError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(offset: bytes.count, reading: what) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16(_ what: String) throws(DNSMessageError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated(offset: bytes.count, reading: what) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func uint32(_ what: String) throws(DNSMessageError) -> UInt32 {
        let high = try uint16(what)
        let low = try uint16(what)
        return UInt32(high) << 16 | UInt32(low)
    }

    mutating func take(_ count: Int, _ what: String) throws(DNSMessageError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .truncated(offset: bytes.count, reading: what) }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A name at the current offset, following compression pointers; the offset moves past the
    /// name's bytes in place (up to and including its end or its first pointer).
    ///
    /// A pointer must point before the place it is at, and before the start of the label
    /// sequence containing it, so every jump goes strictly backwards and a loop is impossible.
    mutating func name() throws(DNSMessageError) -> DNSName {
        let start = offset
        var labels: [String] = []
        var wireLength = 1 // the final zero byte
        var position = offset
        var resumeAt: Int?
        var sequenceStart = offset
        while true {
            guard position < bytes.count else { throw .truncated(offset: bytes.count, reading: "the name at byte \(start)") }
            let length = bytes[position]
            switch length & 0xC0 {
            case 0x00:
                if length == 0 {
                    offset = resumeAt ?? position + 1
                    return DNSName(labels: labels)
                }
                let end = position + 1 + Int(length)
                guard end <= bytes.count else { throw .truncated(offset: bytes.count, reading: "a label of the name at byte \(start)") }
                wireLength += 1 + Int(length)
                guard wireLength <= 255 else { throw .nameTooLong(offset: start) }
                labels.append(String(decoding: bytes[(position + 1)..<end], as: UTF8.self))
                position = end
            case 0xC0:
                guard position + 1 < bytes.count else { throw .truncated(offset: bytes.count, reading: "a compression pointer of the name at byte \(start)") }
                let target = Int(length & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < sequenceStart else { throw .badPointer(offset: position, target: target) }
                if resumeAt == nil { resumeAt = position + 2 }
                position = target
                sequenceStart = target
            default:
                throw .badLabel(offset: position, byte: length)
            }
        }
    }

    mutating func records(_ count: Int) throws(DNSMessageError) -> [DNSRecord] {
        var records: [DNSRecord] = []
        records.reserveCapacity(count)
        for _ in 0..<count {
            records.append(try record())
        }
        return records
    }

    mutating func record() throws(DNSMessageError) -> DNSRecord {
        let owner = try name()
        let type = DNSRecordType(rawValue: try uint16("a record's header"))
        let classField = try uint16("a record's header")
        let ttl = try uint32("a record's header")
        let length = Int(try uint16("a record's header"))
        let dataStart = offset
        guard remaining >= length else { throw .truncated(offset: bytes.count, reading: "the \(length) bytes of \(type) record data at byte \(dataStart)") }
        let dataEnd = dataStart + length
        let badData = DNSMessageError.badRecordData(offset: dataStart, type: type, length: length)
        let data: DNSRecordData
        switch type {
        case .ptr:
            let target = try name()
            guard offset <= dataEnd else { throw badData }
            data = .ptr(target)
        case .srv:
            guard length >= 7 else { throw badData }
            let priority = try uint16("SRV data")
            let weight = try uint16("SRV data")
            let port = try uint16("SRV data")
            let target = try name()
            guard offset <= dataEnd else { throw badData }
            data = .srv(priority: priority, weight: weight, port: port, target: target)
        case .txt:
            var strings: [[UInt8]] = []
            while offset < dataEnd {
                let count = Int(try uint8("TXT data"))
                guard offset + count <= dataEnd else { throw badData }
                strings.append(try take(count, "TXT data"))
            }
            data = .txt(strings)
        case .a:
            guard length == 4 else { throw badData }
            data = .a(try take(4, "A data"))
        case .aaaa:
            guard length == 16 else { throw badData }
            data = .aaaa(try take(16, "AAAA data"))
        default:
            data = .other(try take(length, "record data"))
        }
        offset = dataEnd
        return DNSRecord(name: owner, type: type, recordClass: classField & 0x7FFF, cacheFlush: classField & 0x8000 != 0, ttl: ttl, data: data)
    }
}

extension [UInt8] {
    fileprivate mutating func appendDNSUInt16(_ value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(value & 0xFF))
    }
}

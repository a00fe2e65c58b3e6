import Foundation
import Testing
@testable import HAP
#if canImport(Glibc)
import Glibc
#endif

/// The DNS message codec and the discovery logic that turns responses into accessories, on
/// canned packets (two made by python-zeroconf 0.154.0, others by hand); and a browse against a
/// unicast responder on 127.0.0.1 (no multicast), for the follow-up queries.
@Suite("DNS messages and mDNS discovery")
struct DNSMessageTests {
    // MARK: Encoding

    @Test("a PTR query for _hap._tcp.local, QU bit set, encodes byte for byte")
    func encodeQuery() {
        let query = DNSMessage.query(id: 0x1234, [DNSQuestion(name: DNSName("_hap._tcp.local."), type: .ptr, unicastResponse: true)])
        let expected: [UInt8] = [
            0x12, 0x34, // id
            0x00, 0x00, // flags: a standard query
            0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 1 question, no records
            0x04, 0x5F, 0x68, 0x61, 0x70, // _hap
            0x04, 0x5F, 0x74, 0x63, 0x70, // _tcp
            0x05, 0x6C, 0x6F, 0x63, 0x61, 0x6C, // local
            0x00,
            0x00, 0x0C, // PTR
            0x80, 0x01, // QU + IN
        ]
        #expect(query.encodedQuery() == expected)
    }

    @Test("a query with several questions, labels in UTF-8, QU clear, round-trips")
    func encodeSeveral() throws {
        let questions = [
            DNSQuestion(name: DNSName(labels: ["Küche Lamp", "_hap", "_tcp", "local"]), type: .srv),
            DNSQuestion(name: DNSName(labels: ["Küche Lamp", "_hap", "_tcp", "local"]), type: .txt),
            DNSQuestion(name: DNSName("lamp.local"), type: .a),
        ]
        let bytes = DNSMessage.query(id: 7, questions).encodedQuery()
        #expect(Array(bytes[12..<24]) == [11] + Array("Küche Lamp".utf8))
        let decoded = try DNSMessage(decoding: bytes)
        #expect(decoded.id == 7)
        #expect(!decoded.isResponse)
        #expect(decoded.questions == questions)
        #expect(decoded.answers.isEmpty && decoded.additionals.isEmpty)
    }

    // MARK: Decoding canned responses

    /// python-zeroconf 0.154.0's answer to a legacy-unicast PTR query for `_hap._tcp.local`
    /// (id 0x1234, question echoed), captured inside a network namespace from `Tests/Fixtures/hap/mdns_advertiser.py`:
    /// 2 PTR answers; SRV, TXT, A and NSEC records of both services as additionals; names
    /// compressed throughout.
    static let zeroconfLegacyAnswer = hex("""
        123484000001000200000008045f686170045f746370056c6f63616c00000c0001c00c000c000100001194001714\
        486f6d6547617465205465737420427269646765c00cc00c000c000100001194000e0b4bc3bc636865204c616d70\
        c00c14686f6d65676174652d746573742d627269646765c016002f0001000000780005c05e000140c02d00100001\
        0000119400500463233d330466663d301469643d41413a42423a43433a30303a31313a32320e6d643d4847204272\
        69646765203106707\
        63d312e310473233d310473663d310463693d320b73683d4162336445513d3dc05e000100010000007800047f00\
        0001c02d0021000100000078000800000000ca72c05ec0500021000100000078001b00000000ca7312686f6d6567\
        6174652d746573742d6c616d70c016c050001000010000119400520563233d31320466663d311469643d44453a41\
        443a42453a45463a30303a30350f6d643d4c616d70204d6f64656c20350670763d312e310473233d310473663d30\
        0463693d350b73683d3978386651773d3dc116002f0001000000780005c116000140c116000100010000007800047f\
        000001
        """)

    /// A multicast response python-zeroconf 0.154.0 encodes (`DNSOutgoing`) for a garage door
    /// opener with an IPv4 and an IPv6 address: cache-flush bits on SRV, TXT, A and AAAA.
    static let zeroconfGarageDoor = hex("""
        000084000000000100000004045f686170045f746370056c6f63616c00000c000100001194000e0b476172616765\
        20446f6f72c00cc027002180010000007800140000000013890b6761726167652d646f6f72c016c0270010800100\
        001194003f0463233d321469643d31313a32323a33333a34343a35353a3636096d643d4f70656e65720473663d30\
        0463693d340670763d312e310473233d310466663d30c04700018001000000780004c0a80128c047001c80010000\
        00780010fd000000000000000000000000010002
        """)

    @Test("python-zeroconf's legacy-unicast answer decodes: sections, types, compressed names")
    func decodeZeroconfAnswer() throws {
        let message = try DNSMessage(decoding: Self.zeroconfLegacyAnswer)
        #expect(message.id == 0x1234)
        #expect(message.isResponse)
        #expect(message.questions == [DNSQuestion(name: DNSName("_hap._tcp.local"), type: .ptr)], "the question echoed back")
        #expect(message.answers.map(\.type) == [.ptr, .ptr])
        #expect(message.additionals.map(\.type) == [.nsec, .txt, .a, .srv, .srv, .txt, .nsec, .a])
        let bridge = DNSName(labels: ["HomeGate Test Bridge", "_hap", "_tcp", "local"])
        let lamp = DNSName(labels: ["Küche Lamp", "_hap", "_tcp", "local"])
        #expect(message.answers.map(\.data) == [.ptr(bridge), .ptr(lamp)])
        #expect(message.answers.allSatisfy { $0.name == DNSName("_hap._tcp.local") && $0.ttl == 4500 && $0.recordClass == 1 })
        let srv = message.additionals.filter { $0.type == .srv }
        #expect(srv.map(\.name) == [bridge, lamp])
        #expect(srv.map(\.data) == [
            .srv(priority: 0, weight: 0, port: 51826, target: DNSName("homegate-test-bridge.local")),
            .srv(priority: 0, weight: 0, port: 51827, target: DNSName("homegate-test-lamp.local")),
        ])
        let a = message.additionals.filter { $0.type == .a }
        #expect(a.map(\.name) == [DNSName("homegate-test-bridge.local"), DNSName("homegate-test-lamp.local")])
        #expect(a.map(\.data) == [.a([127, 0, 0, 1]), .a([127, 0, 0, 1])])
    }

    @Test("python-zeroconf's legacy-unicast answer gives both accessories, sorted by name")
    func zeroconfAnswerToAccessories() throws {
        var collector = DiscoveryCollector()
        collector.add(try DNSMessage(decoding: Self.zeroconfLegacyAnswer))
        #expect(collector.missingQuestions().isEmpty)
        let found = collector.accessories()
        #expect(found == [
            DiscoveredAccessory(
                name: "HomeGate Test Bridge", deviceID: "AA:BB:CC:00:11:22", model: "HG Bridge 1", categoryIdentifier: 2,
                isPaired: false, host: "127.0.0.1", port: 51826, configurationNumber: 3,
                txt: ["c#": "3", "ff": "0", "id": "AA:BB:CC:00:11:22", "md": "HG Bridge 1", "pv": "1.1", "s#": "1", "sf": "1", "ci": "2", "sh": "Ab3dEQ=="]
            ),
            DiscoveredAccessory(
                name: "Küche Lamp", deviceID: "DE:AD:BE:EF:00:05", model: "Lamp Model 5", categoryIdentifier: 5,
                isPaired: true, host: "127.0.0.1", port: 51827, configurationNumber: 12,
                txt: ["c#": "12", "ff": "1", "id": "DE:AD:BE:EF:00:05", "md": "Lamp Model 5", "pv": "1.1", "s#": "1", "sf": "0", "ci": "5", "sh": "9x8fQw=="]
            ),
        ])
    }

    @Test("python-zeroconf's multicast response: cache-flush bits, IPv4 preferred over IPv6")
    func zeroconfGarageDoor() throws {
        let message = try DNSMessage(decoding: Self.zeroconfGarageDoor)
        #expect(message.id == 0)
        #expect(message.answers.map(\.cacheFlush) == [false])
        #expect(message.additionals.map(\.cacheFlush) == [true, true, true, true])
        #expect(message.additionals.map(\.recordClass) == [1, 1, 1, 1])
        #expect(message.additionals.last?.data == .aaaa([0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2]))
        var collector = DiscoveryCollector()
        collector.add(message)
        let found = try #require(collector.accessories().first)
        #expect(found.name == "Garage Door")
        #expect(found.deviceID == "11:22:33:44:55:66")
        #expect(found.model == "Opener")
        #expect(found.categoryIdentifier == 4)
        #expect(found.isPaired)
        #expect(found.host == "192.168.1.40")
        #expect(found.port == 5001)
        #expect(found.configurationNumber == 2)
    }

    @Test("a hand-made response: pointers into earlier names and into record data, AAAA only, odd TXT entries")
    func handMadeResponse() throws {
        var packet = DNSPacketBuilder()
        packet.header(id: 0, flags: 0x8400, answers: 1, additionals: 3)
        // PTR: _hap._tcp.local -> "Hall.Light" (a dot inside the label) + pointer to _hap._tcp.local
        let service = packet.offset
        packet.labels(["_hap", "_tcp", "local"])
        packet.end()
        packet.recordHeader(type: 12, ttl: 4500)
        packet.data { body in
            body.labels(["Hall.Light"])
            body.pointer(to: service)
        }
        // SRV: name is a pointer to the PTR's target (inside the record data above)
        let instance = service + 17 + 8 + 2 // after the service name, type, class, TTL and data length
        packet.pointer(to: instance)
        packet.recordHeader(type: 33, ttl: 120, cacheFlush: true)
        let target = packet.offset + 2 + 6 // rdlength, then priority, weight, port
        packet.data { body in
            body.uint16(0)
            body.uint16(0)
            body.uint16(8080)
            body.labels(["hall-light"])
            body.pointer(to: service + 10) // "local", after "_hap" and "_tcp"
        }
        // TXT: a boolean key, a repeated key (the first wins), a key in capitals, an empty
        // string and one starting with "=" (both skipped)
        packet.pointer(to: instance)
        packet.recordHeader(type: 16, ttl: 4500)
        packet.data { body in
            for entry in ["id=01:02:03:04:05:06", "ID=ignored", "MD=Hall", "debug", "", "=x", "sf=1", "ci=5", "c#=x"] {
                body.string(entry)
            }
        }
        // AAAA for the SRV target, its name a pointer into the SRV data
        packet.pointer(to: target)
        packet.recordHeader(type: 28, ttl: 120, cacheFlush: true)
        packet.data { body in body.raw([0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [0x07]) }

        let message = try DNSMessage(decoding: packet.bytes)
        let instanceName = DNSName(labels: ["Hall.Light", "_hap", "_tcp", "local"])
        #expect(message.answers.first?.data == .ptr(instanceName))
        #expect(message.additionals.map(\.name) == [instanceName, instanceName, DNSName("hall-light.local")])
        var collector = DiscoveryCollector()
        collector.add(message)
        let found = try #require(collector.accessories().first)
        #expect(found.name == "Hall.Light")
        #expect(found.deviceID == "01:02:03:04:05:06")
        #expect(found.model == "Hall")
        #expect(found.txt == ["id": "01:02:03:04:05:06", "md": "Hall", "debug": "", "sf": "1", "ci": "5", "c#": "x"])
        #expect(!found.isPaired)
        #expect(found.categoryIdentifier == 5)
        #expect(found.configurationNumber == nil)
        #expect(found.host == "fe80::7")
        #expect(found.port == 8080)
    }

    @Test("names compare ignoring ASCII case")
    func caseInsensitiveNames() {
        #expect(DNSName("_HAP._TCP.Local") == DNSName("_hap._tcp.local."))
        #expect(Set([DNSName("A.local"), DNSName("a.LOCAL")]).count == 1)
        #expect(DNSName("a.local") != DNSName("b.local"))
    }

    // MARK: Malformed packets

    @Test("every truncation of a real answer throws, none crashes")
    func truncations() {
        let full = Self.zeroconfLegacyAnswer
        for length in 0..<full.count {
            #expect(throws: DNSMessageError.self, "\(length) bytes") { try DNSMessage(decoding: Array(full[0..<length])) }
        }
    }

    @Test("a truncated packet says where it ended and what it was reading")
    func truncatedMessage() throws {
        let error = try #require(throws: DNSMessageError.self) { try DNSMessage(decoding: Array(Self.zeroconfLegacyAnswer[0..<40])) }
        #expect(error.description.hasPrefix("malformed DNS message: it ends at byte 40 while reading"))
        #expect(throws: DNSMessageError.truncated(offset: 5, reading: "the header")) { try DNSMessage(decoding: [0, 0, 0x84, 0, 0]) }
    }

    @Test("a compression pointer to itself throws (a loop)")
    func selfPointer() {
        var packet = DNSPacketBuilder()
        packet.header(id: 0, flags: 0, questions: 1)
        packet.pointer(to: 12)
        packet.uint16(12)
        packet.uint16(1)
        #expect(throws: DNSMessageError.badPointer(offset: 12, target: 12)) { try DNSMessage(decoding: packet.bytes) }
    }

    @Test("pointers that would loop between two names throw")
    func pointerCycle() {
        // A record's name at 12 is "a" + a pointer to 16, where a pointer leads back to 12.
        var packet = DNSPacketBuilder()
        packet.header(id: 0, flags: 0x8400, answers: 1)
        packet.labels(["a"])
        packet.pointer(to: 16)
        packet.pointer(to: 12)
        packet.raw([UInt8](repeating: 0, count: 10))
        #expect(throws: DNSMessageError.badPointer(offset: 14, target: 16)) { try DNSMessage(decoding: packet.bytes) }

        // A pointer back to the start of its own name, after a label.
        var own = DNSPacketBuilder()
        own.header(id: 0, flags: 0x8400, answers: 1)
        own.labels(["a", "b"])
        own.pointer(to: 12)
        own.raw([UInt8](repeating: 0, count: 10))
        #expect(throws: DNSMessageError.badPointer(offset: 16, target: 12)) { try DNSMessage(decoding: own.bytes) }

        // In record data: a PTR whose target points to itself.
        var data = DNSPacketBuilder()
        data.header(id: 0, flags: 0x8400, answers: 1)
        data.labels(["_hap", "_tcp", "local"])
        data.end()
        data.recordHeader(type: 12, ttl: 10)
        data.uint16(2)
        data.pointer(to: data.offset)
        #expect(throws: DNSMessageError.badPointer(offset: 39, target: 39)) { try DNSMessage(decoding: data.bytes) }
    }

    @Test("a pointer cut in half, a pointer past the end, a reserved label type, an overlong name")
    func otherBadNames() throws {
        var half = DNSPacketBuilder()
        half.header(id: 0, flags: 0, questions: 1)
        half.labels(["abcdef"])
        half.raw([0xC0])
        #expect(throws: DNSMessageError.truncated(offset: 20, reading: "a compression pointer of the name at byte 12")) { try DNSMessage(decoding: half.bytes) }

        var past = DNSPacketBuilder()
        past.header(id: 0, flags: 0, questions: 1)
        past.pointer(to: 0x3FFF)
        past.uint16(12)
        past.uint16(1)
        #expect(throws: DNSMessageError.badPointer(offset: 12, target: 0x3FFF)) { try DNSMessage(decoding: past.bytes) }

        var reserved = DNSPacketBuilder()
        reserved.header(id: 0, flags: 0, questions: 1)
        reserved.raw([0x41, 0x61, 0, 0, 0, 0, 0])
        #expect(throws: DNSMessageError.badLabel(offset: 12, byte: 0x41)) { try DNSMessage(decoding: reserved.bytes) }

        var long = DNSPacketBuilder()
        long.header(id: 0, flags: 0, questions: 1)
        long.labels(Array(repeating: String(repeating: "x", count: 63), count: 5))
        long.end()
        long.uint16(1)
        long.uint16(1)
        #expect(throws: DNSMessageError.nameTooLong(offset: 12)) { try DNSMessage(decoding: long.bytes) }
    }

    @Test("record data of the wrong length throws")
    func badRecordData() {
        for (type, length) in [(UInt16(1), 5), (28, 4), (33, 6)] {
            var packet = DNSPacketBuilder()
            packet.header(id: 0, flags: 0x8400, answers: 1)
            packet.labels(["x", "local"])
            packet.end()
            packet.recordHeader(type: type, ttl: 10)
            packet.uint16(UInt16(length))
            packet.raw([UInt8](repeating: 0, count: length))
            #expect(throws: DNSMessageError.badRecordData(offset: 31, type: DNSRecordType(rawValue: type), length: length)) {
                try DNSMessage(decoding: packet.bytes)
            }
        }
        // A TXT string running past the record's data, though not past the packet.
        var txt = DNSPacketBuilder()
        txt.header(id: 0, flags: 0x8400, answers: 1)
        txt.labels(["x", "local"])
        txt.end()
        txt.recordHeader(type: 16, ttl: 10)
        txt.uint16(3)
        txt.raw([5, 0x61, 0x62, 0x63, 0x64, 0x65])
        #expect(throws: DNSMessageError.badRecordData(offset: 31, type: .txt, length: 3)) { try DNSMessage(decoding: txt.bytes) }
    }

    @Test("a header announcing more records than the packet can hold throws before reading them")
    func hugeCounts() {
        var packet = DNSPacketBuilder()
        packet.header(id: 0, flags: 0x8400, answers: 0xFFFF, additionals: 0xFFFF)
        #expect(throws: DNSMessageError.self) { try DNSMessage(decoding: packet.bytes) }
    }

    @Test("random corruptions of real answers decode or throw, never crash")
    func corruptions() {
        var generator = DNSTestRandom(seed: 0x686F_6D65_6761_7465)
        for original in [Self.zeroconfLegacyAnswer, Self.zeroconfGarageDoor] {
            for _ in 0..<3000 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator)) }
                if let message = try? DNSMessage(decoding: bytes) {
                    var collector = DiscoveryCollector()
                    collector.add(message)
                    _ = collector.accessories()
                    _ = collector.missingQuestions()
                }
            }
        }
    }

    // MARK: Follow-ups and goodbyes

    @Test("a PTR alone asks for SRV and TXT; an SRV without an address asks for A; the SRV target stands in for the host")
    func followUpQuestions() throws {
        let instance = DNSName(labels: ["Lamp", "_hap", "_tcp", "local"])
        let host = DNSName("lamp-host.local")
        var collector = DiscoveryCollector()
        collector.add(Self.response([Self.record(Discovery.serviceType, .ptr(instance))]))
        #expect(collector.accessories().isEmpty)
        #expect(collector.missingQuestions() == [
            DNSQuestion(name: instance, type: .srv, unicastResponse: true),
            DNSQuestion(name: instance, type: .txt, unicastResponse: true),
        ])
        collector.add(Self.response([
            Self.record(instance, .srv(priority: 0, weight: 0, port: 1234, target: host)),
            Self.record(instance, .txt([Array("id=AA".utf8), Array("sf=0".utf8)])),
        ]))
        #expect(collector.missingQuestions() == [DNSQuestion(name: host, type: .a, unicastResponse: true)])
        #expect(collector.accessories().map(\.host) == ["lamp-host.local"])
        collector.add(Self.response([Self.record(host, .a([10, 0, 0, 9]))]))
        #expect(collector.missingQuestions().isEmpty)
        #expect(collector.accessories().map(\.host) == ["10.0.0.9"])
        #expect(collector.accessories().map(\.isPaired) == [true])
    }

    @Test("a _hap._udp service (HAP over CoAP, Thread) asks for AAAA, prefers its IPv6 address and says coap")
    func coapService() throws {
        let instance = DNSName(labels: ["Eve Energy 20EBU", "_hap", "_udp", "local"])
        let host = DNSName("eve-energy.local")
        var collector = DiscoveryCollector()
        collector.add(Self.response([
            Self.record(Discovery.coapServiceType, .ptr(instance)),
            Self.record(instance, .srv(priority: 0, weight: 0, port: 5683, target: host)),
            Self.record(instance, .txt([Array("id=AB:CD:EF:01:02:03".utf8), Array("sf=1".utf8), Array("ci=7".utf8)])),
        ]))
        #expect(collector.missingQuestions() == [DNSQuestion(name: host, type: .aaaa, unicastResponse: true)])
        collector.add(Self.response([Self.record(host, .a([10, 0, 0, 9])), Self.record(host, .aaaa([0xFD, 0x12] + [UInt8](repeating: 0, count: 13) + [0x05]))]))
        let found = try #require(collector.accessories().first)
        #expect(found.transport == .coap)
        #expect(found.host == "fd12::5")
        #expect(found.port == 5683)
        #expect(!found.isPaired)
    }

    @Test("a goodbye (TTL 0) PTR removes the service")
    func goodbye() throws {
        var collector = DiscoveryCollector()
        collector.add(try DNSMessage(decoding: Self.zeroconfLegacyAnswer))
        let lamp = DNSName(labels: ["Küche Lamp", "_hap", "_tcp", "local"])
        collector.add(Self.response([Self.record(Discovery.serviceType, .ptr(lamp), ttl: 0)]))
        #expect(collector.accessories().map(\.name) == ["HomeGate Test Bridge"])
    }

    @Test("follow-up questions wait a moment, then go out at most three times, half a second apart")
    func followUpSchedule() {
        let question = DNSQuestion(name: DNSName("x.local"), type: .a, unicastResponse: true)
        var schedule = FollowUpSchedule()
        let start = ContinuousClock.now
        #expect(schedule.due([question], at: start).isEmpty)
        #expect(schedule.nextCheck == start + .milliseconds(100))
        #expect(schedule.due([question], at: start + .milliseconds(100)) == [[question]])
        #expect(schedule.due([question], at: start + .milliseconds(400)).isEmpty)
        #expect(schedule.due([question], at: start + .milliseconds(600)) == [[question]])
        #expect(schedule.due([question], at: start + .milliseconds(1100)) == [[question]])
        #expect(schedule.nextCheck == nil)
        #expect(schedule.due([question], at: start + .seconds(5)).isEmpty)
        // Many questions go out in packets of eight.
        let many = (0..<20).map { DNSQuestion(name: DNSName("h\($0).local"), type: .a) }
        var fresh = FollowUpSchedule()
        _ = fresh.due(many, at: start)
        #expect(fresh.due(many, at: start + .milliseconds(100)).map(\.count) == [8, 8, 4])
    }

    // MARK: Browsing against a unicast responder (no multicast)

    @Test("browse sends the PTR query, resends it, asks the follow-ups and lists the accessory")
    func browseAgainstUnicastResponder() async throws {
        let responder = try FakeMDNSResponder()
        defer { responder.stop() }
        let found = try await Discovery.browse(for: .milliseconds(900), destination: "127.0.0.1", port: responder.port)
        #expect(found == [
            DiscoveredAccessory(
                name: "Porch Light", deviceID: "0A:0B:0C:0D:0E:0F", model: "PL1", categoryIdentifier: 5, isPaired: false,
                host: "127.0.0.7", port: 40_000, configurationNumber: 9, txt: ["id": "0A:0B:0C:0D:0E:0F", "md": "PL1", "ci": "5", "sf": "1", "c#": "9"]
            ),
        ])
        let asked = responder.questions
        let ptrQueries = asked.filter { $0 == [DNSQuestion(name: Discovery.serviceType, type: .ptr, unicastResponse: true),
                                               DNSQuestion(name: Discovery.coapServiceType, type: .ptr, unicastResponse: true)] }
        #expect(ptrQueries.count == 3, "the query (HAP over IP and over CoAP in one) and two resends: \(asked)")
        let followUps = Set(asked.flatMap { $0 }.filter { $0.type != .ptr }.map { "\($0.type) \($0.name)" })
        #expect(followUps == ["SRV Porch Light._hap._tcp.local", "TXT Porch Light._hap._tcp.local", "A porch.local"])
    }

    @Test("browse refuses a destination that is not an IPv4 address")
    func badDestination() async {
        let error = await #expect(throws: HAPError.self) { try await Discovery.browse(for: .milliseconds(10), destination: "mdns.example") }
        #expect(error?.kind == .connection)
        #expect(error?.message == "mDNS destination mdns.example is not an IPv4 address")
    }

    // MARK: Helpers

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter(\.isHexDigit).utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    static func record(_ name: DNSName, _ data: DNSRecordData, ttl: UInt32 = 120) -> DNSRecord {
        let type: DNSRecordType = switch data {
        case .ptr: .ptr
        case .srv: .srv
        case .txt: .txt
        case .a: .a
        case .aaaa: .aaaa
        case .other: DNSRecordType(rawValue: 99)
        }
        return DNSRecord(name: name, type: type, recordClass: 1, cacheFlush: false, ttl: ttl, data: data)
    }

    static func response(_ answers: [DNSRecord]) -> DNSMessage {
        DNSMessage(id: 0, flags: 0x8400, answers: answers)
    }
}

/// Writes DNS packets byte by byte, so tests can place compression pointers where they like.
struct DNSPacketBuilder {
    var bytes: [UInt8] = []

    var offset: Int { bytes.count }

    mutating func raw(_ more: [UInt8]) { bytes += more }

    mutating func uint16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }

    mutating func uint32(_ value: UInt32) {
        uint16(UInt16(value >> 16))
        uint16(UInt16(value & 0xFFFF))
    }

    mutating func header(id: UInt16, flags: UInt16, questions: UInt16 = 0, answers: UInt16 = 0, authorities: UInt16 = 0, additionals: UInt16 = 0) {
        for value in [id, flags, questions, answers, authorities, additionals] { uint16(value) }
    }

    /// Labels without the end (follow with ``end()`` or ``pointer(to:)``).
    mutating func labels(_ labels: [String]) {
        for label in labels {
            bytes.append(UInt8(label.utf8.count))
            bytes += Array(label.utf8)
        }
    }

    mutating func end() { bytes.append(0) }

    mutating func pointer(to target: Int) { uint16(0xC000 | UInt16(target)) }

    /// One TXT character string.
    mutating func string(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += Array(text.utf8)
    }

    /// Type, class (IN, optionally with cache-flush) and TTL (8 bytes); the name comes before,
    /// the data length and data after (``data(_:)``).
    mutating func recordHeader(type: UInt16, ttl: UInt32, cacheFlush: Bool = false) {
        uint16(type)
        uint16(cacheFlush ? 0x8001 : 0x0001)
        uint32(ttl)
    }

    /// The record data with its length in front; `body` writes into this same packet, so
    /// offsets inside it are offsets in the packet.
    mutating func data(_ body: (inout DNSPacketBuilder) -> Void) {
        let lengthAt = offset
        uint16(0)
        body(&self)
        let length = offset - lengthAt - 2
        bytes[lengthAt] = UInt8(length >> 8)
        bytes[lengthAt + 1] = UInt8(length & 0xFF)
    }

    /// An uncompressed response.
    static func response(id: UInt16, _ records: [DNSRecord]) -> [UInt8] {
        var packet = DNSPacketBuilder()
        packet.header(id: id, flags: 0x8400, answers: UInt16(records.count))
        for record in records {
            packet.labels(record.name.labels)
            packet.end()
            packet.recordHeader(type: record.type.rawValue, ttl: record.ttl)
            packet.data { body in
                switch record.data {
                case .ptr(let name):
                    body.labels(name.labels)
                    body.end()
                case .srv(let priority, let weight, let port, let target):
                    body.uint16(priority)
                    body.uint16(weight)
                    body.uint16(port)
                    body.labels(target.labels)
                    body.end()
                case .txt(let strings):
                    for string in strings {
                        body.raw([UInt8(string.count)] + string)
                    }
                case .a(let address), .aaaa(let address), .other(let address):
                    body.raw(address)
                }
            }
        }
        return packet.bytes
    }
}

/// A deterministic random number generator, so a failing corruption can be reproduced.
struct DNSTestRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A DNS responder on 127.0.0.1 that answers like a stingy mDNS responder: a PTR query gets
/// only the PTR, a query for SRV or TXT only that record, a query for A only the address; so
/// a browse must ask the follow-up questions. It records each query's questions.
final class FakeMDNSResponder: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32
    private let lock = NSLock()
    private var asked: [[DNSQuestion]] = []
    private var stopped = false

    var questions: [[DNSQuestion]] { lock.withLock { asked } }

    struct SetupError: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) { self.description = description }
    }

    static let instance = DNSName(labels: ["Porch Light", "_hap", "_tcp", "local"])
    static let host = DNSName("porch.local")

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw FakeMDNSResponder.SetupError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            close(descriptor)
            throw FakeMDNSResponder.SetupError("bind() failed")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        var wait = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Asks the responder's thread to end; it closes the socket itself within its 50 ms receive
    /// timeout, so the caller (a test on the cooperative pool) never waits for it.
    func stop() {
        lock.withLock { stopped = true }
    }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 9000)
        while !lock.withLock({ stopped }) {
            var sender = sockaddr_in()
            var senderLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &sender) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &buffer, buffer.count, 0, $0, &senderLength) }
            }
            guard count > 0, let query = try? DNSMessage(decoding: Array(buffer[0..<count])) else { continue }
            lock.withLock { asked.append(query.questions) }
            let records = query.questions.compactMap(Self.answer)
            guard !records.isEmpty else { continue }
            let reply = DNSPacketBuilder.response(id: query.id, records)
            _ = withUnsafePointer(to: &sender) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, reply, reply.count, 0, $0, senderLength) }
            }
        }
        close(descriptor)
    }

    private static func answer(_ question: DNSQuestion) -> DNSRecord? {
        switch (question.type, question.name) {
        case (.ptr, Discovery.serviceType):
            return DNSMessageTests.record(Discovery.serviceType, .ptr(instance), ttl: 4500)
        case (.srv, instance):
            return DNSMessageTests.record(instance, .srv(priority: 0, weight: 0, port: 40_000, target: host))
        case (.txt, instance):
            let entries = ["id=0A:0B:0C:0D:0E:0F", "md=PL1", "ci=5", "sf=1", "c#=9"]
            return DNSMessageTests.record(instance, .txt(entries.map { Array($0.utf8) }), ttl: 4500)
        case (.a, host):
            return DNSMessageTests.record(host, .a([127, 0, 0, 7]))
        default:
            return nil
        }
    }
}

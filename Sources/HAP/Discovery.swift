import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Timing

/// A HomeKit accessory server (an accessory or a bridge) that answered a discovery browse.
public struct DiscoveredAccessory: Sendable, Hashable {
    /// The service instance name (the name people see, `Living Room Lamp`).
    public let name: String
    /// The `id` TXT key: the accessory's device id (`AA:BB:CC:DD:EE:FF`); empty if absent.
    public let deviceID: String
    /// The `md` TXT key: the model name; empty if absent.
    public let model: String
    /// The `ci` TXT key: the HAP accessory category (1 other, 2 bridge, 5 lightbulb, ...).
    public let categoryIdentifier: Int?
    /// Whether the accessory is paired with a controller: bit 0 of the `sf` status flags is clear
    /// (an absent `sf` counts as 0, as aiohomekit reads it).
    public let isPaired: Bool
    /// Its IPv4 address if one answered, else its IPv6 address, else the SRV target host name.
    public let host: String
    /// The TCP port of its HAP server (from the SRV record).
    public let port: Int
    /// The `c#` TXT key: the configuration number, which grows when its accessories change.
    public let configurationNumber: Int?
    /// Every TXT entry, keys in lower case (DNS-SD keys ignore case); a key without `=` has the
    /// value "".
    public let txt: [String: String]

    public init(name: String, deviceID: String, model: String, categoryIdentifier: Int?, isPaired: Bool,
                host: String, port: Int, configurationNumber: Int?, txt: [String: String]) {
        self.name = name
        self.deviceID = deviceID
        self.model = model
        self.categoryIdentifier = categoryIdentifier
        self.isPaired = isPaired
        self.host = host
        self.port = port
        self.configurationNumber = configurationNumber
        self.txt = txt
    }
}

/// Finding HomeKit accessories on the local network by Multicast DNS (DNS-SD, `_hap._tcp.local`).
public enum Discovery {
    /// The DNS-SD service type of HAP over IP.
    static let serviceType = DNSName("_hap._tcp.local")

    /// Sends a one-shot ("legacy unicast", RFC 6762 §5.1 and §6.7) PTR query for
    /// `_hap._tcp.local` from an ephemeral UDP port to `destination`:`port` and collects the
    /// answers for `duration`; returns the accessories found, sorted by name.
    ///
    /// Responders answer a query from a port other than 5353 by unicast to the sender, so this
    /// does not join the multicast group or need port 5353. The query is sent again at a third
    /// and at two thirds of the duration; services whose SRV or TXT record, or hosts whose
    /// address, did not come with the answers are asked for by name. An accessory is listed once
    /// its SRV and TXT records are known; packets that are not valid DNS are ignored.
    ///
    /// The socket work runs on a thread of its own. Cancelling the task ends the browse early
    /// with what was found so far.
    /// - Throws: ``HAPError`` (``HAPError/Kind/connection``) if the socket cannot be made or the
    ///   query cannot be sent (no route to the multicast group, for one).
    public static func browse(for duration: Duration = .seconds(3), destination: String = "224.0.0.251", port: Int = 5353) async throws(HAPError) -> [DiscoveredAccessory] {
        let stop = StopFlag()
        let result: Result<[DiscoveredAccessory], HAPError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    continuation.resume(returning: browseNow(duration: duration, destination: destination, port: port, stop: stop))
                }
                thread.name = "hap discovery"
                thread.start()
            }
        } onCancel: {
            stop.set()
        }
        return try result.get()
    }

    /// The blocking browse.
    static func browseNow(duration: Duration, destination: String, port: Int, stop: StopFlag) -> Result<[DiscoveredAccessory], HAPError> {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, destination, &address.sin_addr) == 1 else {
            return .failure(HAPError(.connection, "mDNS destination \(destination) is not an IPv4 address"))
        }
        guard (1...65_535).contains(port) else {
            return .failure(HAPError(.connection, "mDNS port \(port) is out of range"))
        }
        address.sin_port = UInt16(port).bigEndian
        let socket: DatagramSocket
        switch DatagramSocket.open() {
        case .success(let opened): socket = opened
        case .failure(let error): return .failure(error)
        }
        defer { socket.close() }

        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + max(duration, .zero)
        var resends = [start + duration / 3, start + duration * 2 / 3]
        let queryID = UInt16.random(in: 1...UInt16.max)
        let browseQuery = DNSMessage.query(id: queryID, [DNSQuestion(name: serviceType, type: .ptr, unicastResponse: true)]).encodedQuery()
        if let reason = socket.send(browseQuery, to: address) {
            return .failure(HAPError(.connection, "cannot send the mDNS query to \(destination):\(port): \(reason)"))
        }

        var collector = DiscoveryCollector()
        var followUps = FollowUpSchedule()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stop.isSet {
            let now = clock.now
            if now >= deadline { break }
            if let next = resends.first, now >= next {
                resends.removeFirst()
                _ = socket.send(browseQuery, to: address)
            }
            for packet in followUps.due(collector.missingQuestions(), at: now) {
                _ = socket.send(DNSMessage.query(id: queryID, packet).encodedQuery(), to: address)
            }
            var wake = min(deadline, now + .milliseconds(100))
            if let next = resends.first { wake = min(wake, next) }
            if let next = followUps.nextCheck { wake = min(wake, max(next, now + .milliseconds(5))) }
            guard socket.waitForData(upTo: wake - now) else { continue }
            while let count = socket.receive(into: &buffer) {
                guard let message = try? DNSMessage(decoding: Array(buffer[0..<count])), message.isResponse else { continue }
                collector.add(message)
            }
        }
        return .success(collector.accessories())
    }
}

/// Set once to end a browse early (from a cancellation handler, read by the browsing thread).
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .relaxed) }

    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// What the responses have told so far about `_hap._tcp` services, and what is still missing.
struct DiscoveryCollector {
    private var instances: [DNSName] = []
    private var services: [DNSName: (port: UInt16, target: DNSName)] = [:]
    private var texts: [DNSName: [[UInt8]]] = [:]
    private var addresses: [DNSName: [IPAddress]] = [:]

    /// An A or AAAA record's address.
    enum IPAddress: Hashable {
        case v4([UInt8])
        case v6([UInt8])

        var text: String {
            switch self {
            case .v4(let bytes): return Self.format(bytes, family: AF_INET)
            case .v6(let bytes): return Self.format(bytes, family: AF_INET6)
            }
        }

        private static func format(_ bytes: [UInt8], family: Int32) -> String {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            let formatted = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &text, socklen_t(text.count)) }
            guard formatted != nil else { return bytes.map(String.init).joined(separator: ".") }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Takes in every record of a response. A record with TTL 0 (a goodbye) removes what it names.
    mutating func add(_ message: DNSMessage) {
        for record in message.allRecords {
            let gone = record.ttl == 0
            switch record.data {
            case .ptr(let instance) where record.name == Discovery.serviceType && !instance.labels.isEmpty:
                if gone {
                    instances.removeAll { $0 == instance }
                } else if !instances.contains(instance) {
                    instances.append(instance)
                }
            case .srv(_, _, let port, let target):
                services[record.name] = gone ? nil : (port, target)
            case .txt(let strings):
                texts[record.name] = gone ? nil : strings
            case .a(let bytes):
                update(record.name, .v4(bytes), gone: gone)
            case .aaaa(let bytes):
                update(record.name, .v6(bytes), gone: gone)
            default:
                break
            }
        }
    }

    private mutating func update(_ host: DNSName, _ address: IPAddress, gone: Bool) {
        var known = addresses[host] ?? []
        if gone {
            known.removeAll { $0 == address }
        } else if !known.contains(address) {
            known.append(address)
        }
        addresses[host] = known.isEmpty ? nil : known
    }

    /// The questions that would complete what is known: SRV and TXT for services that lack
    /// them, A for SRV targets without an address.
    func missingQuestions() -> [DNSQuestion] {
        var questions: [DNSQuestion] = []
        var hosts = Set<DNSName>()
        for instance in instances {
            if let service = services[instance] {
                if addresses[service.target] == nil, hosts.insert(service.target).inserted {
                    questions.append(DNSQuestion(name: service.target, type: .a, unicastResponse: true))
                }
            } else {
                questions.append(DNSQuestion(name: instance, type: .srv, unicastResponse: true))
            }
            if texts[instance] == nil {
                questions.append(DNSQuestion(name: instance, type: .txt, unicastResponse: true))
            }
        }
        return questions
    }

    /// The services whose SRV and TXT records are known, sorted by name (then id, host, port).
    func accessories() -> [DiscoveredAccessory] {
        let found = instances.compactMap { instance -> DiscoveredAccessory? in
            guard let service = services[instance], let strings = texts[instance] else { return nil }
            let txt = Self.keyValues(strings)
            let known = addresses[service.target] ?? []
            let address = known.first { if case .v4 = $0 { true } else { false } } ?? known.first
            let statusFlags = txt["sf"].flatMap { Int($0) } ?? 0
            return DiscoveredAccessory(
                name: instance.labels[0],
                deviceID: txt["id"] ?? "",
                model: txt["md"] ?? "",
                categoryIdentifier: txt["ci"].flatMap { Int($0) },
                isPaired: statusFlags & 1 == 0,
                host: address?.text ?? service.target.description,
                port: Int(service.port),
                configurationNumber: txt["c#"].flatMap { Int($0) },
                txt: txt
            )
        }
        return found.sorted { lhs, rhs in
            let left = (lhs.name.lowercased(), lhs.name, lhs.deviceID, lhs.host, lhs.port)
            let right = (rhs.name.lowercased(), rhs.name, rhs.deviceID, rhs.host, rhs.port)
            return left < right
        }
    }

    /// DNS-SD TXT strings as keys and values (RFC 6763 §6): the key is what comes before the
    /// first `=`, in lower case; a string without `=` is a key with the value ""; strings that
    /// start with `=` or are empty are skipped, and the first of a repeated key wins.
    static func keyValues(_ strings: [[UInt8]]) -> [String: String] {
        var result: [String: String] = [:]
        for string in strings {
            let equals = string.firstIndex(of: UInt8(ascii: "=")) ?? string.endIndex
            guard equals > string.startIndex else { continue }
            let key = String(decoding: string[..<equals], as: UTF8.self).lowercased()
            let value = equals < string.endIndex ? String(decoding: string[(equals + 1)...], as: UTF8.self) : ""
            if result[key] == nil { result[key] = value }
        }
        return result
    }
}

/// When to ask the follow-up questions: a question is asked once it has been missing for a
/// moment (the rest of a responder's packets may still be on their way), and again after a
/// while, three times at most.
struct FollowUpSchedule {
    static let settle: Duration = .milliseconds(100)
    static let retry: Duration = .milliseconds(500)
    static let attempts = 3
    /// Questions per packet (a packet of them stays well under 1,500 bytes for ordinary names).
    static let perPacket = 8

    private var missingSince: [DNSQuestion: ContinuousClock.Instant] = [:]
    private var asked: [DNSQuestion: (count: Int, last: ContinuousClock.Instant)] = [:]
    /// The earliest time a question now missing may become due.
    private(set) var nextCheck: ContinuousClock.Instant?

    /// The packets of questions to send now, given the ones missing now.
    mutating func due(_ missing: [DNSQuestion], at now: ContinuousClock.Instant) -> [[DNSQuestion]] {
        let current = Set(missing)
        missingSince = missingSince.filter { current.contains($0.key) }
        var send: [DNSQuestion] = []
        var next: ContinuousClock.Instant?
        for question in missing {
            let since = missingSince[question] ?? now
            missingSince[question] = since
            var count = asked[question]?.count ?? 0
            var dueAt = asked[question].map { $0.last + Self.retry } ?? since + Self.settle
            guard count < Self.attempts else { continue }
            if dueAt <= now {
                send.append(question)
                count += 1
                asked[question] = (count, now)
                dueAt = now + Self.retry
            }
            if count < Self.attempts { next = min(next ?? dueAt, dueAt) }
        }
        nextCheck = next
        return stride(from: 0, to: send.count, by: Self.perPacket).map { Array(send[$0..<min($0 + Self.perPacket, send.count)]) }
    }
}

/// The UDP socket of a browse: bound to an ephemeral port on every address, multicast loop on
/// (a responder on this very machine hears the query) and multicast TTL 255 (RFC 6762 §11).
private struct DatagramSocket {
    let descriptor: Int32

    static func open() -> Result<DatagramSocket, HAPError> {
        #if canImport(Glibc)
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_DGRAM
        #endif
        let descriptor = socket(AF_INET, type, 0)
        guard descriptor >= 0 else {
            return .failure(HAPError(.connection, "cannot make a UDP socket for mDNS: \(String(cString: strerror(errno)))"))
        }
        var loop: Int32 = 1
        var ttl: Int32 = 255
        setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, &loop, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = INADDR_ANY
        local.sin_port = 0
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            _ = Self.closeDescriptor(descriptor)
            return .failure(HAPError(.connection, "cannot bind a UDP socket for mDNS: \(reason)"))
        }
        return .success(DatagramSocket(descriptor: descriptor))
    }

    private static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }

    func close() {
        _ = Self.closeDescriptor(descriptor)
    }

    /// nil once sent, else why not.
    func send(_ bytes: [UInt8], to address: sockaddr_in) -> String? {
        var destination = address
        while true {
            let sent = bytes.withUnsafeBytes { raw in
                withUnsafePointer(to: &destination) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            if sent >= 0 { return nil }
            if errno != EINTR { return String(cString: strerror(errno)) }
        }
    }

    /// Whether a datagram (or an error to collect) is waiting, after waiting at most `wait`.
    func waitForData(upTo wait: Duration) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: max(wait, .zero).millisecondsRoundedUp)
        return poll(&poller, 1, milliseconds) > 0
    }

    /// The next waiting datagram's length (its bytes in `buffer`), or nil when none is waiting.
    func receive(into buffer: inout [UInt8]) -> Int? {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count >= 0 { return count }
            if errno != EINTR { return nil }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// How a HomeKit accessory server is reached.
public enum HAPTransportKind: String, Sendable, Hashable, CaseIterable {
    /// HAP over IP: HTTP over TCP (`_hap._tcp`).
    case ip
    /// HAP over CoAP: Thread accessories behind a border router (`_hap._udp`).
    case coap
}

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
    /// HAP over IP (`_hap._tcp`) or over CoAP (`_hap._udp`, whose host is IPv6 when it has one).
    public let transport: HAPTransportKind

    public init(name: String, deviceID: String, model: String, categoryIdentifier: Int?, isPaired: Bool,
                host: String, port: Int, configurationNumber: Int?, txt: [String: String], transport: HAPTransportKind = .ip) {
        self.name = name
        self.deviceID = deviceID
        self.model = model
        self.categoryIdentifier = categoryIdentifier
        self.isPaired = isPaired
        self.host = host
        self.port = port
        self.configurationNumber = configurationNumber
        self.txt = txt
        self.transport = transport
    }
}

/// Finding HomeKit accessories on the local network by Multicast DNS (DNS-SD, `_hap._tcp.local`
/// for HAP over IP and `_hap._udp.local` for HAP over CoAP, asked in one query).
public enum Discovery {
    /// The DNS-SD service type of HAP over IP.
    static let serviceType = DNSName("_hap._tcp.local")
    /// The DNS-SD service type of HAP over CoAP (Thread accessories).
    static let coapServiceType = DNSName("_hap._udp.local")

    /// The transport a service type names.
    static func transport(of serviceType: DNSName) -> HAPTransportKind? {
        switch serviceType {
        case Discovery.serviceType: .ip
        case coapServiceType: .coap
        default: nil
        }
    }

    /// Sends a one-shot ("legacy unicast", RFC 6762 §5.1 and §6.7) PTR query for
    /// `_hap._tcp.local` from an ephemeral UDP port to `destination`:`port` and collects the
    /// answers for `duration`; returns the accessories found, sorted by name.
    ///
    /// Responders answer a query from a port other than 5353 by unicast to the sender, so the
    /// answers need neither port 5353 nor the multicast group. When `destination` is a multicast
    /// group (the default, 224.0.0.251), the browse also listens on the group at `port` while it
    /// runs (bound to the group's address with `SO_REUSEADDR` and `SO_REUSEPORT`, so it shares
    /// the port with avahi or any other mDNS stack and never takes their unicast packets), for
    /// responders that answer by multicast anyway and for announcements; if that port or group
    /// cannot be had, the browse goes on without it. The query is sent again at a third and at
    /// two thirds of the duration; services whose SRV or TXT record, or hosts whose address, did
    /// not come with the answers are asked for by name. An accessory is listed once its SRV and
    /// TXT records are known; packets that are not valid DNS are ignored. IPv4 only.
    ///
    /// The sockets are SwiftNIO datagram channels on the shared event loop group
    /// (`NIOSingletons.posixEventLoopGroup`); the browse's timers run on their event loop, and
    /// no thread is made for it. Cancelling the task ends the browse early with what was found
    /// so far.
    /// - Throws: ``HAPError`` (``HAPError/Kind/connection``) if the socket cannot be made or the
    ///   query cannot be sent (no route to the multicast group, for one).
    public static func browse(for duration: Duration = .seconds(3), destination: String = "224.0.0.251", port: Int = 5353) async throws(HAPError) -> [DiscoveredAccessory] {
        guard let host = try? SocketAddress(ipAddress: destination, port: 0), host.protocol == .inet else {
            throw HAPError(.connection, "mDNS destination \(destination) is not an IPv4 address")
        }
        guard (1...65_535).contains(port), let address = try? SocketAddress(ipAddress: destination, port: port) else {
            throw HAPError(.connection, "mDNS port \(port) is out of range")
        }
        let loop = NIOSingletons.posixEventLoopGroup.next()
        let result = loop.makePromise(of: [DiscoveredAccessory].self)
        let channel: Channel
        do {
            channel = try await DatagramBootstrap(group: loop)
                .channelOption(.ipOption(.ip_multicast_loop), value: 1)
                .channelOption(.ipOption(.ip_multicast_ttl), value: 255)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let browse = BrowseHandler(round: DiscoveryRound(duration: duration), destination: address, result: result)
                        try channel.pipeline.syncOperations.addHandlers(DNSDatagramDecoder(), browse)
                    }
                }
                .bind(host: "0.0.0.0", port: 0).get()
        } catch {
            result.fail(error)
            throw HAPError(.connection, "cannot bind a UDP socket for mDNS: \(BrowseHandler.reason(error))")
        }
        let listener = isMulticast(destination) ? try? await listen(on: loop, to: address, forwardingTo: channel) : nil
        channel.pipeline.fireUserInboundEventTriggered(BrowseHandler.Start())
        let outcome: Result<[DiscoveredAccessory], Error> = await withTaskCancellationHandler {
            do {
                return .success(try await result.futureResult.get())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            channel.close(promise: nil)
        }
        try? await listener?.close()
        switch outcome {
        case .success(let accessories):
            return accessories
        case .failure(let error as HAPError):
            throw error
        case .failure(let error):
            throw HAPError(.connection, "mDNS browse failed: \(BrowseHandler.reason(error))")
        }
    }

    /// Whether `address` (a valid dotted IPv4 address) is in 224.0.0.0/4.
    private static func isMulticast(_ address: String) -> Bool {
        address.split(separator: ".").first.flatMap { Int($0) }.map { (224...239).contains($0) } ?? false
    }

    /// A channel bound to `group` (its address and port), a member of the group on the interface
    /// the routing table picks for it, whose decoded messages go to the browse on `browse`.
    private static func listen(on loop: any EventLoop, to group: SocketAddress, forwardingTo browse: any Channel) async throws -> any Channel {
        let channel = try await DatagramBootstrap(group: loop)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(DNSDatagramDecoder(), MulticastForwarder(to: browse))
                }
            }
            .bind(to: group).get()
        do {
            guard let member = channel as? any MulticastChannel else { throw ChannelError.operationUnsupported }
            try await member.joinGroup(group).get()
        } catch {
            try? await channel.close()
            throw error
        }
        return channel
    }
}

/// Passes what the multicast listener decoded to the browse's channel (as a
/// ``BrowseHandler/Heard`` event), so one ``DiscoveryRound`` takes in both sockets' messages.
final class MulticastForwarder: ChannelInboundHandler {
    typealias InboundIn = DNSMessage

    private let browse: any Channel

    init(to browse: any Channel) {
        self.browse = browse
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        browse.pipeline.fireUserInboundEventTriggered(BrowseHandler.Heard(message: unwrapInboundIn(data)))
    }

    /// Read errors change nothing; fatal ones close this channel, and the browse goes on.
    func errorCaught(context: ChannelHandlerContext, error: Error) {}
}

/// What the responses have told so far about `_hap._tcp` services, and what is still missing.
struct DiscoveryCollector {
    private var instances: [DNSName] = []
    private var transports: [DNSName: HAPTransportKind] = [:]
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
            case .ptr(let instance) where Discovery.transport(of: record.name) != nil && !instance.labels.isEmpty:
                if gone {
                    instances.removeAll { $0 == instance }
                } else if !instances.contains(instance) {
                    instances.append(instance)
                    transports[instance] = Discovery.transport(of: record.name)
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
                    let type: DNSRecordType = transports[instance] == .coap ? .aaaa : .a
                    questions.append(DNSQuestion(name: service.target, type: type, unicastResponse: true))
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
            let transport = transports[instance] ?? .ip
            let preferred: (IPAddress) -> Bool = { address in
                switch address {
                case .v4: transport == .ip
                case .v6: transport == .coap
                }
            }
            let address = known.first(where: preferred) ?? known.first
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
                txt: txt,
                transport: transport
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

import Accessories
import HAP
import HomeModel
import Logging
import Synchronization
import Timing
import Wire

/// Drives paired HomeKit accessories and bridges over HAP: one verified session per device,
/// bridged accessories as accessories of their own (with the bridge relation), events for
/// every characteristic that sends them (the engine polls the rest), a keep-alive read so a
/// silent device is noticed within seconds, reconnection with backoff, and the accessory
/// database read again (structure and values) after every reconnect.
///
/// ``run()`` must run for the driver to do anything; ``replaceDevices(_:)`` takes a new set of
/// pairings (after `homegate pair` or `unpair` and a SIGHUP).
public final class HAPDriver: AccessoryDriver {
    /// The driver's timing.
    public struct Configuration: Sendable {
        /// How long a TCP connect and pair-verify may take.
        public var connectTimeout: Duration
        /// How long a read or write may take.
        public var requestTimeout: Duration
        /// How long a device may stay silent before its accessories count as unreachable, by
        /// kind of device: the keep-alive reads follow from it (``Availability``).
        public var availability = Availability()
        /// The first wait before reconnecting; it doubles while attempts fail, up to the maximum.
        public var reconnectDelay: Duration
        public var maximumReconnectDelay: Duration
        /// How long ``accessories()`` waits for the devices' first sessions at start.
        public var startupWait: Duration
        /// The time to live of timed writes (`tw` characteristics).
        public var timedWriteTTL: Duration
        /// How long reaching a Thread accessory and verifying may take.
        public var threadConnectTimeout: Duration = .seconds(15)
        /// How often mDNS is browsed while devices are paired: to follow a device to a new
        /// address and to notice a changed configuration number (`c#`).
        public var browseInterval: Duration = .seconds(30)
        /// How often while a paired device is unreachable (it may have moved).
        public var lostDeviceBrowseInterval: Duration = .seconds(5)
        /// How long each browse listens for answers.
        public var browseWindow: Duration = .seconds(2)
        /// The accessory browser is always on (else between ``HAPDriver/setBrowsing(_:)`` on and off).
        public var alwaysBrowsing = false
        /// Where the mDNS queries go.
        public var mdnsDestination = "224.0.0.251"
        public var mdnsPort = 5353

        public init(connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(10), reconnectDelay: Duration = .milliseconds(250),
                    maximumReconnectDelay: Duration = .seconds(30), startupWait: Duration = .seconds(6), timedWriteTTL: Duration = .seconds(5)) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.reconnectDelay = reconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.startupWait = startupWait
            self.timedWriteTTL = timedWriteTTL
        }
    }

    /// A paired device: where it is, who it is, and where its accessories go in the home.
    public struct Device: Sendable, Hashable {
        public var deviceID: String
        public var pairing: AccessoryPairing
        public var host: String
        public var port: Int
        public var name: String
        public var placement: Placement
        /// HAP over IP or over CoAP (a Thread accessory).
        public var transport: HAPTransportKind

        public init(deviceID: String, publicKey: [UInt8], host: String, port: Int, name: String, placement: Placement = Placement(),
                    transport: HAPTransportKind = .ip) {
            self.deviceID = deviceID
            self.pairing = AccessoryPairing(pairingID: deviceID, publicKey: publicKey)
            self.host = host
            self.port = port
            self.name = name
            self.placement = placement
            self.transport = transport
        }
    }

    struct State {
        var links: [String: DeviceLink] = [:]
        /// The accessory browser is on (``setBrowsing(_:)``).
        var browsing = false
        /// The last browse failure logged (each different one is logged once).
        var lastBrowseFailure: String?
    }

    private let controller: ControllerIdentity
    /// Each kind of device's transport.
    private let transports: [HAPTransportKind: any HAPTransport]
    let configuration: Configuration
    let logger: Logger
    let state = Mutex(State())
    /// Each browse round's accessories not paired with this gateway, while the browser is on;
    /// `[]` when it is turned off.
    public let browser: AsyncStream<[FoundAccessory]>
    let browserContinuation: AsyncStream<[FoundAccessory]>.Continuation
    /// Wakes the browse loop (the browser was turned on, a device was lost).
    let browseAlarm = Alarm()
    /// Told when a paired device was found at a new address (to store it).
    let moved: @Sendable (Device) -> Void
    public let events: AsyncStream<AccessoryEvent>
    private let continuation: AsyncStream<AccessoryEvent>.Continuation
    /// Links to start in ``run()``'s task group (new pairings, a changed address).
    private let starts: AsyncStream<DeviceLink>
    private let startContinuation: AsyncStream<DeviceLink>.Continuation

    /// - Parameters:
    ///   - transport: how sessions with HAP-over-IP devices are opened (``IPTransport`` unless
    ///     told otherwise); `coapTransport` the same for HAP-over-CoAP (Thread) devices.
    ///   - moved: told when a paired device is found at a new address (the driver follows it at
    ///     once; the caller stores the new address).
    public init(controller: ControllerIdentity, devices: [Device], configuration: Configuration = Configuration(), logger: Logger,
                transport: any HAPTransport = IPTransport(), coapTransport: any HAPTransport = CoAPTransport(),
                moved: @escaping @Sendable (Device) -> Void = { _ in }) {
        self.controller = controller
        self.transports = [.ip: transport, .coap: coapTransport]
        self.configuration = configuration
        self.logger = logger
        self.moved = moved
        (browser, browserContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (events, continuation) = AsyncStream.makeStream()
        (starts, startContinuation) = AsyncStream.makeStream()
        let links = devices.map(makeLink)
        state.withLock { state in
            state.links = Dictionary(links.map { ($0.device.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        }
        for link in links { startContinuation.yield(link) }
    }

    private func makeLink(_ device: Device) -> DeviceLink {
        DeviceLink(device: device, controller: controller, transport: transports[device.transport] ?? device.transport.transport,
                   configuration: configuration, logger: logger) { [continuation, browseAlarm] event in
            if case .reachability(_, reachable: false) = event { browseAlarm.ring() } // it may have moved: look for it
            continuation.yield(event)
        }
    }

    /// Keeps a session with every device until cancelled: each device's link is a child task of
    /// one task group; links started later (``replaceDevices(_:)``) join it. The mDNS browse
    /// (following devices, watching `c#`, the accessory browser) is a child task too.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.browse() }
            for await link in starts {
                group.addTask { await link.run() }
            }
            group.cancelAll()
        }
        continuation.finish()
    }

    /// Takes a new set of pairings: new devices are connected (their accessories reported when
    /// they answer), removed ones are disconnected and their accessories reported removed,
    /// changed ones (a new address) are reconnected.
    public func replaceDevices(_ devices: [Device]) {
        let wanted = Dictionary(devices.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        let (removed, added) = state.withLock { state in
            var removed: [DeviceLink] = []
            for (id, link) in state.links where wanted[id] != link.device {
                removed.append(link)
                state.links[id] = nil
            }
            var added: [DeviceLink] = []
            for (id, device) in wanted where state.links[id] == nil {
                let link = makeLink(device)
                state.links[id] = link
                added.append(link)
            }
            return (removed, added)
        }
        for link in removed {
            link.stop()
            if wanted[link.device.deviceID] == nil {
                let ids = link.accessories.map(\.id)
                logger.info("\(link.device.name) (\(link.device.deviceID)) is no longer paired: \(ids.count) accessories leave the home")
                if !ids.isEmpty { continuation.yield(.removed(ids)) }
            }
        }
        for link in added { startContinuation.yield(link) }
    }

    /// The devices' accessories, after waiting (at most ``Configuration/startupWait``) for each
    /// device's first attempt to connect; devices not reached yet report theirs when they answer.
    public func accessories() async throws -> [Accessory] {
        let links = state.withLock { Array($0.links.values) }
        await withTaskGroup(of: Void.self) { group in
            for link in links { group.addTask { await link.firstAttempt(within: self.configuration.startupWait) } }
        }
        return links.flatMap(\.accessories)
    }

    public func read(_ characteristic: CharacteristicReference) async throws(StatusError) -> Value {
        try await link(for: characteristic.accessoryID).read(characteristic)
    }

    public func write(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) {
        try await link(for: characteristic.accessoryID).write(value, to: characteristic)
    }

    /// A write with `r: true`: the value the device answers (Adaptive Lighting's control point).
    public func writeWithResponse(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) -> Value? {
        try await link(for: characteristic.accessoryID).writeWithResponse(value, to: characteristic)
    }

    /// Several characteristics of one accessory in one `PUT /characteristics`.
    public func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        guard let first = values.first else { return [:] }
        do throws(StatusError) {
            return try await link(for: first.0.accessoryID).write(values)
        } catch {
            return Dictionary(values.map { ($0.0, .failure(error)) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// A camera's still image (`POST /resource` on its device's session).
    public func snapshot(of accessory: AccessoryID, width: Int, height: Int) async throws(StatusError) -> [UInt8] {
        try await link(for: accessory).snapshot(of: accessory, width: width, height: height)
    }

    public func serves(_ id: AccessoryID) -> Bool {
        state.withLock { state in state.links.values.contains { $0.serves(id) } }
    }

    public func placement(of id: AccessoryID) -> Placement? {
        state.withLock { state in state.links.values.first { $0.serves(id) }?.device.placement }
    }

    /// The event loop of the device's session, while it has one.
    public func taskExecutor(for accessory: AccessoryID) -> (any TaskExecutor)? {
        state.withLock { state in state.links.values.first { $0.serves(accessory) } }?.taskExecutor
    }

    private func link(for id: AccessoryID) throws(StatusError) -> DeviceLink {
        guard let link = state.withLock({ state in state.links.values.first { $0.serves(id) } }) else {
            throw StatusError(.communicationFailure, "no paired device serves accessory \(id)")
        }
        return link
    }

    /// Whether `id` is the id of an accessory of a HAP device (paired now or not).
    public static func isHAPAccessory(_ id: AccessoryID) -> Bool {
        id.rawValue.hasPrefix("hap-")
    }

    /// The id accessory `aid` of device `deviceID` has in the home tree.
    public static func accessoryID(deviceID: String, aid: Int) -> AccessoryID {
        AccessoryMapping.accessoryID(deviceID: deviceID, aid: aid)
    }
}

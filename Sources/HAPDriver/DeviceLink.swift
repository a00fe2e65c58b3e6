import HAP
import HomeModel
import Accessories
import Logging
import Synchronization
import Timing
import Wire

/// The gateway's link to one paired device: a verified session while it can be had, with
/// events subscribed, a periodic keep-alive read, and reconnection with backoff after a drop.
///
/// Each time a session is made the device's accessory database is read again and reported
/// (structure and values) through ``AccessoryEvent/accessories(_:)``; when it drops, every
/// accessory of the device (a bridge and all behind it) is reported unreachable.
final class DeviceLink: Sendable {
    let device: HAPDriver.Device
    private let controller: ControllerIdentity
    private let transport: any HAPTransport
    private let configuration: HAPDriver.Configuration
    private let emit: @Sendable (AccessoryEvent) -> Void
    private let logger: Logger

    private struct State {
        var client: (any AccessorySession)?
        var mapping: AccessoryMapping?
        /// The database warnings last reported.
        var reportedWarnings: [String] = []
        /// The configuration number (`c#`) mDNS last showed during this session.
        var configurationNumber: Int?
        /// It changed: the structure is to be read again.
        var rereadPending = false
        /// Why the pending read happens, for the log.
        var rereadReason = ""
    }

    private let state = Mutex(State())
    /// Rung by ``stop()``: ``run()`` ends.
    private let stopped = Alarm()
    /// Rung when an attempt to connect has ended, either way: the first ring ends ``firstAttempt(within:)``.
    private let attemptEnded = Alarm()
    /// Rung when the structure is to be read again (``observe(configurationNumber:)``).
    private let rereadAlarm = Alarm()

    init(device: HAPDriver.Device, controller: ControllerIdentity, transport: any HAPTransport, configuration: HAPDriver.Configuration,
         logger: Logger, emit: @escaping @Sendable (AccessoryEvent) -> Void) {
        self.device = device
        self.controller = controller
        self.transport = transport
        self.configuration = configuration
        self.logger = logger
        self.emit = emit
    }

    /// Whether a session is open.
    var isConnected: Bool { state.withLock { $0.client?.isOpen == true } }

    /// mDNS shows the device's configuration number. The first time in a session, and whenever
    /// it differs from the one seen before, the device's accessories are read again: HAP gives
    /// no way to know which number the database read at connect belongs to (the device may have
    /// changed between that read and this browse), so the first sighting reads once more; a
    /// read that finds nothing new changes nothing.
    func observe(configurationNumber number: Int) {
        let changed = state.withLock { state -> Bool in
            guard state.client != nil else { return false }
            defer { state.configurationNumber = number }
            guard state.configurationNumber != number else { return false }
            state.rereadPending = true
            state.rereadReason = state.configurationNumber.map { "its configuration number changed from \($0) to \(number)" }
                ?? "first seen on mDNS in this session (configuration number \(number))"
            return true
        }
        if changed { rereadAlarm.ring() }
    }

    /// The accessories as last described by the device; empty before its first session.
    var accessories: [Accessory] { state.withLock { $0.mapping?.accessories ?? [] } }

    /// The executor of the device's session while it is open (``AccessorySession/preferredExecutor``).
    var taskExecutor: (any TaskExecutor)? {
        state.withLock { $0.client }?.preferredExecutor
    }

    /// Whether the link knows the accessory (from the device's last description, or by its id's
    /// prefix before the first session).
    func serves(_ id: AccessoryID) -> Bool {
        id.rawValue.hasPrefix(AccessoryMapping.idPrefix(deviceID: device.deviceID))
    }

    /// Ends ``run()``: the session closes, the accessories go unreachable.
    func stop() {
        stopped.ring()
    }

    /// Connects, serves, reconnects, until cancelled or stopped; on the way out the accessories
    /// go unreachable.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.connectAndServe() }
            group.addTask { await self.stopped.wait(unlessRungAfter: Alarm.initialGeneration) }
            await group.next()
            group.cancelAll()
        }
        disconnect()
    }

    private func connectAndServe() async {
        // No jitter: the waits are the documented 250 ms doubling to 30 s.
        var backoff = Backoff(initial: configuration.reconnectDelay, maximum: configuration.maximumReconnectDelay, jitter: .none)
        while !Task.isCancelled {
            do {
                let client = try await connect()
                backoff.reset()
                let reason = await serve(client)
                logger.warning("\(device.name) (\(device.deviceID)) dropped: \(reason)")
            } catch {
                logger.warning("\(device.name) (\(device.deviceID)) at \(device.host):\(device.port): \(error)")
            }
            attemptEnded.ring()
            disconnect()
            guard (try? await Task.sleep(for: backoff.nextDelay())) != nil else { break }
        }
        disconnect()
    }

    /// Waits until the first attempt to connect has ended (or `limit` passed).
    func firstAttempt(within limit: Duration) async {
        try? await attemptEnded.sleep(for: limit, unlessRungAfter: Alarm.initialGeneration)
    }

    // MARK: A session

    /// The connect and keep-alive timing of this device: a Thread accessory is given more time
    /// to connect and to answer; the keep-alive reads follow from how long the device may stay
    /// silent (``HAPDriver/Configuration/availability``: by transport, battery, or accessory).
    private var timing: (connect: Duration, keepAliveInterval: Duration, keepAliveTimeout: Duration) {
        let isThread = device.transport == .coap
        let accessories = state.withLock { $0.mapping?.accessories ?? [] }
        let silence = configuration.availability.unreachableAfter(accessories, thread: isThread)
        let keepAlive = Availability.keepAlive(unreachableAfter: silence, longestAnswer: isThread ? Availability.threadAnswer : Availability.ipAnswer)
        return (isThread ? configuration.threadConnectTimeout : configuration.connectTimeout, keepAlive.interval, keepAlive.timeout)
    }

    /// Verifies a session, reads the accessory database, subscribes to events, reports the
    /// accessories (characteristics whose events the device refuses without `ev`: the engine
    /// polls them) and what was odd in the database.
    private func connect() async throws(HAPError) -> any AccessorySession {
        let client = try await transport.openSession(host: device.host, port: device.port, controller: controller, accessory: device.pairing,
                                                     timeout: timing.connect)
        do {
            let (mapping, warnings) = try await describe(client)
            state.withLock { state in
                state.client = client
                state.mapping = mapping
                state.configurationNumber = nil
                state.rereadPending = false
            }
            emit(.accessories(mapping.accessories))
            reportWarnings(warnings)
            attemptEnded.ring()
            logger.info("\(device.name) (\(device.deviceID)) connected at \(device.host):\(device.port): \(mapping.accessories.count) accessories")
            return client
        } catch {
            client.close()
            throw error
        }
    }

    /// Reads the accessory database on a session and subscribes to events; what the device
    /// refuses is polled, and what was odd is reported.
    private func describe(_ client: any AccessorySession) async throws(HAPError) -> (mapping: AccessoryMapping, warnings: [String]) {
        // A device that stops answering while the session is set up is noticed as quickly as
        // by the keep-alive: these requests are small and answered at once by a live device.
        let database = try await client.accessoryDatabase(timeout: timing.connect)
        var mapping = AccessoryMapping(deviceID: device.deviceID, database: database.accessories, warnings: database.warnings)
        let refused = try await subscribe(mapping.notifying, on: client)
        if !refused.isEmpty {
            mapping = mapping.withoutEvents(refused)
            logger.notice("\(device.name): events refused for \(refused.map(\.description).joined(separator: ", ")); they are polled")
        }
        return (mapping, mapping.warnings + refused.map { "characteristic \($0): the device refuses its events; it is polled every poll interval" })
    }

    /// The device's configuration number changed: its accessories are read again on the open
    /// session; new ones and changes are reported, and accessories it no longer has are removed.
    private func rereadWhenAsked(_ client: any AccessorySession) async {
        while !Task.isCancelled {
            // Read before looking: a ring after the look ends the wait below at once.
            let generation = rereadAlarm.generation
            let reason = state.withLock { state -> String? in
                defer { state.rereadPending = false }
                return state.rereadPending ? state.rereadReason : nil
            }
            guard let reason else {
                await rereadAlarm.wait(unlessRungAfter: generation)
                continue
            }
            logger.info("\(device.name) (\(device.deviceID)): \(reason); reading its accessories again")
            do {
                let (mapping, warnings) = try await describe(client)
                let before = state.withLock { state in
                    defer { state.mapping = mapping }
                    return state.mapping?.accessories.map(\.id) ?? []
                }
                emit(.accessories(mapping.accessories))
                reportWarnings(warnings)
                let now = Set(mapping.accessories.map(\.id))
                let gone = before.filter { !now.contains($0) }
                if !gone.isEmpty { emit(.removed(gone)) }
            } catch {
                logger.warning("\(device.name) (\(device.deviceID)): its accessories could not be read again (\(error)); reconnecting")
                client.close()
                return
            }
        }
    }

    /// Subscribes to every characteristic that sends events; the ones the device refuses (by a
    /// status, or by refusing the whole request) are returned.
    private func subscribe(_ addresses: [CharacteristicAddress], on client: any AccessorySession) async throws(HAPError) -> [CharacteristicAddress] {
        guard !addresses.isEmpty else { return [] }
        do {
            let outcomes = try await client.subscribe(addresses, enabled: true, timeout: timing.keepAliveTimeout)
            return addresses.filter { outcomes[$0].map { $0.status != .success } ?? false }
        } catch where error.kind == .status {
            return addresses // the device refused the request as a whole
        }
    }

    /// Logs and announces what was odd in the device's database, once per new set of warnings
    /// (a reconnect that finds the same database says nothing again).
    private func reportWarnings(_ warnings: [String]) {
        let isNew = state.withLock { state -> Bool in
            defer { state.reportedWarnings = warnings }
            return state.reportedWarnings != warnings
        }
        guard isNew, let first = state.withLock({ $0.mapping?.accessories.first?.id }) else { return }
        for warning in warnings {
            logger.warning("\(device.name) (\(device.deviceID)): \(warning)")
            emit(.warning(first, warning))
        }
    }

    /// Forwards events and reads the keep-alive probe until the session drops; tells why.
    private func serve(_ client: any AccessorySession) async -> HAPError {
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.forwardEvents(of: client) }
                group.addTask { await self.keepAlive(client) }
                group.addTask { await self.rereadWhenAsked(client) }
                let reason = await client.closed()
                group.cancelAll()
                return reason
            }
        } onCancel: {
            client.close() // the link is stopping: the session ends now
        }
    }

    private func forwardEvents(of client: any AccessorySession) async {
        for await values in client.events {
            guard let mapping = state.withLock({ $0.mapping }) else { continue }
            for value in values {
                guard let id = mapping.accessoryID(aid: value.address.aid), let info = mapping.characteristics[value.address],
                      let converted = AccessoryMapping.value(from: value.value, format: info.format) else { continue }
                emit(.value(CharacteristicReference(accessoryID: id, iid: value.address.iid), converted))
            }
        }
    }

    /// A silent device is noticed by a cheap read every keep-alive interval: one that does not
    /// answer in time closes the connection (the session does that on a timeout).
    private func keepAlive(_ client: any AccessorySession) async {
        guard let probe = state.withLock({ $0.mapping?.keepAliveProbe }) else { return }
        while (try? await Task.sleep(for: timing.keepAliveInterval)) != nil {
            do {
                _ = try await client.read([probe], timeout: timing.keepAliveTimeout)
            } catch {
                client.close()
                return
            }
        }
    }

    /// Forgets the session; reports the accessories unreachable.
    private func disconnect() {
        let (client, accessories) = state.withLock { state in
            defer { state.client = nil }
            return (state.client, state.client == nil ? [] : state.mapping?.accessories ?? [])
        }
        client?.close()
        for accessory in accessories { emit(.reachability(accessory.id, reachable: false)) }
    }

    // MARK: Reads and writes

    func read(_ reference: CharacteristicReference) async throws(StatusError) -> Value {
        let (client, mapping, address) = try session(for: reference)
        let outcome: CharacteristicOutcome?
        do {
            outcome = try await client.read([address], timeout: configuration.requestTimeout)[address]
        } catch {
            throw Self.driverError(error)
        }
        guard let outcome, outcome.status == .success else {
            throw Self.driverError(outcome?.status ?? .communicationFailure, "\(device.name) could not read \(address)")
        }
        guard let info = mapping.characteristics[address], let json = outcome.value,
              let value = AccessoryMapping.value(from: json, format: info.format) else {
            throw StatusError(.communicationFailure, "\(device.name) sent no usable value for \(address)")
        }
        return value
    }

    func write(_ value: Value, to reference: CharacteristicReference) async throws(StatusError) {
        _ = try await write(value, to: reference, wantsResponse: false)
    }

    /// A write with `r: true`: the value the device answered, in the characteristic's format.
    func writeWithResponse(_ value: Value, to reference: CharacteristicReference) async throws(StatusError) -> Value? {
        try await write(value, to: reference, wantsResponse: true)
    }

    /// Writes one characteristic (a timed write when it needs one); with `wantsResponse`, the
    /// value the device answered, read in the characteristic's format.
    private func write(_ value: Value, to reference: CharacteristicReference, wantsResponse: Bool) async throws(StatusError) -> Value? {
        let (client, mapping, address) = try session(for: reference)
        let timed = mapping.characteristics[address]?.timedWrite == true
        let outcome: CharacteristicOutcome?
        do {
            let write = CharacteristicWrite(address, value.json, wantsResponse: wantsResponse)
            outcome = try await client.write([write], timed: timed ? configuration.timedWriteTTL : nil, timeout: configuration.requestTimeout)[address]
        } catch {
            throw Self.driverError(error)
        }
        guard let outcome, outcome.status == .success else {
            throw Self.driverError(outcome?.status ?? .communicationFailure, "\(device.name) refused the write to \(address)")
        }
        guard wantsResponse, let json = outcome.value else { return nil }
        guard let info = mapping.characteristics[address], let answer = AccessoryMapping.value(from: json, format: info.format) else {
            throw StatusError(.communicationFailure, "\(device.name) answered the write to \(address) with no usable value")
        }
        return answer
    }

    /// Writes several characteristics of one accessory in one `PUT /characteristics` (a timed
    /// write when any of them needs one); each characteristic's outcome.
    func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        var writes: [CharacteristicWrite] = []
        var references: [CharacteristicAddress: CharacteristicReference] = [:]
        var timed = false
        var outcomes: [CharacteristicReference: Result<Void, StatusError>] = [:]
        var session: (any AccessorySession)?
        for (reference, value) in values {
            do throws(StatusError) {
                let (client, mapping, address) = try self.session(for: reference)
                session = client
                timed = timed || mapping.characteristics[address]?.timedWrite == true
                writes.append(CharacteristicWrite(address, value.json))
                references[address] = reference
            } catch {
                outcomes[reference] = .failure(error)
            }
        }
        guard let session, !writes.isEmpty else { return outcomes }
        do {
            let answers = try await session.write(writes, timed: timed ? configuration.timedWriteTTL : nil, timeout: configuration.requestTimeout)
            for (address, reference) in references {
                let outcome = answers[address]
                outcomes[reference] = outcome?.status == .success ? .success(())
                    : .failure(Self.driverError(outcome?.status ?? .communicationFailure, "\(device.name) refused the write to \(address)"))
            }
        } catch {
            for reference in references.values { outcomes[reference] = .failure(Self.driverError(error)) }
        }
        return outcomes
    }

    /// A camera's still image: `POST /resource` for the accessory's aid. An accessory without a
    /// Camera RTP Stream Management service is refused here, without asking the device.
    func snapshot(of id: AccessoryID, width: Int, height: Int) async throws(StatusError) -> [UInt8] {
        let found = state.withLock { state -> (any AccessorySession, AccessoryMapping)? in
            guard let client = state.client, let mapping = state.mapping else { return nil }
            return (client, mapping)
        }
        guard let (client, mapping) = found, client.isOpen else {
            throw StatusError(.communicationFailure, "\(device.name) (\(device.host):\(device.port)) is not reachable")
        }
        guard let aid = mapping.aids[id], let accessory = mapping.accessories.first(where: { $0.id == id }) else {
            throw StatusError(.noSuchResource, "\(device.name) has no accessory \(id)")
        }
        guard accessory.isCamera else {
            throw StatusError(.noSuchResource, "\(accessory.name) is not a camera (it has no Camera RTP Stream Management service)")
        }
        do {
            return try await client.snapshot(aid: aid, width: width, height: height, timeout: configuration.requestTimeout)
        } catch {
            throw Self.driverError(error)
        }
    }

    private func session(for reference: CharacteristicReference) throws(StatusError) -> (any AccessorySession, AccessoryMapping, CharacteristicAddress) {
        let found = state.withLock { state -> (any AccessorySession, AccessoryMapping)? in
            guard let client = state.client, let mapping = state.mapping else { return nil }
            return (client, mapping)
        }
        guard let (client, mapping) = found, client.isOpen else {
            throw StatusError(.communicationFailure, "\(device.name) (\(device.host):\(device.port)) is not reachable")
        }
        guard let aid = mapping.aids[reference.accessoryID], mapping.characteristics[CharacteristicAddress(aid: aid, iid: reference.iid)] != nil else {
            throw StatusError(.noSuchResource, "\(device.name) has no characteristic \(reference)")
        }
        return (client, mapping, CharacteristicAddress(aid: aid, iid: reference.iid))
    }

    private static func driverError(_ status: HAPStatus, _ message: String) -> StatusError {
        StatusError(status, "\(message): \(status)")
    }

    private static func driverError(_ error: HAPError) -> StatusError {
        if let status = error.status { return StatusError(status, error.message) }
        return StatusError(error.kind == .timeout ? .timedOut : .communicationFailure, error.message)
    }
}

import Accessories
import HomeModel
import Logging
import Matter
import Synchronization
import Timing
import Wire

/// Drives Matter devices through a Matter Server (python-matter-server, or the matter.js server
/// with its API): every node the server has commissioned becomes accessories (``NodeMapping``);
/// attribute reports become value events, node events the programmable switches' events; a set
/// becomes the Matter command or attribute write and returns when the node answered.
///
/// ``run()`` keeps one connection to the server: when it is down or restarts, every Matter
/// accessory goes unreachable and the driver reconnects with backoff, as for the broker; a
/// server of an API schema HomeGate does not speak is refused (logged, retried after the
/// longest backoff).
public final class MatterDriver: AccessoryDriver {
    /// The driver's settings (the `matter:` section).
    public struct Configuration: Sendable {
        public var server: Client.Configuration
        /// The first wait before reconnecting; it doubles while attempts fail, up to the maximum.
        public var reconnectDelay: Duration
        public var maximumReconnectDelay: Duration
        /// How long ``accessories()`` waits for the server's node list at start.
        public var startupWait: Duration
        /// How long after an acknowledged set the characteristic is read again: a device's
        /// reports are at least a second apart and carry the value at their time, and the server
        /// passes on only what differs from its own copy, so a change made on the device within
        /// that second, back to the value the server last saw, would never be reported.
        public var verifyDelay: Duration = .milliseconds(1500)

        public init(server: Client.Configuration, reconnectDelay: Duration = .milliseconds(500), maximumReconnectDelay: Duration = .seconds(30),
                    startupWait: Duration = .seconds(6)) {
            self.server = server
            self.reconnectDelay = reconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.startupWait = startupWait
        }
    }

    struct State {
        var connection: Connection?
        var fabric: UInt64?
        var nodes: [UInt64: NodeData] = [:]
        var mappings: [UInt64: NodeMapping] = [:]
        /// The last connection problem logged (each different one is logged once at warning level).
        var lastProblem: String?
        /// Where newly commissioned nodes' accessories go, by the node's accessory id.
        var placements: [String: Placement] = [:]
        /// A commissioning under way (one at a time), and where its accessories go.
        var commissioning: Placement?
        /// The characteristics waiting to be read again after a set, and when: a burst of sets
        /// (a slider dragged) moves its one read to after the last, instead of one read per set.
        var verificationsDue: [CharacteristicReference: ContinuousClock.Instant] = [:]
    }

    let configuration: Configuration
    let logger: Logger
    let state = Mutex(State())
    /// Rings when the first node list arrived (or the first attempt failed).
    let firstAttempt = Alarm()
    public let events: AsyncStream<AccessoryEvent>
    let continuation: AsyncStream<AccessoryEvent>.Continuation
    /// Characteristics to read again after a set (when: ``State/verificationsDue``).
    private let verifications: AsyncStream<CharacteristicReference>
    private let verificationQueue: AsyncStream<CharacteristicReference>.Continuation

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        (events, continuation) = AsyncStream.makeStream()
        (verifications, verificationQueue) = AsyncStream.makeStream()
    }

    /// Whether `id` is the id of a Matter accessory (of any server).
    public static func isMatterAccessory(_ id: AccessoryID) -> Bool {
        id.rawValue.hasPrefix("matter-")
    }

    // MARK: The connection

    /// Keeps a connection to the Matter Server until cancelled (and reads set characteristics
    /// again, ``Configuration/verifyDelay`` after their acknowledgement).
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.verifySets() }
            await keepConnected()
            group.cancelAll()
        }
        continuation.finish()
    }

    /// Reads each set characteristic again when its time comes (``Configuration/verifyDelay``
    /// after its last set); what the device has then is passed on (the engine keeps it only if
    /// it differs).
    private func verifySets() async {
        for await reference in verifications {
            while let due = state.withLock({ $0.verificationsDue[reference] }), due > .now {
                do {
                    try await Task.sleep(until: due, clock: .continuous)
                } catch {
                    return
                }
            }
            state.withLock { _ = $0.verificationsDue.removeValue(forKey: reference) }
            if let value = try? await read(reference) { continuation.yield(.value(reference, value)) }
        }
    }

    /// Reads `reference` again ``Configuration/verifyDelay`` from now: queued once, and moved
    /// later by every set until then.
    private func verifyLater(_ reference: CharacteristicReference) {
        let due = ContinuousClock.now + configuration.verifyDelay
        let queued = state.withLock { state in
            defer { state.verificationsDue[reference] = due }
            return state.verificationsDue[reference] != nil
        }
        if !queued { verificationQueue.yield(reference) }
    }

    private func keepConnected() async {
        var backoff = Backoff(initial: configuration.reconnectDelay, maximum: configuration.maximumReconnectDelay, jitter: .equal)
        while !Task.isCancelled {
            let started = ContinuousClock.now
            var incompatible = false
            do {
                try await Client.withConnection(configuration.server, logger: logger) { connection in
                    try await self.serve(connection)
                }
            } catch is CancellationError {
                break
            } catch {
                logProblem(error)
                if case .incompatible? = error as? ServerError { incompatible = true }
            }
            lose()
            firstAttempt.ring()
            if started.duration(to: .now) > .seconds(10) {
                backoff = Backoff(initial: configuration.reconnectDelay, maximum: configuration.maximumReconnectDelay, jitter: .equal)
            }
            let delay = incompatible ? configuration.maximumReconnectDelay : backoff.nextDelay()
            do {
                try await Task.sleep(for: delay)
            } catch {
                break
            }
        }
    }

    /// Logs a connection problem: at warning level the first time, at debug level while it repeats.
    private func logProblem(_ error: any Error) {
        let text = "\(error)"
        let isNew = state.withLock { state in
            defer { state.lastProblem = text }
            return state.lastProblem != text
        }
        if isNew { logger.warning("Matter: \(text)") } else { logger.debug("Matter: \(text)") }
    }

    /// One connection: the node list, then its events until it ends.
    private func serve(_ connection: Connection) async throws {
        let nodes = try await connection.startListening()
        let fabric = connection.info.compressedFabricID
        let (mappings, removed) = state.withLock { state in
            let previous = Set(state.mappings.flatMap { $0.value.accessories.map(\.id) })
            state.connection = connection
            state.fabric = fabric
            state.lastProblem = nil
            state.nodes = Dictionary(nodes.map { ($0.nodeID, $0) }, uniquingKeysWith: { _, last in last })
            state.mappings = state.nodes.mapValues { NodeMapping(node: $0, fabric: fabric) }
            let now = Set(state.mappings.flatMap { $0.value.accessories.map(\.id) })
            return (state.mappings, previous.subtracting(now))
        }
        logger.info("Matter Server \(configuration.server.url): \(nodes.count) nodes, schema \(connection.info.schemaVersion), SDK \(connection.info.sdkVersion)")
        if !removed.isEmpty { continuation.yield(.removed(Array(removed))) }
        report(mappings.sorted { $0.key < $1.key }.flatMap(\.value.accessories))
        firstAttempt.ring()
        for await event in connection.events {
            handle(event)
        }
    }

    /// The connection ended: every Matter accessory is unreachable until the server answers again.
    private func lose() {
        let ids = state.withLock { state in
            state.connection = nil
            return state.mappings.values.flatMap { $0.accessories.map(\.id) }
        }
        for id in ids { continuation.yield(.reachability(id, reachable: false)) }
    }

    // MARK: Events

    func handle(_ event: ServerEvent) {
        switch event {
        case .nodeAdded(let node), .nodeUpdated(let node):
            describe(node)
        case .nodeRemoved(let id):
            let ids = state.withLock { state in
                state.nodes[id] = nil
                return state.mappings.removeValue(forKey: id)?.accessories.map(\.id) ?? []
            }
            if !ids.isEmpty {
                logger.info("Matter node \(id) was removed from the server: \(ids.count) accessories leave the home")
                continuation.yield(.removed(ids))
            }
        case .attributeUpdated(let node, let path, let value):
            update(node: node, path: path, value: value)
        case .nodeEvent(let event):
            nodeEvent(event)
        case .serverShutdown:
            logger.info("Matter Server is shutting down")
        case .endpointChanged, .other:
            break
        }
    }

    /// A node described (again): its accessories anew.
    func describe(_ node: NodeData) {
        let accessories = state.withLock { state -> [Accessory]? in
            guard let fabric = state.fabric else { return nil }
            let mapping = NodeMapping(node: node, fabric: fabric)
            if state.mappings[node.nodeID] == nil, let placement = state.commissioning {
                state.placements[NodeMapping.accessoryID(fabric: fabric, node: node.nodeID).rawValue] = placement
            }
            let gone = Set(state.mappings[node.nodeID]?.accessories.map(\.id) ?? []).subtracting(mapping.accessories.map(\.id))
            state.nodes[node.nodeID] = node
            state.mappings[node.nodeID] = mapping
            if !gone.isEmpty { continuation.yield(.removed(Array(gone))) }
            return mapping.accessories
        }
        if let accessories { report(accessories) }
    }

    /// Accessories described (again): their structure and values, then the reachability of those
    /// that cannot be reached (a description brings reachability back, never takes it away).
    private func report(_ accessories: [Accessory]) {
        guard !accessories.isEmpty else { return }
        continuation.yield(.accessories(accessories))
        for accessory in accessories where !accessory.isReachable {
            continuation.yield(.reachability(accessory.id, reachable: false))
        }
    }

    /// An attribute changed: the characteristics computed from it, and a bridged device's reachability.
    private func update(node id: UInt64, path: AttributePath, value: JSON) {
        let changes = state.withLock { state -> [AccessoryEvent] in
            guard let mapping = state.mappings[id] else { return [] }
            // In place: a copy taken out and put back would copy the node's whole attribute
            // table (hundreds of entries) at every report, one per set.
            state.nodes[id]?.attributes[path] = value
            guard let node = state.nodes[id] else { return [] }
            // Every report is passed on, changed here or not: the engine holds the value a set
            // gave, which the device may have left again before its report (a report carries
            // the value at its time, and reports are at least a second apart).
            var changes: [AccessoryEvent] = []
            for reference in mapping.dependents[path] ?? [] {
                if let new = mapping.value(of: reference, in: node) { changes.append(.value(reference, new)) }
            }
            if let accessory = mapping.reachability[path], let reachable = value.bool {
                changes.append(.reachability(accessory, reachable: reachable && node.isAvailable))
            }
            return changes
        }
        for change in changes { continuation.yield(change) }
    }

    /// A node's event: on `$events` (`device-event`, its kind by the cluster's and event's names,
    /// its fields); Generic Switch events also as HomeKit's programmable switch events (0 single, 1 double,
    /// 2 long press): multi-press switches report MultiPressComplete, others ShortRelease (or
    /// InitialPress without release events); LongPress is a long press.
    private func nodeEvent(_ event: NodeEvent) {
        let (target, accessory) = state.withLock { state in
            (state.mappings[event.nodeID]?.switches[event.endpoint], state.mappings[event.nodeID]?.accessory(ofEndpoint: event.endpoint))
        }
        if let accessory {
            var fields = event.data?.object ?? [:]
            fields["endpoint"] = .int(Int64(event.endpoint))
            continuation.yield(.deviceEvent(accessory, kind: MatterNames.event(cluster: event.cluster, event: event.event), fields: fields))
        }
        guard event.cluster == ClusterID.genericSwitch, let target, let press = Self.switchEvent(event, features: target.features) else { return }
        continuation.yield(.value(target.reference, .uint(press)))
    }

    static func switchEvent(_ event: NodeEvent, features: UInt32) -> UInt64? {
        let multiPress = features & 0x10 != 0
        let release = features & 0x04 != 0
        switch event.event {
        case 2: return 2 // LongPress
        case 6 where multiPress: // MultiPressComplete
            let count = (event.data?["totalNumberOfPressesCounted"] ?? event.data?["total_number_of_presses_counted"])?.int ?? 1
            return count >= 2 ? 1 : 0
        case 3 where !multiPress: return 0 // ShortRelease
        case 1 where !multiPress && !release: return 0 // InitialPress
        default: return nil
        }
    }

    // MARK: AccessoryDriver

    /// The server's nodes as accessories, after waiting (at most the startup wait) for its node
    /// list; when it cannot be reached yet, its accessories follow when it answers.
    public func accessories() async throws -> [Accessory] {
        let generation = Alarm.initialGeneration
        try? await firstAttempt.sleep(for: configuration.startupWait, unlessRungAfter: generation)
        return state.withLock { state in state.mappings.sorted { $0.key < $1.key }.flatMap(\.value.accessories) }
    }

    /// Where a Matter accessory goes when the home does not have it yet: where its commissioning
    /// asked for, else the primary home's default room.
    public func placement(of id: AccessoryID) -> Placement? {
        guard serves(id) else { return nil }
        return state.withLock { state in
            state.placements.first { id.rawValue == $0.key || id.rawValue.hasPrefix($0.key + "-") }?.value
        } ?? Placement()
    }

    public func serves(_ id: AccessoryID) -> Bool {
        Self.isMatterAccessory(id) && state.withLock { state in state.mappings.values.contains { $0.accessories.contains { $0.id == id } } }
    }

    /// The Matter Server connection's event loop, which every Matter accessory's commands go through.
    public func taskExecutor(for accessory: AccessoryID) -> (any TaskExecutor)? {
        state.withLock { $0.connection }?.taskExecutor
    }

    public func read(_ characteristic: CharacteristicReference) async throws(StatusError) -> Value {
        let (connection, node, mapping) = try target(characteristic)
        guard let binding = mapping.bindings[characteristic] else { throw StatusError(.noSuchResource, "\(characteristic) is not a Matter attribute") }
        var fresh = node
        for source in binding.rule.sources {
            let path = AttributePath(endpoint: binding.endpoint, cluster: source.cluster, attribute: source.attribute)
            guard node.attributes[path] != nil else { continue }
            do {
                let result = try await connection.send("read_attribute", ["node_id": .uint(node.nodeID), "attribute_path": .string(path.description)])
                if let value = result[path.description] { fresh.attributes[path] = value }
            } catch {
                throw Self.statusError(error, doing: "reading \(path)")
            }
        }
        guard let value = mapping.value(of: characteristic, in: fresh) else { throw StatusError(.writeOnly, "\(characteristic) has no value to read") }
        return value
    }

    public func write(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) {
        let write = try plannedWrite(value, to: characteristic)
        try await perform(write.action, on: write.node, endpoint: write.endpoint, connection: write.connection)
        if write.verify { verifyLater(characteristic) }
    }

    /// What writing `value` to `characteristic` sends, and where. Made from the node as it is
    /// now, without keeping a copy of it across the wait for the answer (the report the write
    /// causes then updates the node in place).
    private func plannedWrite(_ value: Value, to characteristic: CharacteristicReference) throws(StatusError)
        -> (connection: Connection, node: UInt64, endpoint: Int, action: MatterWrite, verify: Bool) {
        let (connection, node, mapping) = try target(characteristic)
        guard let binding = mapping.bindings[characteristic], let makeWrite = binding.rule.write else {
            throw StatusError(.readOnly, "\(characteristic) cannot be written")
        }
        guard let action = makeWrite(value, EndpointView(node: node, endpoint: binding.endpoint)) else {
            throw StatusError(.readOnly, "the Matter device has nothing to write \(binding.rule.type) to")
        }
        return (connection, node.nodeID, binding.endpoint, action, !binding.rule.sources.isEmpty)
    }

    /// Several characteristics of one accessory: a light's hue and saturation together as one
    /// MoveToHueAndSaturation, the rest one after the other.
    public func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        var outcomes: [CharacteristicReference: Result<Void, StatusError>] = [:]
        var rest = values
        if let combined = hueAndSaturation(values) {
            let outcome: Result<Void, StatusError>
            do throws(StatusError) {
                let (connection, node, _) = try target(combined.hue.0)
                try await perform(combined.action, on: node.nodeID, endpoint: combined.endpoint, connection: connection)
                outcome = .success(())
                for reference in [combined.hue.0, combined.saturation.0] { verifyLater(reference) }
            } catch {
                outcome = .failure(error)
            }
            outcomes[combined.hue.0] = outcome
            outcomes[combined.saturation.0] = outcome
            rest.removeAll { $0.0 == combined.hue.0 || $0.0 == combined.saturation.0 }
        }
        return outcomes.merging(await writeOneAfterAnother(rest)) { combined, _ in combined }
    }

    private func hueAndSaturation(_ values: [(CharacteristicReference, Value)])
        -> (hue: (CharacteristicReference, Value), saturation: (CharacteristicReference, Value), endpoint: Int, action: MatterWrite)? {
        let bound = state.withLock { state in
            values.compactMap { entry -> (CharacteristicReference, Value, NodeMapping.Binding)? in
                state.mappings.values.lazy.compactMap { $0.bindings[entry.0] }.first.map { (entry.0, entry.1, $0) }
            }
        }
        guard let hue = bound.first(where: { $0.2.rule.type == "hue" }),
              let saturation = bound.first(where: { $0.2.rule.type == "saturation" && $0.2.endpoint == hue.2.endpoint }) else { return nil }
        let action = MatterWrite.command(cluster: ClusterID.colorControl, name: "MoveToHueAndSaturation", payload: [
            "hue": .int(Int64(MatterUnits.hue(degrees: hue.1.number ?? 0))),
            "saturation": .int(Int64(MatterUnits.saturation(percent: saturation.1.number ?? 0))), "transitionTime": 0,
        ])
        return ((hue.0, hue.1), (saturation.0, saturation.1), hue.2.endpoint, action)
    }

    /// Sends the command or attribute write and returns when the node answered.
    func perform(_ action: MatterWrite, on node: UInt64, endpoint: Int, connection: Connection) async throws(StatusError) {
        do {
            switch action {
            case .command(let cluster, let name, let payload, let timed):
                var arguments: [String: JSON] = ["node_id": .uint(node), "endpoint_id": .int(Int64(endpoint)), "cluster_id": .uint(UInt64(cluster)),
                                                 "command_name": .string(name), "payload": .object(payload)]
                if timed { arguments["timed_request_timeout_ms"] = 10_000 }
                _ = try await connection.send("device_command", arguments)
            case .attribute(let cluster, let attribute, let value):
                let path = AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)
                let result = try await connection.send("write_attribute", ["node_id": .uint(node), "attribute_path": .string(path.description), "value": value])
                if let status = MatterStatus.writeStatus(in: result), status != 0 {
                    throw MatterStatus.statusError(status, doing: "writing \(path)")
                }
            }
        } catch let error as StatusError {
            throw error
        } catch let error as ServerError {
            throw Self.statusError(error, doing: "the command")
        } catch {
            throw StatusError(.communicationFailure, "\(error)")
        }
    }

    /// The connection, node and mapping a characteristic belongs to.
    private func target(_ characteristic: CharacteristicReference) throws(StatusError) -> (Connection, NodeData, NodeMapping) {
        let found = state.withLock { state -> (Connection?, NodeData, NodeMapping)? in
            guard let (id, mapping) = state.mappings.first(where: { $0.value.accessories.contains { $0.id == characteristic.accessoryID } }),
                  let node = state.nodes[id] else { return nil }
            return (state.connection, node, mapping)
        }
        guard let found else { throw StatusError(.noSuchResource, "no Matter node serves \(characteristic.accessoryID)") }
        guard let connection = found.0 else { throw StatusError(.communicationFailure, "the Matter Server cannot be reached") }
        guard found.1.isAvailable else { throw StatusError(.communicationFailure, "the Matter device (node \(found.1.nodeID)) is not reachable") }
        return (connection, found.1, found.2)
    }

    static func statusError(_ error: ServerError, doing what: String) -> StatusError {
        switch error {
        case .refused(let code, let details):
            if let status = MatterStatus.code(in: details) { return MatterStatus.statusError(status, doing: what) }
            switch code {
            case .nodeNotReady, .nodeNotResolving: return StatusError(.communicationFailure, "the Matter device is not reachable (\(code))")
            case .nodeNotExists: return StatusError(.noSuchResource, "the Matter Server has no such node")
            case .invalidArguments, .invalidCommand: return StatusError(.invalidValue, "the Matter Server refused \(what): \(details)")
            default: return StatusError(.communicationFailure, "the Matter Server: \(code): \(details)")
            }
        case .timedOut: return StatusError(.timedOut, "the Matter device did not answer \(what) in time")
        default: return StatusError(.communicationFailure, "\(error)")
        }
    }
}

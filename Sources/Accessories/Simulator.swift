import HomeModel
import Synchronization
import Wire

/// HomeGate's HomeKit Accessory Simulator: accessories and bridges that behave like real ones.
///
/// Writes take the accessory's latency and may fail with its status; an unreachable accessory
/// (or one behind an unreachable bridge) fails every read and write with -70402; drifting
/// sensors change by themselves; a person's change on the device is injected with
/// ``update(_:to:)``. Confirmed writes send no event (a HomeKit accessory does not notify the
/// controller that made the change); every other change of a characteristic with the `ev`
/// permission does, in order, on ``events`` (the others are found by polling).
///
/// The devices can change while it runs (``replaceDevices(_:)``, the configuration reloaded):
/// new ones join, with their drifts; gone ones leave, and their drifts stop.
public final class Simulator: AccessoryDriver, Sendable {
    /// One simulated accessory: its structure and how it behaves.
    public struct Device: Sendable, Hashable {
        public var accessory: Accessory
        public var behaviour: Behaviour
        /// Characteristics that change by themselves.
        public var drifts: [Drift]

        public init(accessory: Accessory, behaviour: Behaviour = Behaviour(), drifts: [Drift] = []) {
            self.accessory = accessory
            self.behaviour = behaviour
            self.drifts = drifts
        }
    }

    /// How an accessory answers writes.
    public struct Behaviour: Sendable, Hashable {
        /// How long a write takes to be confirmed.
        public var latency: Duration
        /// The share of writes (0...1) that fail, with ``failStatus``.
        public var failureRate: Double
        public var failStatus: HAPStatus

        public init(latency: Duration = .zero, failureRate: Double = 0, failStatus: HAPStatus = .communicationFailure) {
            self.latency = latency
            self.failureRate = failureRate
            self.failStatus = failStatus
        }
    }

    /// A characteristic that wanders by itself within bounds: every `interval`, a random step of
    /// at most `step` up or down, kept within `range` and rounded to `step`.
    public struct Drift: Sendable, Hashable {
        public var iid: Int
        public var range: ClosedRange<Double>
        public var step: Double
        public var interval: Duration

        public init(iid: Int, range: ClosedRange<Double>, step: Double, interval: Duration) {
            self.iid = iid
            self.range = range
            self.step = step
            self.interval = interval
        }
    }

    /// What ``replaceDevices(_:)`` changed: the accessories that joined and those that left.
    public struct DeviceChanges: Sendable, Hashable {
        public var added: [AccessoryID]
        public var removed: [AccessoryID]

        public init(added: [AccessoryID] = [], removed: [AccessoryID] = []) {
            self.added = added
            self.removed = removed
        }
    }

    /// Changes on the device side, in order. One consumer.
    public let events: AsyncStream<AccessoryEvent>
    private let sink: AsyncStream<AccessoryEvent>.Continuation
    /// The drifts to run, those of the start and those of accessories added later; ``run()`` takes them.
    private let driftJobs: AsyncStream<DriftJob>
    private let driftSink: AsyncStream<DriftJob>.Continuation
    private let clock: any Clock<Duration>
    /// The devices, behind a lock: a write without latency completes without a suspension.
    private let state: Mutex<State>

    struct State {
        /// The accessories in the order they were given.
        var order: [AccessoryID] = []
        var devices: [AccessoryID: Device] = [:]
        /// The accessory's own reachability flag (its bridge's is separate).
        var ownReachability: [AccessoryID: Bool] = [:]
        var random: SeededRandom
        /// Which joining of each accessory is current: the drifts of an accessory that left (or
        /// left and joined again) stop.
        var incarnations: [AccessoryID: Int] = [:]
        var lastIncarnation = 0
    }

    /// One drifting characteristic of one joining of an accessory.
    struct DriftJob: Sendable {
        let id: AccessoryID
        let drift: Drift
        let incarnation: Int
    }

    /// - Parameters:
    ///   - devices: the accessories; an accessory's `isReachable` is its reachability at start.
    ///   - clock: the clock latencies and drift run on (tests inject their own).
    ///   - seed: the seed of the random numbers behind failures and drift.
    public init(devices: [Device], clock: any Clock<Duration> = ContinuousClock(), seed: UInt64 = .random(in: 0...UInt64.max)) {
        self.clock = clock
        var state = State(random: SeededRandom(seed: seed))
        let (_, jobs) = state.replace(with: devices)
        self.state = Mutex(state)
        (events, sink) = AsyncStream.makeStream(of: AccessoryEvent.self)
        (driftJobs, driftSink) = AsyncStream.makeStream(of: DriftJob.self)
        for job in jobs { driftSink.yield(job) }
    }

    deinit {
        driftSink.finish()
    }

    /// Runs the drifting sensors until cancelled (then throws `CancellationError`): those of the
    /// start, and those of accessories that join later. One caller.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for await job in driftJobs {
                group.addTask { try await self.runDrift(job) }
            }
            try await group.waitForAll()
        }
        try Task.checkCancellation()
    }

    /// Makes the simulated devices `devices` (the configuration reloaded): accessories new here
    /// join, with their drifts, as they are given; those no longer given leave (their drifts stop,
    /// reads and writes find no accessory); the others stay exactly as they are (values,
    /// reachability, behaviour and drifts: the devices did not restart). No event is sent: the
    /// engine takes the new accessories and drops the gone ones with the reloaded layout.
    @discardableResult
    public func replaceDevices(_ devices: [Device]) -> DeviceChanges {
        let (changes, jobs) = state.withLock { state in state.replace(with: devices) }
        for job in jobs { driftSink.yield(job) }
        return changes
    }

    // MARK: AccessoryDriver

    nonisolated(nonsending) public func accessories() async -> [Accessory] {
        state.withLock { state in state.order.compactMap { state.accessory($0) } }
    }

    /// The accessory `id` as the device has it now (structure, values, reachability); nil if it
    /// is not one of the simulator's. At once, without a suspension.
    public func accessory(_ id: AccessoryID) -> Accessory? {
        state.withLock { state in state.accessory(id) }
    }

    nonisolated(nonsending) public func read(_ reference: CharacteristicReference) async throws(StatusError) -> Value {
        try state.withLock { state throws(StatusError) in try state.read(reference) }
    }

    nonisolated(nonsending) public func write(_ value: Value, to reference: CharacteristicReference) async throws(StatusError) {
        let (name, latency) = try state.withLock { state throws(StatusError) in try state.checkWrite(value, to: reference) }
        if latency > .zero {
            do {
                try await clock.sleep(for: latency, tolerance: nil)
            } catch {
                throw StatusError(.timedOut, "the write to \(name) was cancelled")
            }
        }
        try state.withLock { state throws(StatusError) in try state.completeWrite(value, to: reference) }
    }

    /// Several characteristics in one request: each checked on its own; those that pass are
    /// written together after the accessory's latency (the longest, when they belong to several).
    nonisolated(nonsending) public func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        var outcomes: [CharacteristicReference: Result<Void, StatusError>] = [:]
        var latency = Duration.zero
        state.withLock { state in
            for (reference, value) in values {
                do throws(StatusError) {
                    latency = max(latency, try state.checkWrite(value, to: reference).latency)
                } catch {
                    outcomes[reference] = .failure(error)
                }
            }
        }
        if latency > .zero {
            do {
                try await clock.sleep(for: latency, tolerance: nil)
            } catch {
                for (reference, _) in values where outcomes[reference] == nil {
                    outcomes[reference] = .failure(StatusError(.timedOut, "the write was cancelled"))
                }
                return outcomes
            }
        }
        state.withLock { state in
            for (reference, value) in values where outcomes[reference] == nil {
                do throws(StatusError) {
                    try state.completeWrite(value, to: reference)
                    outcomes[reference] = .success(())
                } catch {
                    outcomes[reference] = .failure(error)
                }
            }
        }
        return outcomes
    }

    /// A read, answered at once (a simulated device has its values at hand).
    public func readNow(_ reference: CharacteristicReference) -> Result<Value, StatusError>? {
        state.withLock { state -> Result<Value, StatusError> in
            do throws(StatusError) {
                return .success(try state.read(reference))
            } catch {
                return .failure(error)
            }
        }
    }

    /// A write the device confirms at once (no latency): done here, without a suspension; nil
    /// when the device takes time (then use ``write(_:to:)``).
    public func writeNow(_ value: Value, to reference: CharacteristicReference) -> Result<Void, StatusError>? {
        state.withLock { state -> Result<Void, StatusError>? in state.writeNow(value, to: reference) }
    }

    // MARK: Controls: what a person does to the device

    /// A change made on the device itself: it reaches ``events`` like any device event. On an
    /// unreachable accessory the state changes silently (the refresh when it is back shows it).
    nonisolated(nonsending) public func update(_ reference: CharacteristicReference, to value: Value) async throws(StatusError) {
        try updateNow(reference, to: value)
    }

    private func updateNow(_ reference: CharacteristicReference, to value: Value) throws(StatusError) {
        let event = try state.withLock { state throws(StatusError) in try state.update(reference, to: value) }
        if let event { sink.yield(event) }
    }

    /// Takes an accessory off the network or back. For a bridge, everything behind it follows;
    /// one reachability event per accessory whose reachability changed.
    nonisolated(nonsending) public func setReachable(_ id: AccessoryID, _ reachable: Bool) async throws(StatusError) {
        let events = try state.withLock { state throws(StatusError) in try state.setReachable(id, reachable) }
        for event in events { sink.yield(event) }
    }

    /// Changes how an accessory answers writes from now on; nil leaves a setting as it is.
    /// A fail status makes every write fail (failure rate 1); `clearFailure` lets them succeed.
    nonisolated(nonsending) public func setBehaviour(_ id: AccessoryID, latency: Duration? = nil, failStatus: HAPStatus? = nil, clearFailure: Bool = false) async throws(StatusError) {
        try state.withLock { state throws(StatusError) in
            guard var device = state.devices[id] else { throw StatusError(.noSuchResource, "no simulated accessory \"\(id)\"") }
            if let latency { device.behaviour.latency = latency }
            if let failStatus {
                device.behaviour.failStatus = failStatus
                device.behaviour.failureRate = 1
            }
            if clearFailure { device.behaviour.failureRate = 0 }
            state.devices[id] = device
        }
    }

    /// A load for benchmarks: `count` changes of a numeric characteristic, one after the other as
    /// fast as they can be handed over, cycling through whole numbers within `range`, starting
    /// after the current value so every change is a change.
    nonisolated(nonsending) public func flood(_ reference: CharacteristicReference, count: Int, range: ClosedRange<Double>) async throws(StatusError) {
        let characteristic = try state.withLock { state throws(StatusError) in try state.lookUp(reference).1 }
        let span = max(2, Int(range.upperBound - range.lowerBound) + 1)
        let start = Int((characteristic.value?.number ?? range.lowerBound) - range.lowerBound) + 1
        for index in 0..<count {
            let number = range.lowerBound + Double((start + index) % span)
            try updateNow(reference, to: Self.value(number, format: characteristic.format))
        }
    }

    /// The accessory's reachability: its own, and its bridge's.
    public func serves(_ id: AccessoryID) -> Bool {
        state.withLock { $0.devices[id] != nil }
    }

    nonisolated(nonsending) public func isReachable(_ id: AccessoryID) async -> Bool {
        state.withLock { $0.isReachable(id) }
    }

    /// A number as a value of a numeric format.
    static func value(_ number: Double, format: Format) -> Value {
        switch format {
        case .float: return .float(number)
        case .int: return .int(Int64(number))
        default: return .uint(UInt64(max(0, number)))
        }
    }

    // MARK: Internals

    /// Steps the drift every interval while its accessory has not left.
    private func runDrift(_ job: DriftJob) async throws {
        while true {
            try await clock.sleep(for: job.drift.interval, tolerance: nil)
            guard state.withLock({ $0.incarnations[job.id] == job.incarnation }) else { return }
            step(job.drift, of: job.id)
        }
    }

    /// One random step of a drifting characteristic.
    func step(_ drift: Drift, of id: AccessoryID) {
        let next: (CharacteristicReference, Value)? = state.withLock { state in
            guard let (_, characteristic) = state.devices[id]?.accessory.characteristic(drift.iid) else { return nil }
            let current = characteristic.value?.number ?? drift.range.lowerBound
            let steps = Double(Int(state.random.next() % 3) - 1) // -1, 0 or +1 step
            var next = current + steps * drift.step
            if !drift.range.contains(next) { next = current - steps * drift.step }
            next = Self.round(next, toStep: drift.step)
            next = min(max(next, drift.range.lowerBound), drift.range.upperBound)
            guard next != current else { return nil }
            return (CharacteristicReference(accessoryID: id, iid: drift.iid), Self.value(next, format: characteristic.format))
        }
        if let (reference, value) = next { try? updateNow(reference, to: value) }
    }
}

extension Simulator.State {
    /// Takes `given` as the devices: see ``Simulator/replaceDevices(_:)``. The first of several
    /// devices with one id counts. Returns the changes and the drifts to start.
    mutating func replace(with given: [Simulator.Device]) -> (Simulator.DeviceChanges, [Simulator.DriftJob]) {
        var seen: Set<AccessoryID> = []
        let wanted = given.filter { seen.insert($0.accessory.id).inserted }
        var changes = Simulator.DeviceChanges(removed: order.filter { !seen.contains($0) })
        for id in changes.removed {
            devices[id] = nil
            ownReachability[id] = nil
            incarnations[id] = nil
        }
        var jobs: [Simulator.DriftJob] = []
        for device in wanted where devices[device.accessory.id] == nil {
            let id = device.accessory.id
            devices[id] = device
            ownReachability[id] = device.accessory.isReachable
            lastIncarnation += 1
            incarnations[id] = lastIncarnation
            jobs += device.drifts.map { Simulator.DriftJob(id: id, drift: $0, incarnation: lastIncarnation) }
            changes.added.append(id)
        }
        order = wanted.map(\.accessory.id)
        return (changes, jobs)
    }

    /// The accessory with its reachability now (its bridge's included).
    func accessory(_ id: AccessoryID) -> Accessory? {
        guard var accessory = devices[id]?.accessory else { return nil }
        accessory.isReachable = isReachable(id)
        return accessory
    }

    func isReachable(_ id: AccessoryID) -> Bool {
        guard ownReachability[id] == true else { return false }
        guard let bridge = devices[id]?.accessory.bridgeID else { return true }
        return ownReachability[bridge] ?? true
    }

    func lookUp(_ reference: CharacteristicReference) throws(StatusError) -> (Accessory, Characteristic) {
        guard let accessory = devices[reference.accessoryID]?.accessory else {
            throw StatusError(.noSuchResource, "no simulated accessory \"\(reference.accessoryID)\"")
        }
        guard let (_, characteristic) = accessory.characteristic(reference.iid) else {
            throw StatusError(.noSuchResource, "\(accessory.name) has no characteristic with iid \(reference.iid)")
        }
        return (accessory, characteristic)
    }

    func requireReachable(_ accessory: Accessory) throws(StatusError) {
        guard isReachable(accessory.id) else {
            throw StatusError(.communicationFailure, "\(accessory.name) is unreachable")
        }
    }

    func read(_ reference: CharacteristicReference) throws(StatusError) -> Value {
        let (accessory, characteristic) = try lookUp(reference)
        try requireReachable(accessory)
        try characteristic.validateRead()
        guard let value = characteristic.value else {
            throw StatusError(.communicationFailure, "\(accessory.name) has no value for \(characteristic.displayName) yet")
        }
        return value
    }

    /// The checks before a write; returns the accessory's name and its latency.
    func checkWrite(_ value: Value, to reference: CharacteristicReference) throws(StatusError) -> (name: String, latency: Duration) {
        let (accessory, characteristic) = try lookUp(reference)
        try requireReachable(accessory)
        try characteristic.validateWrite(value)
        return (accessory.name, devices[reference.accessoryID]?.behaviour.latency ?? .zero)
    }

    /// The end of a write: still reachable, not failing: the value is the device's now.
    mutating func completeWrite(_ value: Value, to reference: CharacteristicReference) throws(StatusError) {
        let (accessory, _) = try lookUp(reference)
        try requireReachable(accessory) // it may have dropped off during the latency
        try takeWrite(value, to: reference)
    }

    /// The device takes a checked write, or refuses it as often as its failure rate says.
    private mutating func takeWrite(_ value: Value, to reference: CharacteristicReference) throws(StatusError) {
        let behaviour = devices[reference.accessoryID]?.behaviour ?? Simulator.Behaviour()
        if behaviour.failureRate > 0, random.nextUnit() < behaviour.failureRate {
            let name = devices[reference.accessoryID]?.accessory.name ?? reference.accessoryID.rawValue
            throw StatusError(behaviour.failStatus, "\(name) refused the write (\(behaviour.failStatus.name))")
        }
        devices[reference.accessoryID]?.accessory.setValue(value, iid: reference.iid)
    }

    /// A write without latency, all at once; nil when the device takes time.
    mutating func writeNow(_ value: Value, to reference: CharacteristicReference) -> Result<Void, StatusError>? {
        do {
            guard try checkWrite(value, to: reference).latency == .zero else { return nil }
            try takeWrite(value, to: reference) // checked under the same lock: there and reachable
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// A change on the device; the event to report, if any.
    mutating func update(_ reference: CharacteristicReference, to value: Value) throws(StatusError) -> AccessoryEvent? {
        let (accessory, characteristic) = try lookUp(reference)
        try characteristic.validate(value)
        if !characteristic.isMomentary { devices[reference.accessoryID]?.accessory.setValue(value, iid: reference.iid) }
        // Like a HAP accessory: only characteristics with the `ev` permission notify; the others are polled.
        return isReachable(accessory.id) && characteristic.supportsEvents ? .value(reference, value) : nil
    }

    mutating func setReachable(_ id: AccessoryID, _ reachable: Bool) throws(StatusError) -> [AccessoryEvent] {
        guard devices[id] != nil else { throw StatusError(.noSuchResource, "no simulated accessory \"\(id)\"") }
        let affected = [id] + order.filter { devices[$0]?.accessory.bridgeID == id }
        let before = affected.map(isReachable)
        ownReachability[id] = reachable
        return zip(affected, before).compactMap { accessory, was in
            isReachable(accessory) != was ? .reachability(accessory, reachable: isReachable(accessory)) : nil
        }
    }
}

extension Simulator {
    /// `value` rounded to a multiple of `step`, without binary fractions showing (21.2, not
    /// 21.200000000000003).
    static func round(_ value: Double, toStep step: Double) -> Double {
        let multiple = (value / step).rounded() * step
        var decimals = 0
        var scaled = step
        while decimals < 10, scaled != scaled.rounded() {
            scaled *= 10
            decimals += 1
        }
        var factor = 1.0
        for _ in 0..<decimals { factor *= 10 }
        return (multiple * factor).rounded() / factor
    }
}

/// SplitMix64: small, fast, and the same sequence for the same seed.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<1.
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

import HomeModel

/// HomeGate's HomeKit Accessory Simulator: accessories and bridges that behave like real ones.
///
/// Writes take the accessory's latency and may fail with its status; an unreachable accessory
/// (or one behind an unreachable bridge) fails every read and write with -70402; drifting
/// sensors change by themselves; a person's change on the device is injected with
/// ``update(_:to:)``. Confirmed writes send no event (a HomeKit accessory does not notify the
/// controller that made the change); every other change of a characteristic with the `ev`
/// permission does, in order, on ``events`` (the others are found by polling).
public actor Simulator: AccessoryDriver {
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

    /// Changes on the device side, in order. One consumer.
    public nonisolated let events: AsyncStream<AccessoryEvent>
    private let sink: AsyncStream<AccessoryEvent>.Continuation
    private var devices: [AccessoryID: Device]
    /// The accessory's own reachability flag (its bridge's is separate).
    private var ownReachability: [AccessoryID: Bool]
    private let order: [AccessoryID]
    private let clock: any Clock<Duration>
    private var random: SeededRandom

    /// - Parameters:
    ///   - devices: the accessories; an accessory's `isReachable` is its reachability at start.
    ///   - clock: the clock latencies and drift run on (tests inject their own).
    ///   - seed: the seed of the random numbers behind failures and drift.
    public init(devices: [Device], clock: any Clock<Duration> = ContinuousClock(), seed: UInt64 = .random(in: 0...UInt64.max)) {
        self.devices = Dictionary(devices.map { ($0.accessory.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.ownReachability = Dictionary(devices.map { ($0.accessory.id, $0.accessory.isReachable) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<AccessoryID> = []
        self.order = devices.map(\.accessory.id).filter { seen.insert($0).inserted }
        self.clock = clock
        self.random = SeededRandom(seed: seed)
        (events, sink) = AsyncStream.makeStream(of: AccessoryEvent.self)
    }

    /// Runs the drifting sensors until cancelled.
    public func run() async throws {
        let drifts = order.flatMap { id in (devices[id]?.drifts ?? []).map { (id, $0) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (id, drift) in drifts {
                group.addTask { try await self.runDrift(drift, of: id) }
            }
            try await group.waitForAll()
        }
    }

    // MARK: AccessoryDriver

    public func accessories() -> [Accessory] {
        order.compactMap { id in
            guard var accessory = devices[id]?.accessory else { return nil }
            accessory.isReachable = isReachable(id)
            return accessory
        }
    }

    public func read(_ reference: CharacteristicReference) async throws(DriverError) -> Value {
        let (accessory, characteristic) = try lookUp(reference)
        try requireReachable(accessory)
        do {
            try characteristic.validateRead()
        } catch {
            throw DriverError(error.status, error.message)
        }
        guard let value = characteristic.value else {
            throw DriverError(.communicationFailure, "\(accessory.name) has no value for \(characteristic.displayName) yet")
        }
        return value
    }

    public func write(_ value: Value, to reference: CharacteristicReference) async throws(DriverError) {
        let (accessory, characteristic) = try lookUp(reference)
        try requireReachable(accessory)
        do {
            try characteristic.validateWrite(value)
        } catch {
            throw DriverError(error.status, error.message)
        }
        let behaviour = devices[reference.accessoryID]?.behaviour ?? Behaviour()
        if behaviour.latency > .zero {
            do {
                try await clock.sleep(for: behaviour.latency, tolerance: nil)
            } catch {
                throw DriverError(.timedOut, "the write to \(accessory.name) was cancelled")
            }
            try requireReachable(accessory) // it may have dropped off meanwhile
        }
        if behaviour.failureRate > 0, random.nextUnit() < behaviour.failureRate {
            throw DriverError(behaviour.failStatus, "\(accessory.name) refused the write (\(behaviour.failStatus.name))")
        }
        devices[reference.accessoryID]?.accessory.setValue(value, iid: reference.iid)
    }

    // MARK: Controls: what a person does to the device

    /// A change made on the device itself: it reaches ``events`` like any device event. On an
    /// unreachable accessory the state changes silently (the refresh when it is back shows it).
    public func update(_ reference: CharacteristicReference, to value: Value) throws(DriverError) {
        let (accessory, characteristic) = try lookUp(reference)
        do {
            try characteristic.validate(value)
        } catch {
            throw DriverError(error.status, error.message)
        }
        if !characteristic.isMomentary { devices[reference.accessoryID]?.accessory.setValue(value, iid: reference.iid) }
        // Like a HAP accessory: only characteristics with the `ev` permission notify; the others are polled.
        if isReachable(accessory.id), characteristic.supportsEvents { sink.yield(.value(reference, value)) }
    }

    /// Takes an accessory off the network or back. For a bridge, everything behind it follows;
    /// one reachability event per accessory whose reachability changed.
    public func setReachable(_ id: AccessoryID, _ reachable: Bool) throws(DriverError) {
        guard devices[id] != nil else { throw DriverError(.noSuchResource, "no simulated accessory \"\(id)\"") }
        let affected = [id] + order.filter { devices[$0]?.accessory.bridgeID == id }
        let before = affected.map(isReachable)
        ownReachability[id] = reachable
        for (accessory, was) in zip(affected, before) where isReachable(accessory) != was {
            sink.yield(.reachability(accessory, reachable: isReachable(accessory)))
        }
    }

    /// Changes how an accessory answers writes from now on; nil leaves a setting as it is.
    /// A fail status makes every write fail (failure rate 1); `clearFailure` lets them succeed.
    public func setBehaviour(_ id: AccessoryID, latency: Duration? = nil, failStatus: HAPStatus? = nil, clearFailure: Bool = false) throws(DriverError) {
        guard var device = devices[id] else { throw DriverError(.noSuchResource, "no simulated accessory \"\(id)\"") }
        if let latency { device.behaviour.latency = latency }
        if let failStatus {
            device.behaviour.failStatus = failStatus
            device.behaviour.failureRate = 1
        }
        if clearFailure { device.behaviour.failureRate = 0 }
        devices[id] = device
    }

    /// A load for benchmarks: `count` changes of a numeric characteristic, one after the other as
    /// fast as they can be handed over, cycling through whole numbers within `range`.
    public func flood(_ reference: CharacteristicReference, count: Int, range: ClosedRange<Double>) throws(DriverError) {
        let (_, characteristic) = try lookUp(reference)
        let span = max(2, Int(range.upperBound - range.lowerBound) + 1)
        // Start after the current value, so every change is a change.
        let start = Int((characteristic.value?.number ?? range.lowerBound) - range.lowerBound) + 1
        for index in 0..<count {
            let number = range.lowerBound + Double((start + index) % span)
            let value: Value
            switch characteristic.format {
            case .float: value = .float(number)
            case .int: value = .int(Int64(number))
            default: value = .uint(UInt64(max(0, number)))
            }
            try update(reference, to: value)
        }
    }

    /// The accessory's reachability: its own, and its bridge's.
    public func isReachable(_ id: AccessoryID) -> Bool {
        guard ownReachability[id] == true else { return false }
        guard let bridge = devices[id]?.accessory.bridgeID else { return true }
        return ownReachability[bridge] ?? true
    }

    // MARK: Internals

    private func lookUp(_ reference: CharacteristicReference) throws(DriverError) -> (Accessory, Characteristic) {
        guard let accessory = devices[reference.accessoryID]?.accessory else {
            throw DriverError(.noSuchResource, "no simulated accessory \"\(reference.accessoryID)\"")
        }
        guard let (_, characteristic) = accessory.characteristic(reference.iid) else {
            throw DriverError(.noSuchResource, "\(accessory.name) has no characteristic with iid \(reference.iid)")
        }
        return (accessory, characteristic)
    }

    private func requireReachable(_ accessory: Accessory) throws(DriverError) {
        guard isReachable(accessory.id) else {
            throw DriverError(.communicationFailure, "\(accessory.name) is unreachable")
        }
    }

    private func runDrift(_ drift: Drift, of id: AccessoryID) async throws {
        while true {
            try await clock.sleep(for: drift.interval, tolerance: nil)
            step(drift, of: id)
        }
    }

    /// One random step of a drifting characteristic.
    func step(_ drift: Drift, of id: AccessoryID) {
        guard let (_, characteristic) = devices[id]?.accessory.characteristic(drift.iid) else { return }
        let current = characteristic.value?.number ?? drift.range.lowerBound
        let steps = Double(Int(random.next() % 3) - 1) // -1, 0 or +1 step
        var next = current + steps * drift.step
        if !drift.range.contains(next) { next = current - steps * drift.step }
        next = Self.round(next, toStep: drift.step)
        next = min(max(next, drift.range.lowerBound), drift.range.upperBound)
        guard next != current else { return }
        let value: Value
        switch characteristic.format {
        case .float: value = .float(next)
        case .int: value = .int(Int64(next))
        default: value = .uint(UInt64(max(0, next)))
        }
        try? update(CharacteristicReference(accessoryID: id, iid: drift.iid), to: value)
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

import HomeModel
import Wire

/// Where accessories come from and how they are driven: the simulator, HAP devices, ...
///
/// A driver discovers its accessories (their structure and current values), reads and writes
/// characteristics (a write returns only when the device confirmed it, or throws its status),
/// and reports what happens on the device side through ``events``.
public protocol AccessoryDriver: Sendable {
    /// The accessories this driver serves, with their services, characteristics and values.
    func accessories() async throws -> [Accessory]

    /// Reads a characteristic from the device now.
    /// - Throws: ``StatusError`` with the device's HAP status (unreachable: -70402).
    func read(_ characteristic: CharacteristicReference) async throws(StatusError) -> Value

    /// Writes a characteristic and returns when the device has confirmed it.
    /// - Throws: ``StatusError`` with the device's HAP status. Cancellation stops the wait.
    func write(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError)

    /// Writes a characteristic asking for the value the write produced (HAP's write response:
    /// Adaptive Lighting's control point answers with the transition it took); returns it, nil
    /// when the device gives none.
    /// - Throws: ``StatusError`` with the device's HAP status.
    func writeWithResponse(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) -> Value?

    /// Writes several characteristics of one accessory in one request (HAP: one
    /// `PUT /characteristics`), returning when the device answered: each characteristic's outcome.
    /// Cancellation stops the wait (the outcomes are then failures).
    func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>]

    /// A read the device answers at once: its result without a suspension, or nil when the
    /// device needs time (then the engine calls ``read(_:)``). Network devices return nil.
    func readNow(_ characteristic: CharacteristicReference) -> Result<Value, StatusError>?

    /// A write the device confirms at once: its result without a suspension, or nil when the
    /// device needs time (then the engine calls ``write(_:to:)``). Network devices return nil.
    func writeNow(_ value: Value, to characteristic: CharacteristicReference) -> Result<Void, StatusError>?

    /// A still image from a camera accessory, as JPEG bytes; `width` and `height` are the size
    /// asked for (a camera may answer with the nearest size it makes).
    /// - Throws: ``StatusError``: -70409 (no such resource) when the accessory is no camera or
    ///   its driver takes no snapshots (the simulator's cameras: none), -70402 when it cannot be
    ///   reached, the device's own status when it refuses.
    func snapshot(of accessory: AccessoryID, width: Int, height: Int) async throws(StatusError) -> [UInt8]

    /// Changes reported by the devices: values (events, drift, physical changes) and
    /// reachability. One stream per driver, for one consumer, in order.
    var events: AsyncStream<AccessoryEvent> { get }

    /// The event streams to consume, each in its own order: one for a driver, one per driver for
    /// a ``DriverSet`` (so no task stands between a device and the engine).
    var eventStreams: [AsyncStream<AccessoryEvent>] { get }

    /// Whether the accessory `id` is this driver's.
    func serves(_ id: AccessoryID) -> Bool

    /// Where an accessory this driver brings goes when the home does not have it yet (a newly
    /// paired device); nil: the primary home's default room.
    func placement(of id: AccessoryID) -> Placement?

    /// The executor the accessory's requests run on (its connection's event loop), when it has
    /// one: the engine starts its device work for the accessory there, so that the request is
    /// written and its answer resumes the work on one thread. nil: anywhere.
    func taskExecutor(for accessory: AccessoryID) -> (any TaskExecutor)?
}

/// Where a new accessory goes: a home and a room, by name (HomeKit's comparison: case, spaces
/// and apostrophes ignored). A missing room is made; an unknown home means the primary home.
public struct Placement: Sendable, Hashable {
    public var home: String?
    public var room: String?

    public init(home: String? = nil, room: String? = nil) {
        self.home = home
        self.room = room
    }
}

/// Something that happened on the device side.
public enum AccessoryEvent: Sendable, Hashable {
    /// A characteristic's value changed on the device.
    case value(CharacteristicReference, Value)
    /// An accessory became reachable or unreachable.
    case reachability(AccessoryID, reachable: Bool)
    /// Accessories a device described (again): structure, values, reachability. Those the home
    /// has get the new structure and values; new ones are placed (``AccessoryDriver/placement(of:)``).
    case accessories([Accessory])
    /// Accessories that are gone for good (their device was unpaired): they leave the home.
    case removed([AccessoryID])
    /// Something odd about a device's description of itself (the accessory named is its first),
    /// and what was done about it.
    case warning(AccessoryID, String)
    /// Something a device reported that is no characteristic's value (a Matter node's event: a
    /// door lock's alarm, a switch's press): its kind (`Door Lock: Lock Operation`) and fields.
    case deviceEvent(AccessoryID, kind: String, fields: [String: JSON])
}

extension AccessoryDriver {
    public var eventStreams: [AsyncStream<AccessoryEvent>] { [events] }

    public func placement(of id: AccessoryID) -> Placement? {
        nil
    }

    public func taskExecutor(for accessory: AccessoryID) -> (any TaskExecutor)? {
        nil
    }

    /// A device without write responses (the simulator) confirms the write and answers nothing.
    public func writeWithResponse(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) -> Value? {
        try await write(value, to: characteristic)
        return nil
    }

    public func writeNow(_ value: Value, to characteristic: CharacteristicReference) -> Result<Void, StatusError>? {
        nil
    }

    public func readNow(_ characteristic: CharacteristicReference) -> Result<Value, StatusError>? {
        nil
    }

    /// No snapshots: for drivers whose devices have no cameras.
    public func snapshot(of accessory: AccessoryID, width: Int, height: Int) async throws(StatusError) -> [UInt8] {
        throw StatusError(.noSuchResource, "accessory \(accessory) takes no snapshots")
    }

    /// One write after the other: for drivers whose devices take one characteristic per request.
    public func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        await writeOneAfterAnother(values)
    }

    /// Each value with ``write(_:to:)``, in order: each characteristic's outcome.
    public func writeOneAfterAnother(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        var outcomes: [CharacteristicReference: Result<Void, StatusError>] = [:]
        for (reference, value) in values {
            do {
                try await write(value, to: reference)
                outcomes[reference] = .success(())
            } catch {
                outcomes[reference] = .failure(error)
            }
        }
        return outcomes
    }
}

import HomeModel
import Synchronization
import Wire

/// Several drivers as one (the simulator and the HAP controller): each accessory goes to the
/// driver that serves it; their events come as one stream per driver (``eventStreams``), each
/// in its own order.
public final class DriverSet: AccessoryDriver {
    private let drivers: [any AccessoryDriver]

    public init(_ drivers: [any AccessoryDriver]) {
        self.drivers = drivers
    }

    /// Every driver's own stream.
    public var eventStreams: [AsyncStream<AccessoryEvent>] {
        drivers.flatMap(\.eventStreams)
    }

    /// Not used: a set's events come through ``eventStreams``; this stream ends at once.
    public var events: AsyncStream<AccessoryEvent> {
        AsyncStream { $0.finish() }
    }

    public func accessories() async throws -> [Accessory] {
        try await withThrowingTaskGroup(of: [Accessory].self) { group in
            for driver in drivers { group.addTask { try await driver.accessories() } }
            var all: [Accessory] = []
            for try await accessories in group { all += accessories }
            return all
        }
    }

    public func read(_ characteristic: CharacteristicReference) async throws(StatusError) -> Value {
        try await driver(for: characteristic.accessoryID).read(characteristic)
    }

    public func write(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) {
        try await driver(for: characteristic.accessoryID).write(value, to: characteristic)
    }

    public func writeWithResponse(_ value: Value, to characteristic: CharacteristicReference) async throws(StatusError) -> Value? {
        try await driver(for: characteristic.accessoryID).writeWithResponse(value, to: characteristic)
    }

    public func writeNow(_ value: Value, to characteristic: CharacteristicReference) -> Result<Void, StatusError>? {
        guard let driver = drivers.first(where: { $0.serves(characteristic.accessoryID) }) else {
            return .failure(Self.unknown(characteristic.accessoryID))
        }
        return driver.writeNow(value, to: characteristic)
    }

    public func readNow(_ characteristic: CharacteristicReference) -> Result<Value, StatusError>? {
        guard let driver = drivers.first(where: { $0.serves(characteristic.accessoryID) }) else {
            return .failure(Self.unknown(characteristic.accessoryID))
        }
        return driver.readNow(characteristic)
    }

    public func write(_ values: [(CharacteristicReference, Value)]) async -> [CharacteristicReference: Result<Void, StatusError>] {
        guard let first = values.first else { return [:] }
        do {
            return try await driver(for: first.0.accessoryID).write(values)
        } catch {
            return Dictionary(values.map { ($0.0, .failure(error)) }, uniquingKeysWith: { first, _ in first })
        }
    }

    public func snapshot(of accessory: AccessoryID, width: Int, height: Int) async throws(StatusError) -> [UInt8] {
        try await driver(for: accessory).snapshot(of: accessory, width: width, height: height)
    }

    public func serves(_ id: AccessoryID) -> Bool {
        drivers.contains { $0.serves(id) }
    }

    public func placement(of id: AccessoryID) -> Placement? {
        drivers.first { $0.serves(id) }?.placement(of: id)
    }

    public func taskExecutor(for accessory: AccessoryID) -> (any TaskExecutor)? {
        drivers.first { $0.serves(accessory) }?.taskExecutor(for: accessory)
    }

    private func driver(for id: AccessoryID) throws(StatusError) -> any AccessoryDriver {
        guard let driver = drivers.first(where: { $0.serves(id) }) else { throw Self.unknown(id) }
        return driver
    }

    private static func unknown(_ id: AccessoryID) -> StatusError {
        StatusError(.communicationFailure, "no device serves accessory \(id)")
    }
}

import Accessories
import HomeModel
import Wire

/// The simulator's controls carried out (``SimulatorRequest``, parsed before): a value changed
/// on the device, its reachability, a flood of events, how it answers. Each waits for the
/// simulator, and what it changes is published before the answer.
extension Gateway {
    func simulatorRequest(_ request: SimulatorRequest) async throws -> [String: JSON] {
        guard let simulator else { throw GatewayRequest.unknown("simulator") }
        switch request {
        case .update(let name, let raw):
            let requested = try tree.requestedCharacteristic(name, home: nil)
            let (reference, characteristic) = (requested.reference, requested.characteristic)
            let value: Value
            do {
                value = try Value.parse(json: raw, format: characteristic.format, name: characteristic.displayName)
                try characteristic.validate(value)
            } catch {
                throw RequestError.invalid(error.message)
            }
            try await device { try await simulator.update(reference, to: value) }
            // Published before the answer, so whoever reads the answer finds the value retained.
            if characteristic.supportsEvents, await simulator.isReachable(reference.accessoryID) { applyValue(value, to: reference) }
            return ["accessory": .string(reference.accessoryID.rawValue), "iid": .int(reference.iid), "value": .value(value)]
        case .reachability(let accessory, let reachable):
            let id = try tree.requestedAccessory(accessory)
            try await device { try await simulator.setReachable(id, reachable) }
            // Applied before the answer (the device events that follow change nothing more).
            for affected in [id] + tree.homes.flatMap(\.accessories).filter({ $0.bridgeID == id }).map(\.id) {
                setReachable(affected, await simulator.isReachable(affected))
            }
            return ["accessory": .string(id.rawValue), "reachable": .bool(reachable)]
        case .flood(let name, let count):
            let requested = try tree.requestedCharacteristic(name, home: nil)
            let (reference, characteristic) = (requested.reference, requested.characteristic)
            guard characteristic.format.isNumeric, let lower = characteristic.minValue, let upper = characteristic.maxValue else {
                throw RequestError.invalid("flood needs a numeric characteristic with a minimum and a maximum")
            }
            try await device { try await simulator.flood(reference, count: count, range: lower...upper) }
            return ["accessory": .string(reference.accessoryID.rawValue), "iid": .int(reference.iid), "count": .int(count)]
        case .behaviour(let accessory, let latency, let failure):
            let id = try tree.requestedAccessory(accessory)
            let failStatus: HAPStatus? = if case .fail(let status) = failure { status } else { nil }
            try await device { try await simulator.setBehaviour(id, latency: latency, failStatus: failStatus, clearFailure: failure == .clear) }
            return ["accessory": .string(id.rawValue)]
        }
    }

    /// Runs a simulator call; its refusal is the request's (`not-found`, else `invalid-request`).
    private func device(_ operation: () async throws -> Void) async throws {
        do {
            try await operation()
        } catch let error as StatusError {
            throw error.status == .noSuchResource ? RequestError.notFound(error.message) : RequestError.invalid(error.message)
        }
    }
}

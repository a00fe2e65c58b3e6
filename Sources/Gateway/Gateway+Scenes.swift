import Accessories
import Foundation
import HomeModel
import MQTT
import Wire

/// Several writes at once: action sets (scenes), and the shortcuts that write every matching
/// service of a service group or of a zone's rooms. The writes run together (their order is not
/// defined, as in HomeKit); one aggregated acknowledgement lists each write's outcome.
extension Gateway {
    /// One write of several, and how it went.
    struct WriteOutcome: Sendable {
        let reference: CharacteristicReference
        let value: Value
        let status: HAPStatus
        let message: String?

        var ok: Bool { status == .success }
    }

    /// What executing an action set did.
    struct ActionSetExecution: Sendable {
        let actionSet: String
        let outcomes: [WriteOutcome]
        var ok: Bool { outcomes.allSatisfy(\.ok) }
    }

    /// Runs the writes together, each with the write timeout; confirmed values are applied (and
    /// published) as they come.
    func writeTogether(_ writes: [(CharacteristicReference, Value)]) async -> [WriteOutcome] {
        let driver = driver
        let timeout = configuration.writeTimeout
        let outcomes = await withTaskGroup(of: (Int, WriteOutcome).self) { group in
            for (index, (reference, value)) in writes.enumerated() {
                group.addTask {
                    (index, await Self.writeWithin(timeout, value, to: reference, driver: driver))
                }
            }
            var outcomes: [(Int, WriteOutcome)] = []
            for await outcome in group {
                if outcome.1.ok { applyValue(outcome.1.value, to: outcome.1.reference) }
                outcomes.append(outcome)
            }
            return outcomes.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return outcomes
    }

    private static func writeWithin(_ timeout: Duration, _ value: Value, to reference: CharacteristicReference,
                                    driver: any AccessoryDriver) async -> WriteOutcome {
        if let immediate = driver.writeNow(value, to: reference) {
            return outcome(immediate, value, reference)
        }
        let first = FirstOf<Result<Void, StatusError>?>()
        let result = await withCheckedContinuation { continuation in
            first.start(continuation)
            let timer = Task {
                try? await Task.sleep(for: timeout)
                first.offer(nil)
            }
            Task {
                do throws(StatusError) {
                    try await driver.write(value, to: reference)
                    first.offer(.success(()))
                } catch {
                    first.offer(.failure(error))
                }
                timer.cancel()
            }
        }
        guard let result else {
            return WriteOutcome(reference: reference, value: value, status: .timedOut, message: "the device did not confirm the write in time")
        }
        return outcome(result, value, reference)
    }

    private static func outcome(_ result: Result<Void, StatusError>, _ value: Value, _ reference: CharacteristicReference) -> WriteOutcome {
        switch result {
        case .success: WriteOutcome(reference: reference, value: value, status: .success, message: nil)
        case .failure(let error): WriteOutcome(reference: reference, value: value, status: error.status, message: error.message)
        }
    }

    /// Executes an action set of the home: its writes together; announces `action-set-executed`
    /// with each write's outcome. `cause`: `request`, `shortcut` or `trigger`.
    func executeActionSet(_ id: ActionSetID, inHome homeID: HomeID, cause: String) async -> ActionSetExecution? {
        guard let home = homes.first(where: { $0.id == homeID }), let actionSet = home.actionSets.first(where: { $0.id == id }) else { return nil }
        let outcomes = await writeTogether(actionSet.actions.map { ($0.characteristic, $0.value) })
        let execution = ActionSetExecution(actionSet: actionSet.name, outcomes: outcomes)
        announce("action-set-executed", ["home": .string(home.name), "actionSet": .string(actionSet.name), "cause": .string(cause),
                                         "ok": .bool(execution.ok), "results": .array(results(outcomes))])
        return execution
    }

    /// Each write's outcome as the acknowledgement lists it: `accessory`, `topic`, `ok`,
    /// `status`, `message`.
    func results(_ outcomes: [WriteOutcome]) -> [JSON] {
        outcomes.map { outcome in
            let topic = locations[outcome.reference.accessoryID].flatMap { location in
                map.topic(of: .characteristic(homes[location.home].id, outcome.reference))
            }
            return .object([
                "accessory": .string(outcome.reference.accessoryID.rawValue), "iid": .int(outcome.reference.iid), "topic": .string(topic),
                "ok": .bool(outcome.ok), "status": .int(outcome.status.rawValue),
                "message": .string(outcome.message),
            ])
        }
    }

    /// The aggregated acknowledgement: `ok` only if every write succeeded.
    func aggregatedAcknowledgement(_ outcomes: [WriteOutcome], extra: [String: JSON] = [:]) -> [String: JSON] {
        var body = extra
        body["ok"] = .bool(outcomes.allSatisfy(\.ok))
        body["results"] = .array(results(outcomes))
        return body
    }
}

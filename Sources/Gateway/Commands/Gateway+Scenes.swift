import Accessories
import Foundation
import HomeModel
import MQTT
import Wire

/// Action sets (scenes): their writes run as one command of independent writes (each in its
/// characteristic's line, behind the sets already waiting there; their order is not defined, as
/// in HomeKit), acknowledged once with each write's outcome.
extension Gateway {
    /// What executing an action set did.
    struct ActionSetExecution: Sendable {
        let actionSet: String
        let outcomes: [CommandMachine.Result]
        var ok: Bool { outcomes.allSatisfy { $0.outcome.status == .success } }
    }

    /// Executes an action set of the home and waits for every write's outcome; announces
    /// `action-set-executed`. `cause`: `request`, `shortcut` or `trigger`. Nil when there is no
    /// such action set.
    func executeActionSet(_ id: ActionSetID, inHome homeID: HomeID, cause: String) async -> ActionSetExecution? {
        guard let home = tree.homes.first(where: { $0.id == homeID }), let actionSet = home.actionSets.first(where: { $0.id == id }) else { return nil }
        let outcomes = await outcomes(of: .each(actionSet.actions.map { CommandMachine.Item($0.characteristic, .write($0.value)) }))
        let execution = ActionSetExecution(actionSet: actionSet.name, outcomes: outcomes)
        announce(Announcement("action-set-executed", ["home": .string(home.name), "actionSet": .string(actionSet.name), "cause": .string(cause),
                                         "ok": .bool(execution.ok), "results": .array(tree.listed(outcomes))]))
        return execution
    }
}

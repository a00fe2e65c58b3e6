import Foundation
import HomeModel
import MQTT
import Wire

/// The shortcuts of section 7, answered like a set (on `<topic>/result` and the Response Topic)
/// with one aggregated acknowledgement:
/// - `<base>/<home>/$action-sets/<name>/execute`: the action set's writes, together;
/// - `<base>/<home>/$groups/<group>/<characteristic>/set`: every service of the group that has
///   the characteristic;
/// - `<base>/<home>/$zones/<zone>/<service-type>/<characteristic>/set`: every service of that
///   type in the zone's rooms.
/// Names in these topics compare like every segment (case, `-`, `_`, spaces, apostrophes ignored).
/// What a shortcut names is read against the tree first (``HomeTree/plan(for:)``); here it runs.
extension Gateway {
    /// A shortcut arrived: planned against the tree, then run; one aggregated acknowledgement.
    func handle(_ shortcut: Inbound.Shortcut, from message: Message) {
        let reply = Reply(to: message, id: shortcut.body.id)
        let plan: HomeTree.ShortcutPlan
        do {
            plan = try tree.plan(for: shortcut)
        } catch {
            acknowledge(reply, failure: error.status, error.message)
            return
        }
        switch plan {
        case .actionSet(let home, let actionSet):
            work.start { [weak self] in
                guard let self else { return }
                guard let execution = await self.executeActionSet(actionSet.id, inHome: home, cause: "shortcut") else {
                    await self.acknowledge(reply, failure: .noSuchResource, "the action set \(actionSet.name) is gone")
                    return
                }
                await self.acknowledgeAll(reply, execution.outcomes, extra: ["actionSet": .string(actionSet.name)])
            }
        case .writes(let writes, let refused, let extra) where refused.isEmpty:
            submit(.each(writes), to: .reply(reply, .aggregated(extra)))
        case .writes(let writes, let refused, let extra):
            // Some values are refused: the others run, and one acknowledgement lists them all.
            work.start { [weak self] in
                guard let self else { return }
                let outcomes = await self.outcomes(of: .each(writes))
                await self.acknowledgeAll(reply, outcomes + refused, extra: extra)
            }
        }
    }

    /// The aggregated acknowledgement: `ok` only if every write succeeded; `results` per write.
    private func acknowledgeAll(_ reply: Reply, _ outcomes: [CommandMachine.Result], extra: [String: JSON]) {
        let (body, status) = tree.aggregatedAcknowledgement(outcomes, extra: extra)
        acknowledge(reply, body, status: status)
    }
}

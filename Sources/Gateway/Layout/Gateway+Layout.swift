import Accessories
import Foundation
import HomeModel
import HomeStore
import Wire

/// `$layout` (the homes' structure, retained, in parts: ``LayoutDocument``; republished at most
/// about once a second while structure changes keep coming), `$meta` (per accessory, retained;
/// its payload is ``TreePayloads``'s), `$events` (one message per change, not retained), and
/// layout changes from a reloaded configuration.
extension Gateway {
    /// Marks the layout changed: `$layout` follows within the layout interval; `saving` also
    /// stores it.
    func layoutDidChange(saving: Bool) {
        retained.layoutChanged()
        if saving { triggersChanged() }
        guard saving, store != nil else { return }
        let layout = LayoutDigest(tree.homes)
        guard layout != savedLayout else { return }
        storeWriter.saveLayout(tree.homes, previous: savedLayout)
        savedLayout = layout
    }

    /// Commits a change of the layout, the one way every change does (a management request, a
    /// reloaded configuration, a device's new structure, accessories removed), in this order:
    /// the topic map made again (unless the caller already did: `reindexed`), the layout marked
    /// changed and stored, one `$events` message per change since `before`, then `announcing`
    /// (what the change adds to `$events`), then the retained topics of the new layout
    /// (old ones cleared).
    func commitLayoutChange(from before: [Home], reindexed: Bool = false, announcing: () -> Void = {}) {
        if !reindexed { reindex() }
        layoutDidChange(saving: true)
        for event in LayoutChanges.events(from: before, to: tree.homes) { announce(event) }
        announcing()
        republishAfterLayoutChange()
    }

    /// Publishes `$layout` whenever it changed, at most once per layout interval: the parts
    /// that changed, and clears those no longer there.
    func publishLayoutWhenChanged() async throws {
        while true {
            try await Task.sleep(for: configuration.layoutInterval)
            metrics.recordQueueDepth(machine.waitingCount)
            guard retained.takeLayoutChange() else { continue }
            carry(retained.assertLayout(LayoutDocument(base: base, map: tree.map, options: policy.options).messages(for: tree.homes)))
        }
    }

    /// Announces a change on `$events`: its fields with `event`, its kind.
    func announce(_ event: Announcement) {
        var body = event.fields
        body["event"] = .string(event.kind)
        send(TopicGrammar.topic(base, .events), JSON.object(body).encoded(), retain: false)
    }

    /// Applies a new layout (a reloaded configuration merged with the running layout): renames
    /// and moves change topics; old retained topics are cleared and values republished on the new
    /// ones; accessories gone from the new layout leave (their topics cleared). An accessory new
    /// in it joins when the simulator has it (give the simulator the reloaded devices first,
    /// ``Accessories/Simulator/replaceDevices(_:)``), with the device's structure, values and
    /// reachability, and its topics and `$layout` are published like the others'.
    /// - Parameter layout: the new layout, made from the running one (the store may lag behind
    ///   it), with nothing in between.
    /// - Returns: the accessories of the new layout left out because no device is known for them
    ///   (they appear at the next start).
    @discardableResult
    public func reload(_ layout: @Sendable (_ running: [Home]) -> [Home]) -> Set<AccessoryID> {
        let before = tree.homes
        let (merged, joined, leftOut) = tree.withDevices(in: layout(tree.homes), joining: { simulator?.accessory($0) })
        for id in leftOut.sorted(by: { $0.rawValue < $1.rawValue }) { logger.notice("accessory \(id) is new in the configuration; it appears at the next start") }
        tree.homes = merged
        commitLayoutChange(from: before)
        for id in joined {
            guard let (home, accessory) = tree.accessory(id) else { continue }
            logger.info("accessory \(id) (\(accessory.name)) is new in the configuration; it joins \(home.name), \(home.room(of: accessory).name)")
        }
        logger.info("configuration reloaded")
        return leftOut
    }
}

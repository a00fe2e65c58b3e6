import Accessories
import Foundation
import HAPDriver
import HomeGateConfig
import HomeModel
import HomeStore
import Gateway
import Logging
import UnixSignals

/// The layout from the configuration file and the store, at start and on SIGHUP (see
/// ``LayoutMerge`` for the rule).
///
/// At start the store is the layout's only source. On SIGHUP the running engine's layout is:
/// the store follows the engine through the engine's store writer and may not have caught up
/// yet (a SIGHUP the moment `$state` says `online` can come before the first synchronisation
/// records the configuration as applied). So the configuration applied last is kept here, in
/// memory, and the merge runs inside the engine, on its layout as it is then.
struct Reloader: Sendable {
    let configPath: String
    let overrides: ConfigFile.Overrides
    let store: HomeStore
    let logger: Logger

    /// Reloads the configuration file and the pairings at every signal of `hangUps` (SIGHUP,
    /// trapped before the gateway starts, so none is missed), until cancelled. The simulator
    /// takes the file's devices first (new ones join, gone ones leave), so the engine finds the
    /// new accessories when it takes the layout.
    /// - Parameter applied: the configuration's homes applied at start.
    func reloadOnHangUp(_ hangUps: UnixSignalsSequence, applied: [Home], engine: Gateway, simulator: Simulator, hapDriver: HAPDriver) async {
        var applied = applied
        for await _ in hangUps {
            logger.info("SIGHUP: reloading the configuration")
            guard let file = readConfiguration(), let pairings = storedPairings() else { continue }
            let paired = Self.pairedAccessoryPrefixes(pairings)
            let changes = simulator.replaceDevices(file.simulatorDevices)
            if !changes.added.isEmpty || !changes.removed.isEmpty {
                logger.info("simulated accessories: \(changes.added.count) added, \(changes.removed.count) removed")
            }
            let lastApplied = applied
            let leftOut = await engine.reload { current in
                Self.withoutUnpairedAccessories(LayoutMerge.merge(stored: current, lastApplied: lastApplied, configuration: file.homes), paired: paired)
            }
            applied = Self.applied(file.homes, leavingOut: leftOut)
            await recordApplied(applied, digest: leftOut.isEmpty ? file.sourceDigest : [], engine: engine)
            // New pairings connect (their accessories join when they answer); removed ones leave.
            hapDriver.replaceDevices(PairingStore.devices(pairings))
        }
    }

    /// The layout to start with (the configuration's homes merged with the store's), a digest of
    /// the layout the store holds, and the configuration to record as applied when it changed (the engine
    /// records it after its first synchronisation: the next start needs it, this one does not).
    func initialLayout(_ file: ConfigFile) throws -> (homes: [Home], stored: LayoutDigest?, toRecord: [Home]?) {
        let stored = try store.hasLayout() ? store.loadHomes() : nil
        // The same file as last time: the same homes, no need to read them back.
        let unchanged = try !file.sourceDigest.isEmpty && store.lastAppliedDigest() == file.sourceDigest
        let lastApplied = try unchanged ? file.homes : store.lastAppliedHomes()
        let paired = try Self.pairedAccessoryPrefixes(store.pairings())
        let homes = Self.withoutUnpairedAccessories(LayoutMerge.merge(stored: stored, lastApplied: lastApplied, configuration: file.homes), paired: paired)
        return (homes, stored.map(LayoutDigest.init), unchanged || lastApplied == file.homes ? nil : file.homes)
    }

    /// Reads the configuration file again; nil (logged) if it is wrong: the running layout stays.
    private func readConfiguration() -> ConfigFile? {
        do {
            return try ConfigFile.load(path: configPath, overrides: overrides)
        } catch {
            logger.error("the configuration was not reloaded: \(error)")
        }
        return nil
    }

    /// The configuration's homes without the accessories the engine left out (so the next start
    /// still sees them as new in the file).
    private static func applied(_ configured: [Home], leavingOut leftOut: Set<AccessoryID>) -> [Home] {
        var applied = configured
        for index in applied.indices { applied[index].accessories.removeAll { leftOut.contains($0.id) } }
        return applied
    }

    /// Records `applied` as the configuration applied, for the next start, through the engine's
    /// store writer: after the start's own record, never overtaken by it. (With accessories left
    /// out, the record differs from the file: it is stored without the file's digest, so the next
    /// start compares the homes themselves.)
    private func recordApplied(_ applied: [Home], digest: [UInt8], engine: Gateway) async {
        await engine.storeAfterFirstSync("record the configuration as applied") { store throws(StoreError) in
            try store.saveLastAppliedConfiguration(applied, digest: digest)
        }
    }

    /// The pairings as the store has them now; nil (logged) if they cannot be read.
    private func storedPairings() -> [StoredPairing]? {
        do {
            return try store.pairings()
        } catch {
            logger.error("the configuration was not reloaded: the pairings cannot be read: \(error)")
            return nil
        }
    }

    /// The id prefixes of the paired HAP devices' accessories.
    private static func pairedAccessoryPrefixes(_ pairings: [StoredPairing]) -> Set<String> {
        Set(pairings.map { String(HAPDriver.accessoryID(deviceID: $0.deviceID, aid: 1).rawValue.dropLast()) })
    }

    /// The homes without the accessories of HAP devices that are no longer paired
    /// (`homegate unpair`): they leave the home, and their topics are cleared.
    private static func withoutUnpairedAccessories(_ homes: [Home], paired: Set<String>) -> [Home] {
        var result = homes
        for index in result.indices {
            result[index].accessories.removeAll { accessory in
                HAPDriver.isHAPAccessory(accessory.id) && !paired.contains { accessory.id.rawValue.hasPrefix($0) }
            }
        }
        return result
    }
}

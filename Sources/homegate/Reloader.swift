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
struct Reloader: Sendable {
    let configPath: String
    let overrides: ConfigFile.Overrides
    let store: HomeStore
    let logger: Logger

    /// Reloads the configuration file and the pairings at every SIGHUP, until cancelled. The
    /// simulator takes the file's devices first (new ones join, gone ones leave), so the engine
    /// finds the new accessories when it takes the layout.
    func reloadOnHangUp(engine: Gateway, simulator: Simulator, hapDriver: HAPDriver) async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            logger.info("SIGHUP: reloading the configuration")
            guard let (homes, configured, digest, devices) = reload() else { continue }
            let changes = simulator.replaceDevices(devices)
            if !changes.added.isEmpty || !changes.removed.isEmpty {
                logger.info("simulated accessories: \(changes.added.count) added, \(changes.removed.count) removed")
            }
            let leftOut = await engine.reload(homes: homes)
            recordApplied(configured, digest: leftOut.isEmpty ? digest : [], leavingOut: leftOut)
            // New pairings connect (their accessories join when they answer); removed ones leave.
            if let pairings = pairedDevices() { hapDriver.replaceDevices(pairings) }
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
        let homes = try withoutUnpairedAccessories(LayoutMerge.merge(stored: stored, lastApplied: lastApplied, configuration: file.homes))
        return (homes, stored.map(LayoutDigest.init), unchanged || lastApplied == file.homes ? nil : file.homes)
    }

    /// Reads the configuration file again: the merged layout, the configuration's homes and its
    /// simulated devices; nil (logged) if it is wrong: the running layout stays.
    /// ``recordApplied(_:leavingOut:)`` must follow once the engine took the layout.
    func reload() -> (homes: [Home], configured: [Home], digest: [UInt8], devices: [Simulator.Device])? {
        do {
            let file = try ConfigFile.load(path: configPath, overrides: overrides)
            let merged = try merge(file.homes, stored: store.hasLayout() ? store.loadHomes() : nil)
            return (try withoutUnpairedAccessories(merged), file.homes, file.sourceDigest, file.simulatorDevices)
        } catch let error as ConfigError {
            logger.error("the configuration was not reloaded: \(error)")
        } catch {
            logger.error("the configuration was not reloaded: \(error)")
        }
        return nil
    }

    /// Records the configuration as applied, without the accessories the engine left out (so the
    /// next start still sees them as new in the file).
    /// (With accessories left out, the record differs from the file: it is stored without the
    /// file's digest, so the next start compares the homes themselves.)
    func recordApplied(_ configured: [Home], digest: [UInt8], leavingOut leftOut: Set<AccessoryID>) {
        var applied = configured
        for index in applied.indices { applied[index].accessories.removeAll { leftOut.contains($0.id) } }
        do {
            try store.saveLastAppliedConfiguration(applied, digest: digest)
        } catch {
            logger.error("could not record the configuration as applied: \(error)")
        }
    }

    /// The paired devices as the store has them now; nil (logged) if it cannot be read.
    func pairedDevices() -> [HAPDriver.Device]? {
        do {
            return PairingStore.devices(try store.pairings())
        } catch {
            logger.error("the pairings were not reloaded: \(error)")
            return nil
        }
    }

    /// The homes without the accessories of HAP devices that are no longer paired
    /// (`homegate unpair`): they leave the home, and their topics are cleared.
    func withoutUnpairedAccessories(_ homes: [Home]) throws -> [Home] {
        let paired = try store.pairings().map { HAPDriver.accessoryID(deviceID: $0.deviceID, aid: 1).rawValue.dropLast() }
        var result = homes
        for index in result.indices {
            result[index].accessories.removeAll { accessory in
                HAPDriver.isHAPAccessory(accessory.id) && !paired.contains { accessory.id.rawValue.hasPrefix($0) }
            }
        }
        return result
    }

    private func merge(_ configured: [Home], stored: [Home]?) throws -> [Home] {
        LayoutMerge.merge(stored: stored, lastApplied: try store.lastAppliedHomes(), configuration: configured)
    }
}

import Foundation
import HomeGateConfig
import HomeModel
import HomeStore
import Logging

/// The layout from the configuration file and the store, at start and on SIGHUP (see
/// ``LayoutMerge`` for the rule).
struct Reloader: Sendable {
    let configPath: String
    let overrides: ConfigFile.Overrides
    let store: HomeStore
    let logger: Logger

    /// The layout to start with: the configuration's homes merged with the store's.
    func initialLayout(_ file: ConfigFile) throws -> [Home] {
        try merge(file.homes)
    }

    /// Reads the configuration file again; nil (logged) if it is wrong: the running layout stays.
    func reload() -> [Home]? {
        do {
            let file = try ConfigFile.load(path: configPath, overrides: overrides)
            return try merge(file.homes)
        } catch let error as ConfigError {
            logger.error("the configuration was not reloaded: \(error)")
        } catch {
            logger.error("the configuration was not reloaded: \(error)")
        }
        return nil
    }

    private func merge(_ configured: [Home]) throws -> [Home] {
        let stored = try store.hasLayout() ? store.loadHomes() : nil
        let lastApplied = try store.lastAppliedConfiguration().flatMap { try? JSONDecoder().decode([Home].self, from: $0) }
        let homes = LayoutMerge.merge(stored: stored, lastApplied: lastApplied, configuration: configured)
        // The engine stores the merged layout once it has the devices' structure.
        try store.saveLastAppliedConfiguration(JSONEncoder().encode(configured))
        return homes
    }
}

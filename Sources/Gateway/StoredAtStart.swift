import HomeModel
import HomeStore
import Logging

/// What the engine reads from the store when it starts, besides the layout: the accessory
/// options set over MQTT and the bulbs a person turned Adaptive Lighting on for. What cannot be
/// read is named in the log and left out: the gateway starts without it.
enum StoredAtStart {
    /// The options the store holds; what cannot be read is named in the log and left out.
    static func options(_ store: HomeStore?, logger: Logger) -> [AccessoryID: AccessoryOptions] {
        guard let store else { return [:] }
        do {
            let (options, damaged) = try store.accessoryOptions()
            for entry in damaged { logger.error("stored accessory options left out (set them again with $request/accessory/options): \(entry)") }
            return options
        } catch {
            logger.error("the stored accessory options could not be read: \(error)")
            return [:]
        }
    }

    /// The bulbs a person turned Adaptive Lighting on for, as the store keeps them.
    static func adaptiveLighting(_ store: HomeStore?, logger: Logger) -> Set<ServiceReference> {
        guard let store else { return [] }
        do {
            return try store.adaptiveLighting()
        } catch {
            logger.error("the Adaptive Lighting bulbs could not be read: \(error)")
            return []
        }
    }
}

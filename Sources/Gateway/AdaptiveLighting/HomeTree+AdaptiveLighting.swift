import HomeModel
import Wire

/// Adaptive Lighting's look-ups in the tree: a bulb's topic, the bulb a command or a value
/// names (`Gateway+AdaptiveLighting.swift` carries out the rest).
extension HomeTree {
    /// `<service>/adaptive-lighting` of a bulb; nil when the tree lacks it.
    func adaptiveLightingTopic(of service: ServiceReference) -> String? {
        guard let location = locations[service.accessoryID] else { return nil }
        return map.topic(of: .service(homes[location.home].id, service)).map { TopicGrammar.topic($0, .adaptiveLighting) }
    }

    /// The service whose `adaptive-lighting` a command's path ends in; nil for any other path.
    func adaptiveLightingService(of path: [Substring]) -> ServiceReference? {
        guard path.last == Substring(TopicGrammar.Attribute.adaptiveLighting.rawValue),
              case .found(.service(_, let service)) = map.resolve(Array(path.dropLast())) else { return nil }
        return service
    }

    /// The service as a bulb that can follow Adaptive Lighting; nil when it cannot (or is gone).
    func adaptiveLightingBulb(_ service: ServiceReference) -> AdaptiveLightingBulb? {
        guard let (_, accessory) = accessory(service.accessoryID), let serviceObject = accessory.services.first(where: { $0.iid == service.serviceIID }) else { return nil }
        return AdaptiveLightingBulb(serviceObject, of: accessory.id)
    }

    /// The bulb a characteristic belongs to, when its service can follow Adaptive Lighting.
    func adaptiveLightingBulb(containing reference: CharacteristicReference) -> AdaptiveLightingBulb? {
        guard let (accessory, service) = service(of: reference) else { return nil }
        return AdaptiveLightingBulb(service, of: accessory.id)
    }
}

import Accessories
import Foundation
import HomeModel

/// What the devices report: value changes, reachability (bridge cascade included, as the driver
/// reports it per accessory), and the polling of characteristics that cannot send events.
extension Gateway {
    func handle(_ event: AccessoryEvent) async {
        switch event {
        case .value(let reference, let value):
            applyValue(value, to: reference)
        case .reachability(let id, let reachable):
            await setReachable(id, reachable)
        }
    }

    /// An accessory came or went: `$reachable`, `$events`, `$layout`; when it is back, its
    /// values are read again and published where they changed.
    func setReachable(_ id: AccessoryID, _ reachable: Bool) async {
        guard let location = locations[id] else { return }
        guard homes[location.home].accessories[location.accessory].isReachable != reachable else { return }
        homes[location.home].accessories[location.accessory].isReachable = reachable
        let accessory = homes[location.home].accessories[location.accessory]
        let home = homes[location.home]
        publishReachability(of: accessory, home: home.id)
        announce("accessory-reachability", ["accessory": .string(accessory.id.rawValue), "name": .string(accessory.name), "home": .string(home.name), "reachable": .bool(reachable)])
        layoutDidChange(saving: false)
        if reachable { await refresh(accessory) }
    }

    /// Reads every readable characteristic of `accessory` and publishes what changed.
    func refresh(_ accessory: Accessory) async {
        for service in accessory.visibleServices {
            for characteristic in service.characteristics where characteristic.isReadable && !characteristic.isMomentary {
                let reference = CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid)
                guard let value = try? await driver.read(reference) else { continue }
                if self.accessory(accessory.id)?.accessory.characteristic(characteristic.iid)?.characteristic.value != value {
                    applyValue(value, to: reference)
                }
            }
        }
    }

    /// Reads, every poll interval, the characteristics that cannot send events.
    func poll() async throws {
        while true {
            try await Task.sleep(for: configuration.pollInterval)
            for reference in polledCharacteristics() {
                guard let value = try? await driver.read(reference) else { continue }
                if accessory(reference.accessoryID)?.accessory.characteristic(reference.iid)?.characteristic.value != value {
                    applyValue(value, to: reference)
                }
            }
        }
    }

    private func polledCharacteristics() -> [CharacteristicReference] {
        homes.flatMap(\.accessories).filter(\.isReachable).flatMap { accessory in
            accessory.visibleServices.flatMap(\.characteristics)
                .filter { $0.isReadable && !$0.supportsEvents && !$0.isMomentary }
                .map { CharacteristicReference(accessoryID: accessory.id, iid: $0.iid) }
        }
    }
}

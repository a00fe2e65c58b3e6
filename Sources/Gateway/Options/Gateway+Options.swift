import Foundation
import HomeModel
import HomeStore
import Logging
import Timing
import Wire

/// Options per accessory and characteristic (docs/configuration.md, "Options per accessory";
/// docs/mqtt-api.md, `accessory/options`): what they make of the tree is the ``PublishPolicy``,
/// applied where values, reachability and discovery configs are published
/// (`Gateway+Retained.swift`); here the debounced and throttled values are released when due,
/// what is held back is handed to the page, and `$request/accessory/options` is carried out.
extension Gateway {
    // MARK: Held values

    /// Publishes the held values when they are due (``PublishPacer``), one sleep at a time.
    func releasePacedValues() async throws {
        while true {
            try await pacerDeadlines.wait(pacerDeadlines.sleep(until: pacer.nextDeadline), on: clock)
            for reference in pacer.release(now: clock.elapsed) { publishHeld(reference) }
        }
    }

    /// A held characteristic is due: its value now (the newest) goes out as its rule says.
    private func publishHeld(_ reference: CharacteristicReference) {
        guard let (home, accessory) = tree.accessory(reference.accessoryID), let (_, characteristic) = accessory.characteristic(reference.iid),
              let value = characteristic.value, let topic = tree.map.topic(of: .characteristic(home.id, reference)) else { return }
        let rule = policy.rule(reference)
        guard !policy.isDisabled(reference.accessoryID), !rule.excluded else { return }
        publish(value, of: characteristic, reference: reference, topic: topic, home: home.id, rule: rule)
    }

    /// Hands the page what the broker is not told (``WithheldMessages``).
    func withhold(_ topic: String, _ payload: [UInt8]) {
        configuration.withheld?.withhold(topic, payload)
    }

    /// A value (and its label) the broker is not told, for the page.
    func withholdValue(_ value: Value, of characteristic: Characteristic, topic: String) {
        guard configuration.withheld != nil, !characteristic.isMomentary else { return }
        withhold(topic, value.encoded)
        if let label = ValueLabels.of(characteristic)?.label(of: value) { withhold("\(topic)/label", Array(label.utf8)) }
    }

    // MARK: The request

    /// `accessory/options`: with `options`, they replace what was stored for the accessory
    /// (`{}` removes it: the configuration's alone apply); answers what is stored, what the
    /// configuration gives and what applies.
    func accessoryOptions(_ id: AccessoryID, setting options: AccessoryOptions?) throws -> [String: JSON] {
        guard let (home, accessory) = tree.accessory(id) else { throw RequestError.notFound("no accessory \(id)") }
        if let options {
            let unknown = PublishPolicy.unknownPaths(in: options, of: accessory, in: home.id, map: tree.map)
            guard unknown.isEmpty else {
                let known = PublishPolicy.places(of: accessory, in: home.id, map: tree.map).map(\.path)
                throw RequestError.invalid("\(accessory.name) has no service or characteristic \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")); its paths: \(known.joined(separator: ", "))")
            }
            storedOptions[id] = options.isEmpty ? nil : options
            let stored = storedOptions
            storeWriter.write("save the accessories' options") { store throws(StoreError) in try store.saveAccessoryOptions(stored) }
            optionsDidChange()
            announce(Announcement("accessory-options", ["accessory": .string(id.rawValue), "name": .string(accessory.name), "home": .string(home.name),
                                           "options": (policy.options[id] ?? AccessoryOptions()).json]))
        }
        return ["accessory": .string(id.rawValue), "options": (storedOptions[id] ?? AccessoryOptions()).json,
                "configured": configuration.options.options(of: id).json, "effective": (policy.options[id] ?? AccessoryOptions()).json]
    }

    /// The options changed: the policy is worked out again, what was held goes out under the new
    /// rules, and the retained topics follow (topics no longer published are cleared, `$layout`
    /// and the discovery configs say the new options).
    private func optionsDidChange() {
        policy = PublishPolicy(table: configuration.options, stored: storedOptions, homes: tree.homes, map: tree.map)
        for reference in pacer.releaseAll() { publishHeld(reference) }
        retained.layoutChanged()
        republishAfterLayoutChange()
    }
}

import Accessories
import HomeModel
import Wire

/// The accessory browser's accessories as MQTT has them, a value the engine owns: each found
/// and not paired with this gateway retained on `<base>/$browser/<device id>`. It takes the
/// browser's rounds and says what to publish, clear and announce; the engine carries it out
/// (`Gateway+Browser.swift`).
struct BrowserEntries {
    /// What a round changes on MQTT, in order.
    enum Change: Equatable {
        /// `topic` retained with `payload`; `announced` says `browser-found` with the fields.
        case retain(topic: String, payload: [UInt8], announced: [String: JSON]?)
        /// `topic` cleared, and `browser-removed` with the fields.
        case clear(topic: String, announced: [String: JSON])
    }

    let base: String
    /// By device id.
    private(set) var found: [String: FoundAccessory] = [:]

    init(base: String) {
        self.base = base
    }

    /// One round of the browser: what is new is retained and announced, what changed is
    /// retained again, what is gone is cleared and announced. Device ids in order.
    mutating func take(_ round: [FoundAccessory]) -> [Change] {
        let now = Dictionary(round.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        var changes: [Change] = []
        for (id, accessory) in now.sorted(by: { $0.key < $1.key }) where found[id] != accessory {
            let isNew = found[id] == nil
            found[id] = accessory
            changes.append(.retain(topic: topic(id), payload: JSON.object(accessory.browserFields).encoded(), announced: isNew ? accessory.browserFields : nil))
        }
        for (id, accessory) in found.sorted(by: { $0.key < $1.key }) where now[id] == nil {
            found[id] = nil
            changes.append(.clear(topic: topic(id), announced: accessory.browserFields))
        }
        return changes
    }

    /// The retained messages, for the synchronisation's set of what the gateway asserts.
    var retained: [String: [UInt8]] {
        Dictionary(found.map { (topic($0.key), JSON.object($0.value.browserFields).encoded()) }, uniquingKeysWith: { first, _ in first })
    }

    /// Where `$request/accessory/pair` pairs: its `host` and `port`, or where the browser found
    /// its `device`.
    /// - Throws: ``RequestError`` `not-found` for a device the browser has not found, naming those it has.
    func address(_ address: ManagementRequest.Pairing.Address) throws -> (host: String, port: Int, transport: String) {
        switch address {
        case .host(let host, let port, let transport):
            return (host, port, transport)
        case .matter:
            return ("", 0, "matter")
        case .found(let device):
            guard let entry = found[device] else {
                let known = found.keys.sorted()
                throw RequestError.notFound("the accessory browser has not found \(device)" + (known.isEmpty ? "; start it with $request/browser/start" : "; found: \(known.joined(separator: ", "))"))
            }
            return (entry.host, entry.port, entry.transport)
        }
    }

    /// `<base>/$browser/<device id>`.
    private func topic(_ deviceID: String) -> String {
        TopicGrammar.topic(base, .browser, deviceID)
    }
}

extension FoundAccessory {
    /// The accessory as `<base>/$browser/<device>` and the browser's `$events` give it.
    var browserFields: [String: JSON] {
        [
            "device": .string(deviceID), "name": .string(name), "model": .string(model),
            "category": category.map(JSON.int) ?? .null, "categoryName": .string(category.flatMap { Category(rawValue: $0)?.name }),
            "host": .string(host), "port": .int(port), "paired": .bool(isPaired),
            "transport": .string(transport),
        ]
    }
}

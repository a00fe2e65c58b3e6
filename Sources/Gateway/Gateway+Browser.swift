import Accessories
import HomeModel
import Wire

/// The accessory browser on MQTT (HomeKit's `HMAccessoryBrowser`): `$request/browser/start` and
/// `stop`; each accessory found and not paired with this gateway retained on
/// `<base>/$browser/<device id>` and cleared when it is gone; `$events` `browser-found` and
/// `browser-removed`; `$request/accessory/pair` takes a found accessory's `device` id.
extension Gateway {
    /// `browser/start` (`on`), `browser/stop`.
    func browse(_ on: Bool) throws -> [String: JSON] {
        guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway has no accessory browser") }
        guard !on else { return ["browsing": .bool(pairing.setBrowsing(true))] }
        let browsing = pairing.setBrowsing(false)
        return browsing ? ["browsing": true, "message": "the browser stays on: hap.browser is always"] : ["browsing": false]
    }

    /// Takes the browser's rounds until the stream ends.
    func followBrowser(_ updates: AsyncStream<[FoundAccessory]>) async {
        for await found in updates { browserFound(found) }
    }

    /// One round of the browser: what is new is retained and announced, what changed is
    /// republished, what is gone is cleared and announced.
    func browserFound(_ found: [FoundAccessory]) {
        let now = Dictionary(found.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        for (id, accessory) in now where browserFound[id] != accessory {
            let isNew = browserFound[id] == nil
            browserFound[id] = accessory
            assertRetained(browserTopic(id), JSON.object(accessory.browserFields).encoded())
            if isNew { announce("browser-found", accessory.browserFields) }
        }
        for (id, accessory) in browserFound where now[id] == nil {
            browserFound[id] = nil
            clearRetained(browserTopic(id))
            announce("browser-removed", accessory.browserFields)
        }
    }

    /// The browser's retained messages, for the synchronisation's set of what the gateway asserts.
    func browserRetained() -> [String: [UInt8]] {
        Dictionary(browserFound.map { (browserTopic($0.key), JSON.object($0.value.browserFields).encoded()) }, uniquingKeysWith: { first, _ in first })
    }

    /// Where `$request/accessory/pair` pairs: its `host` and `port`, or where the browser found
    /// its `device`.
    func pairingAddress(_ address: ManagementRequest.Pairing.Address) throws -> (host: String, port: Int, transport: String) {
        switch address {
        case .host(let host, let port, let transport):
            return (host, port, transport)
        case .matter:
            return ("", 0, "matter")
        case .found(let device):
            guard let found = browserFound[device] else {
                let known = browserFound.keys.sorted()
                throw RequestError.notFound("the accessory browser has not found \(device)" + (known.isEmpty ? "; start it with $request/browser/start" : "; found: \(known.joined(separator: ", "))"))
            }
            return (found.host, found.port, found.transport)
        }
    }

    private func browserTopic(_ deviceID: String) -> String {
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

import Accessories
import HomeModel
import Wire

/// The accessory browser on MQTT (HomeKit's `HMAccessoryBrowser`): `$request/browser/start` and
/// `stop`; each accessory found and not paired with this gateway retained on
/// `<base>/$browser/<device id>` and cleared when it is gone; `$events` `browser-found` and
/// `browser-removed`; `$request/accessory/pair` takes a found accessory's `device` id. What to
/// publish is decided by ``BrowserEntries``; here it is carried out.
extension Gateway {
    /// `browser/start` (`on`), `browser/stop`.
    func browse(_ on: Bool) throws -> [String: JSON] {
        guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway has no accessory browser") }
        guard !on else { return ["browsing": .bool(pairing.setBrowsing(true))] }
        let browsing = pairing.setBrowsing(false)
        return browsing ? ["browsing": true, "message": "the browser stays on: hap.browser is always"] : ["browsing": false]
    }

    /// Takes the browser's rounds until the stream ends, each carried out as ``BrowserEntries`` says.
    func followBrowser(_ updates: AsyncStream<[FoundAccessory]>) async {
        for await round in updates {
            for change in browser.take(round) {
                switch change {
                case .retain(let topic, let payload, let announced):
                    assertRetained(topic, payload)
                    if let announced { announce(Announcement("browser-found", announced)) }
                case .clear(let topic, let announced):
                    clearRetained(topic)
                    announce(Announcement("browser-removed", announced))
                }
            }
        }
    }
}

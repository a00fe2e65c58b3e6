import Foundation
import MQTT
import Testing
import TestSupport

/// Options per accessory and characteristic through the real binary, Mosquitto and the page's
/// feed: from the configuration (retain, qos, debounce, throttle, exclude, disabled, Home
/// Assistant's names) and from `$request/accessory/options` (stored, kept across a restart,
/// refused with the key or path named), with what the options hold back still in the history,
/// on the page, and in the answer of `.../get`.
@Suite(.startsProcesses) struct AccessoryOptionsTests {
    typealias Object = [String: Any]

    static let options = """
        home_assistant:
          enabled: true
        options:
          accessories:
            sim-kitchen-sensor:
              characteristics:
                current-temperature: {throttle: 5000}
            sim-lamp-1:
              homeassistant: {name: Sofa Light}
              characteristics:
                lightbulb/brightness: {debounce: 2000}
            sim-tv-outlet:
              exclude: [outlet/outlet-in-use]
            sim-coffee-machine:
              disabled: true
            sim-thermostat:
              retain: false
              qos: 0
        """

    static func topic(_ type: String, of id: String, in layout: Object) throws -> String {
        try #require(TreeLayout.characteristic(type, of: id, in: layout)?["topic"] as? String, "\(id) \(type)")
    }

    /// The `<service>/<characteristic>` paths an accessory's retained `$meta` describes.
    static func describedCharacteristics(_ retained: [String: String], of id: String, in layout: Object) throws -> Set<String> {
        let accessoryTopic = try #require(TreeLayout.accessory(id, in: layout)?["topic"] as? String, "\(id)'s topic")
        let meta = try GatewayFixture.decode(Array(try #require(retained["\(accessoryTopic)/$meta"], "\(accessoryTopic)/$meta").utf8))
        var paths: Set<String> = []
        for (service, description) in meta["services"] as? [String: Object] ?? [:] {
            for characteristic in (description["characteristics"] as? Object ?? [:]).keys { paths.insert("\(service)/\(characteristic)") }
        }
        return paths
    }

    /// Every topic a discovery config's components read or write.
    static func componentTopics(_ config: Object?) -> [String] {
        ((config?["components"] as? [String: Object]) ?? [:]).values.flatMap { component in
            component.filter { $0.key.hasSuffix("_topic") }.compactMap { $0.value as? String }
        }
    }

    /// Changes a simulated characteristic to each of `values` in turn, on the device's side
    /// (each answered once the gateway took it).
    static func change(_ fixture: GatewayFixture, accessory: String, _ characteristic: String, to values: [String]) async throws {
        for value in values {
            let answer = try await fixture.request("simulator/update", #"{"accessory": "\#(accessory)", "characteristic": "\#(characteristic)", "value": \#(value)}"#)
            #expect(answer["ok"] as? Bool == true, "\(answer)")
        }
    }

    @Test("options: retain, qos, debounce, throttle, exclude, disabled and Home Assistant's names from the configuration; accessory/options stored and kept; held values in the history, on the page and in .../get")
    func options() async throws {
        let port = try FreePort.next()
        let folder = try TemporaryDirectory.make(prefix: "options")
        var fixture = try await GatewayFixture.start(config: try GatewayFixture.demoText(appending: Self.options + "\nui:\n  port: \(port)\n"), folder: folder)
        try await fixture.gateway.waitForOutput(containing: "web page: connected to the broker")
        let layout = try await fixture.layout()
        let coffee = try #require(TreeLayout.accessory("sim-coffee-machine", in: layout))
        let coffeeTopic = try #require(coffee["topic"] as? String)
        let inUse = try Self.topic("outlet-in-use", of: "sim-tv-outlet", in: layout)
        let thermostat = try Self.topic("current-temperature", of: "sim-thermostat", in: layout)
        let kitchen = try Self.topic("current-temperature", of: "sim-kitchen-sensor", in: layout)
        let brightness = try Self.topic("brightness", of: "sim-lamp-1", in: layout)

        // What the broker holds: nothing of the disabled coffee machine, nor of the outlet's
        // excluded characteristic, nor the thermostat's values; the rest as always.
        var retained = try await fixture.retained()
        #expect(retained.keys.filter { $0.hasPrefix(coffeeTopic + "/") }.isEmpty, "\(retained.keys.filter { $0.hasPrefix(coffeeTopic) })")
        #expect(retained[inUse] == nil)
        #expect(retained[try Self.topic("on", of: "sim-tv-outlet", in: layout)] == "true")
        #expect(retained[thermostat] == nil)
        // The accessories' $meta: the excluded characteristic is not described, the held-back one is.
        let outletMeta = try Self.describedCharacteristics(retained, of: "sim-tv-outlet", in: layout)
        #expect(outletMeta.contains("outlet/on") && !outletMeta.contains("outlet/outlet-in-use"), "\(outletMeta)")
        let thermostatMeta = try Self.describedCharacteristics(retained, of: "sim-thermostat", in: layout)
        #expect(thermostatMeta.contains("thermostat/current-temperature"), "\(thermostatMeta)")
        #expect(retained[kitchen] != nil && retained[brightness] == "40")
        // $layout says the options and that the coffee machine is disabled.
        #expect(coffee["disabled"] as? Bool == true)
        #expect((TreeLayout.accessory("sim-tv-outlet", in: layout)?["options"] as? Object)?["exclude"] as? [String] == ["outlet/outlet-in-use"])
        #expect(TreeLayout.accessory("sim-front-door-lock", in: layout)?["options"] == nil, "no options, no field")

        // Home Assistant: no device for the disabled one, no entity reading the excluded one, the lamp's name.
        var configs = try await EcosystemTests.discoveryConfigs(fixture)
        #expect(configs["homeassistant/device/homegate_sim-coffee-machine/config"] == nil)
        #expect(configs["homeassistant/device/homegate_sim-tv-outlet/config"] != nil && !Self.componentTopics(configs["homeassistant/device/homegate_sim-tv-outlet/config"]).contains { $0.hasPrefix(inUse) })
        #expect((configs["homeassistant/device/homegate_sim-lamp-1/config"]?["device"] as? Object)?["name"] as? String == "Sofa Light")

        // The thermostat's values: QoS 0, not retained.
        #expect(try await fixture.request("simulator/update", #"{"accessory": "sim-thermostat", "characteristic": "current-temperature", "value": 22.5}"#)["ok"] as? Bool == true)
        let reading = try await fixture.watcher.inbox.first { $0.topic.string == thermostat && $0.payloadString == "22.5" }
        #expect(!reading.retain && reading.qos == .atMostOnce)

        // Throttle (5 s) and debounce (2 s): five changes in a row give the first at once and the
        // last when the throttle lets it, and only the last once the device is quiet; the
        // history has every one.
        let before = fixture.watcher.inbox.all.count
        let temperatures = ["20.1", "20.2", "20.3", "20.4", "20.5"]
        try await Self.change(fixture, accessory: "sim-kitchen-sensor", "current-temperature", to: temperatures)
        try await Self.change(fixture, accessory: "sim-lamp-1", "brightness", to: ["11", "12", "13", "14", "15"])
        _ = try await fixture.watcher.inbox.first { $0.topic.string == kitchen && $0.retain && $0.payloadString == "20.5" }
        _ = try await fixture.watcher.inbox.first { $0.topic.string == brightness && $0.retain && $0.payloadString == "15" }
        let published = fixture.watcher.inbox.all.dropFirst(before)
        let kitchenPublishes = published.filter { $0.topic.string == kitchen }.map(\.payloadString)
        #expect(kitchenPublishes.first == "20.1" && kitchenPublishes.count <= 3, "throttled: \(kitchenPublishes)")
        let lampPublishes = published.filter { $0.topic.string == brightness }.map(\.payloadString)
        #expect(lampPublishes.count <= 2 && lampPublishes.count < 5, "debounced: \(lampPublishes)")
        let history = try await fixture.request("history/get", #"{"characteristic": "\#(kitchen)", "limit": 1000}"#)
        let points = ((history["data"] as? Object)?["points"] as? [[Any]] ?? []).compactMap { ($0.last as? NSNumber)?.doubleValue }
        #expect(Array(points.suffix(5)) == temperatures.compactMap(Double.init), "the history keeps every value the throttle held back: \(points)")
        #expect(try await fixture.command("\(kitchen)/get", "")["value"] as? Double == 20.5)

        // The excluded characteristic: never published, yet in the history, on the page and in .../get.
        let frames = WebPageFeedTests.Frames()
        let browser = try WebPageTests.browser(port)
        _ = try await browser.get("/api/session")
        let running = fixture
        _ = try await WebPageFeedTests.feed(port: port, headers: ["Cookie": try WebPageFeedTests.sessionCookie(browser)], frames: frames) {
            #expect(try await running.request("simulator/update", #"{"accessory": "sim-tv-outlet", "characteristic": "outlet-in-use", "value": false}"#)["ok"] as? Bool == true)
            try await frames.wait(for: "the excluded value on the page", WebPageFeedTests.isMessage(inUse, containing: "false"))
        }
        let picture = frames.all.prefix { $0.type != "synced" }
        #expect(picture.contains { $0.topic == inUse && $0.payload == "true" }, "the page's picture has the excluded value")
        #expect(picture.contains { $0.topic == "\(coffeeTopic)/$reachable" }, "and the disabled accessory's")
        #expect(try await fixture.command("\(inUse)/get", "")["value"] as? Bool == false)
        let inUseHistory = try await fixture.request("history/get", #"{"characteristic": "\#(inUse)", "limit": 1}"#)
        #expect(((inUseHistory["data"] as? Object)?["points"] as? [[Any]])?.first?.last as? Bool == false, "\(inUseHistory)")
        #expect(!fixture.watcher.inbox.all.contains { $0.topic.string == inUse }, "never on the broker")

        // The request: refused with the key or path named; then stored, in effect, announced.
        let badQoS = try await fixture.request("accessory/options", #"{"accessory": "Floor Lamp", "options": {"qos": 5}}"#)
        #expect(badQoS["error"] as? String == "invalid-request" && badQoS["message"] as? String == "options.qos: must be within 0...2, got 5")
        let badPath = try await fixture.request("accessory/options", #"{"accessory": "Floor Lamp", "options": {"exclude": ["lightbulb/brightnes"]}}"#)
        #expect(badPath["error"] as? String == "invalid-request")
        #expect((badPath["message"] as? String)?.contains("no service or characteristic \"lightbulb/brightnes\"; its paths: lightbulb/on") == true, "\(badPath)")
        let set = try await fixture.request("accessory/options", #"{"accessory": "Floor Lamp", "options": {"exclude": ["lightbulb/brightness"]}}"#)
        let answer = try #require(set["data"] as? Object, "\(set)")
        #expect((answer["options"] as? Object)?["exclude"] as? [String] == ["lightbulb/brightness"])
        #expect(((answer["effective"] as? Object)?["homeassistant"] as? Object)?["name"] as? String == "Sofa Light", "the configuration's beneath")
        _ = try await fixture.watcher.inbox.first { $0.topic.string == brightness && $0.retain && $0.payload.isEmpty }
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "homegate/$events" && $0.payloadString.contains(#""event":"accessory-options""#) }
        configs = try await EcosystemTests.discoveryConfigs(fixture)
        #expect(!Self.componentTopics(configs["homeassistant/device/homegate_sim-lamp-1/config"]).contains { $0.hasPrefix(brightness) }, "no entity reads the excluded brightness")

        // Kept across a restart; `{}` gives the configuration's alone back.
        try await fixture.stop(keepBroker: true)
        fixture = try await GatewayFixture.start(config: try String(contentsOfFile: fixture.configFile, encoding: .utf8), broker: fixture.broker, folder: folder)
        retained = try await fixture.retained()
        #expect(retained[brightness] == nil, "still excluded after the restart")
        let read = try await fixture.request("accessory/options", #"{"accessory": "sim-lamp-1"}"#)
        #expect(((read["data"] as? Object)?["options"] as? Object)?["exclude"] as? [String] == ["lightbulb/brightness"])
        #expect(try await fixture.request("accessory/options", #"{"accessory": "sim-lamp-1", "options": {}}"#)["ok"] as? Bool == true)
        _ = try await fixture.watcher.inbox.first { $0.topic.string == brightness && $0.retain && !$0.payload.isEmpty }
        try await fixture.stop()
    }
}

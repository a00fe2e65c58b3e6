import Foundation
import Testing
import Wire
@testable import Gateway
import HomeModel
import MQTT

/// Options per accessory and characteristic as the engine works them out: the one reader of
/// their keys (a request's JSON here; the configuration's YAML in HomeGateConfigTests), the
/// layers and paths of ``PublishPolicy``, the ``PublishPacer``'s debounce and throttle, and what
/// they do to a discovery config.
@Suite struct PublishOptionsTests {
    typealias ServiceBlueprint = AccessoryBlueprint.ServiceBlueprint

    static func read(_ text: String) throws -> AccessoryOptions {
        try AccessoryOptions(reading: JSONOptionsSource(try JSON.parse(text), keyPath: "options"))
    }

    static func problem(_ text: String) -> String {
        do {
            _ = try read(text)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    // MARK: Reading

    @Test func readsEveryKeyAndWritesThemBackTheSame() throws {
        let text = """
            {"retain": false, "qos": 0, "debounce": 250, "throttle": 60000, "disabled": true, "homeassistant": {"name": "Sofa"},
             "exclude": ["battery", "lightbulb/brightness"],
             "characteristics": {"current-temperature": {"throttle": 1000, "homeassistant": null},
                                 "lightbulb/on": {"homeassistant": {"name": "Lamp", "device_class": "switch"}}}}
            """
        let options = try Self.read(text)
        #expect(options.publish == PublishOptions(retain: false, qos: 0, debounce: .milliseconds(250), throttle: .seconds(60),
                                                  homeAssistant: .entity(name: "Sofa", deviceClass: nil)))
        #expect(options.disabled == true && options.exclude == ["battery", "lightbulb/brightness"])
        #expect(options.characteristics["current-temperature"] == PublishOptions(throttle: .seconds(1), homeAssistant: HomeAssistantOverride.none))
        #expect(options.characteristics["lightbulb/on"]?.homeAssistant == .entity(name: "Lamp", deviceClass: "switch"))
        #expect(try AccessoryOptions(reading: JSONOptionsSource(options.json, keyPath: "")) == options, "written and read back")
        #expect(try Self.read("{}").isEmpty)
        #expect(AccessoryOptions().json == .object([:]))
    }

    @Test func refusesWhatDoesNotFitNamingTheKey() {
        #expect(Self.problem(#"{"qos": 5}"#) == "options.qos: must be within 0...2, got 5")
        #expect(Self.problem(#"{"retain": "yes"}"#) == "options.retain: expected true or false")
        #expect(Self.problem(#"{"debounce": 1.5}"#) == "options.debounce: expected a whole number of milliseconds")
        #expect(Self.problem(#"{"throttle": -1}"#) == "options.throttle: must be within 0...86400000, got -1")
        #expect(Self.problem(#"{"retained": true}"#).hasPrefix("options.retained: unknown key"))
        #expect(Self.problem(#"{"exclude": ["a/b/c"]}"#).hasPrefix("options.exclude[0]: \"a/b/c\" is not a path below the accessory"))
        #expect(Self.problem(#"{"characteristics": {"on": {"exclude": []}}}"#).hasPrefix("options.characteristics.on.exclude: unknown key"))
        #expect(Self.problem(#"{"homeassistant": {"device_class": "light"}}"#).hasPrefix("options.homeassistant.device_class: unknown key"),
                "a device has no device class")
        #expect(Self.problem(#"{"characteristics": {"on": {"homeassistant": {"name": ""}}}}"#) == "options.characteristics.on.homeassistant: the name must not be empty")
    }

    @Test func layersGiveWayFieldByField() throws {
        let table = OptionsTable(defaults: try Self.read(#"{"qos": 2, "characteristics": {"battery-level": {"throttle": 1000}}}"#),
                                 accessories: ["lamp": try Self.read(#"{"retain": false, "characteristics": {"battery-level": {"debounce": 5}}}"#)])
        let options = table.options(of: "lamp").overlaid(by: try Self.read(#"{"qos": 0}"#))
        #expect(options.publish.qos == 0 && options.publish.retain == false)
        #expect(options.characteristics["battery-level"] == PublishOptions(debounce: .milliseconds(5), throttle: .seconds(1)))
        #expect(table.options(of: "other").publish.qos == 2, "the defaults alone")
    }

    // MARK: The policy

    static let lamp = try! AccessoryBlueprint(id: "lamp", name: "Floor Lamp", category: .lightbulb, roomID: "living", services: [
        ServiceBlueprint(type: "lightbulb", characteristics: ["on": .bool(true), "brightness": .int(40)]),
        ServiceBlueprint(type: "battery-service", characteristics: ["battery-level": .uint(80), "status-low-battery": .uint(0)]),
    ]).build()
    static let home = Home(id: "home", name: "Home", isPrimary: true, rooms: [Room(id: "living", name: "Living Room")], accessories: [lamp])
    static let map = TopicMap(base: "homegate", homes: [home])

    /// The lamp's characteristic of that type (the test's own accessory has each once).
    static func reference(_ type: String) -> CharacteristicReference {
        let characteristic = lamp.services.flatMap(\.characteristics).first { $0.type == type }!
        return CharacteristicReference(accessoryID: lamp.id, iid: characteristic.iid)
    }

    static func policy(_ options: String) throws -> PublishPolicy {
        PublishPolicy(table: OptionsTable(accessories: [lamp.id: try read(options)]), stored: [:], homes: [home], map: map)
    }

    @Test func theMostSpecificPathWins() throws {
        let policy = try Self.policy("""
            {"qos": 0, "characteristics": {"lightbulb": {"retain": false}, "brightness": {"qos": 2},
                                           "lightbulb/brightness": {"debounce": 300}, "battery-service": {"homeassistant": null}}}
            """)
        let brightness = policy.rule(Self.reference("brightness"))
        #expect(brightness == PublishPolicy.Rule(retain: false, qos: .exactlyOnce, debounce: .milliseconds(300)))
        #expect(policy.rule(Self.reference("on")) == PublishPolicy.Rule(retain: false, qos: .atMostOnce))
        #expect(policy.rule(Self.reference("battery-level")) == PublishPolicy.Rule(qos: .atMostOnce), "the service's entity override is the service's")
        #expect(policy.services.values.map { $0 } == [HomeAssistantOverride.none])
        #expect(policy.qos(of: "homegate/home/living-room/floor-lamp/lightbulb/brightness") == .exactlyOnce)
        #expect(policy.qos(of: "homegate/home/living-room/floor-lamp/lightbulb/brightness/label") == .exactlyOnce)
        #expect(policy.qos(of: "homegate/$layout") == .atLeastOnce)
    }

    @Test func excludedDisabledAndNothingAtAll() throws {
        let policy = try Self.policy(#"{"disabled": true, "exclude": ["battery-service", "lightbulb/on"]}"#)
        #expect(policy.isDisabled(Self.lamp.id))
        #expect(policy.rule(Self.reference("on")).excluded && policy.rule(Self.reference("battery-level")).excluded)
        #expect(!policy.rule(Self.reference("brightness")).excluded)
        let none = PublishPolicy(table: OptionsTable(), stored: [:], homes: [Self.home], map: Self.map)
        #expect(none.rules.isEmpty && none.options.isEmpty && !none.isDisabled(Self.lamp.id))
        #expect(none.rule(Self.reference("on")) == .standard)
    }

    @Test func storedOptionsLieOverTheConfiguration() throws {
        let table = OptionsTable(accessories: [Self.lamp.id: try Self.read(#"{"qos": 0, "retain": false}"#)])
        let policy = PublishPolicy(table: table, stored: [Self.lamp.id: try Self.read(#"{"qos": 2}"#)], homes: [Self.home], map: Self.map)
        #expect(policy.rule(Self.reference("on")) == PublishPolicy.Rule(retain: false, qos: .exactlyOnce))
    }

    @Test func pathsThatNameNothingAreFound() throws {
        let options = try Self.read(#"{"exclude": ["lightbulb/hue", "on"], "characteristics": {"lightbulb": {}, "lightbulb/brightnes": {}}}"#)
        #expect(PublishPolicy.unknownPaths(in: options, of: Self.lamp, in: Self.home.id, map: Self.map) == ["lightbulb/brightnes", "lightbulb/hue"])
    }

    @Test("the log's warnings: options of an accessory the home lacks, and a path the accessory lacks, given or stored")
    func optionsNamingNothing() throws {
        var tree = HomeTree(base: "homegate", homes: [Self.home])
        tree.reindex()
        let table = OptionsTable(defaults: try Self.read(#"{"exclude": ["lightbulb/hue"]}"#), accessories: ["ghost": try Self.read(#"{"disabled": true}"#)])
        let warnings = PublishPolicy.optionsNamingNothing(table: table, stored: [Self.lamp.id: try Self.read(#"{"exclude": ["lightbulb/brightnes"]}"#)], tree: tree)
        #expect(warnings == ["options are given for accessory ghost, which the home does not have",
                             "the options of Floor Lamp (lamp) name what it does not have: lightbulb/brightnes"], "the defaults' paths are not the lamp's own")
    }

    // MARK: Discovery

    @Test func discoveryTakesNamesDeviceClassesAndLeavesOut() throws {
        let policy = try Self.policy("""
            {"homeassistant": {"name": "Sofa Lamp"}, "exclude": ["lightbulb/brightness"],
             "characteristics": {"battery-level": {"homeassistant": {"name": "Charge", "device_class": "power_factor"}}}}
            """)
        let config = try #require(HomeAssistantDiscovery.config(for: Self.lamp, in: Self.home, map: Self.map, base: "homegate", prefix: "homeassistant",
                                                                roomName: "Living Room", bridgeID: nil))
        let before = try #require(config.payload["components"]?.object)
        #expect(before.values.contains { $0["platform"] == "light" })
        let applied = HomeAssistantDiscovery.applying(policy, to: config.payload, of: Self.lamp, in: Self.home.id, map: Self.map)
        #expect(applied["device"]?["name"] == "Sofa Lamp")
        let components = try #require(applied["components"]?.object)
        #expect(!components.values.contains { $0["platform"] == "light" }, "the light reads the excluded brightness: left out")
        let level = try #require(components.values.first { $0["state_topic"]?.string?.hasSuffix("/battery-level") == true })
        #expect(level["name"] == "Charge" && level["device_class"] == "power_factor")
        #expect(components["identify"] == before["identify"], "the others as they were")
        let none = try Self.policy(#"{"characteristics": {"battery-service": {"homeassistant": null}}}"#)
        let withoutBattery = HomeAssistantDiscovery.applying(none, to: config.payload, of: Self.lamp, in: Self.home.id, map: Self.map)
        #expect(withoutBattery["components"]?.object?.values.contains { $0["state_topic"]?.string?.hasSuffix("/battery-level") == true } == false)
        #expect(withoutBattery["components"]?.object?.count == before.count - 1)
    }

    // MARK: The pacer

    @Test func throttlePublishesAtOnceThenTheLastValueWhenTheIntervalHasPassed() {
        var pacer = PublishPacer()
        let lamp = CharacteristicReference(accessoryID: "lamp", iid: 10)
        let second = Duration.seconds(1)
        let step1 = pacer.offer(lamp, debounce: .zero, throttle: second, now: .zero)
        #expect(step1)
        let step2 = pacer.offer(lamp, debounce: .zero, throttle: second, now: .milliseconds(100))
        #expect(!step2)
        let step3 = pacer.offer(lamp, debounce: .zero, throttle: second, now: .milliseconds(900))
        #expect(!step3)
        #expect(pacer.nextDeadline == second)
        let step4 = pacer.release(now: .milliseconds(999))
        #expect(step4.isEmpty)
        let step5 = pacer.release(now: second)
        #expect(step5 == [lamp])
        #expect(pacer.nextDeadline == nil)
        let step6 = pacer.offer(lamp, debounce: .zero, throttle: second, now: .milliseconds(1500))
        #expect(!step6, "within a second of the release")
        let step7 = pacer.release(now: .seconds(2))
        #expect(step7 == [lamp])
        let step8 = pacer.offer(lamp, debounce: .zero, throttle: second, now: .seconds(4))
        #expect(step8, "quiet long enough: at once")
    }

    @Test func debounceWaitsForQuietAndEachValueStartsItAgain() {
        var pacer = PublishPacer()
        let sensor = CharacteristicReference(accessoryID: "sensor", iid: 9)
        let quiet = Duration.milliseconds(500)
        let step9 = pacer.offer(sensor, debounce: quiet, throttle: .zero, now: .zero)
        #expect(!step9)
        let step10 = pacer.offer(sensor, debounce: quiet, throttle: .zero, now: .milliseconds(400))
        #expect(!step10)
        #expect(pacer.nextDeadline == .milliseconds(900))
        let step11 = pacer.release(now: .milliseconds(600))
        #expect(step11.isEmpty, "the second value started it again")
        let step12 = pacer.release(now: .milliseconds(900))
        #expect(step12 == [sensor])
        // Both: the debounced value waits for the throttle too.
        let step13 = pacer.offer(sensor, debounce: .milliseconds(100), throttle: .seconds(2), now: .seconds(1))
        #expect(!step13)
        #expect(pacer.nextDeadline == .seconds(3) - .milliseconds(100), "two seconds after the release at 0.9 s")
        let other = CharacteristicReference(accessoryID: "sensor", iid: 10)
        let step14 = pacer.offer(other, debounce: quiet, throttle: .zero, now: .seconds(1))
        #expect(!step14)
        let step15 = pacer.releaseAll()
        #expect(step15 == [sensor, other])
        #expect(pacer.nextDeadline == nil)
    }
}

import HomeModel
import Testing
@testable import HomeGateConfig

/// The `options:` section: defaults and entries per accessory, read by the same reader as
/// `$request/accessory/options`, with the configuration's errors (file, line, key path).
@Suite("options section")
struct OptionsSectionTests {
    static let file = "/etc/homegate/homegate.yml"

    func problem(_ text: String) -> String {
        do {
            _ = try ConfigFile.parse(text, file: Self.file)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func noneWithoutTheSection() throws {
        #expect(try ConfigFile.parse("log_level: info\n", file: Self.file).options.isEmpty)
    }

    @Test func readsDefaultsAndAccessories() throws {
        let options = try ConfigFile.parse("""
            options:
              defaults:
                qos: 2
                characteristics:
                  battery-level: {throttle: 600000}
              accessories:
                sim-kitchen-sensor:
                  characteristics:
                    temperature-sensor/current-temperature:
                      debounce: 500
                      homeassistant: {name: Kitchen, device_class: temperature}
                sim-coffee-machine: {disabled: yes}
                sim-tv-outlet:
                  exclude: [outlet/outlet-in-use]
                  homeassistant: null
            """, file: Self.file).options
        #expect(options.defaults.publish.qos == 2)
        #expect(options.defaults.characteristics["battery-level"]?.throttle == .seconds(600))
        let sensor = try #require(options.accessories["sim-kitchen-sensor"]?.characteristics["temperature-sensor/current-temperature"])
        #expect(sensor == PublishOptions(debounce: .milliseconds(500), homeAssistant: .entity(name: "Kitchen", deviceClass: "temperature")))
        #expect(options.accessories["sim-coffee-machine"]?.disabled == true)
        #expect(options.accessories["sim-tv-outlet"] == AccessoryOptions(exclude: ["outlet/outlet-in-use"], publish: PublishOptions(homeAssistant: HomeAssistantOverride.none)))
        #expect(options.options(of: "sim-tv-outlet").publish.qos == 2, "the defaults beneath")
    }

    @Test func namesTheFileLineAndKeyOfAMistake() {
        #expect(problem("options:\n  accessories:\n    lamp:\n      qos: 3\n")
            == "/etc/homegate/homegate.yml:4: options.accessories.lamp.qos: must be within 0...2, got 3")
        #expect(problem("options:\n  defaults:\n    throtle: 5\n").hasPrefix("/etc/homegate/homegate.yml:3: options.defaults.throtle: unknown key; did you mean \"throttle\"?"))
        #expect(problem("options:\n  accessories:\n    lamp:\n      exclude: lightbulb\n")
            == "/etc/homegate/homegate.yml:4: options.accessories.lamp.exclude: expected a list, got the value \"lightbulb\"")
        #expect(problem("options:\n  accessories:\n    lamp:\n      homeassistant: {device_class: light}\n").contains("options.accessories.lamp.homeassistant.device_class: unknown key"))
    }
}

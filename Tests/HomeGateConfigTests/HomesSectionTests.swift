import Accessories
import Foundation
import HomeModel
import Testing
@testable import HomeGateConfig

@Suite("Configuration: homes and simulated accessories")
struct HomesSectionTests {
    let file = "/etc/homegate/homegate.yml"

    func parse(_ text: String) throws -> ConfigFile {
        try ConfigFile.parse(text, file: file)
    }

    @Test("no homes section: one primary home called Home")
    func defaultHome() throws {
        let config = try parse("")
        #expect(config.homes.map(\.name) == ["Home"])
        #expect(config.homes[0].isPrimary)
        #expect(config.simulatorDevices.isEmpty)
    }

    @Test("homes, rooms (names or name and id), zones, accessories, bridges, bounds, drift, behaviour")
    func everything() throws {
        let config = try parse("""
        simulator:
          seed: 7
        homes:
          - name: Main House
            rooms: [Living Room, {name: Kitchen, id: k1}]
            zones:
              - name: Downstairs
                rooms: [Living Room, kitchen]
            accessories:
              - id: lamp
                name: Floor Lamp
                room: living room
                latency_ms: 250
                services:
                  - type: lightbulb
                    primary: true
                    characteristics: {on: on, brightness: 40}
              - id: thermo
                name: Thermostat
                room: Kitchen
                fail_status: -70403
                services:
                  - type: thermostat
                    characteristics:
                      target-temperature: {value: 20, min: 10, max: 38, step: 0.5}
                      current-temperature:
                        value: 19.5
                        drift: {min: 18, max: 24, step: 0.5, every: 2}
              - id: bridge
                name: Bridge
                services: []
                bridged:
                  - id: b1
                    name: Behind
                    reachable: false
                    services: [{type: switch}]
          - name: Cabin
            primary: true
        """)
        #expect(config.simulatorSeed == 7)
        let home = config.homes[0]
        #expect(!home.isPrimary)
        #expect(config.homes[1].isPrimary)
        #expect(home.id == "main-house")
        #expect(home.rooms.map(\.id) == ["living-room", "k1"])
        #expect(home.zones[0].roomIDs == ["living-room", "k1"])
        #expect(home.accessories.map(\.id) == ["lamp", "thermo", "bridge", "b1"])
        let lamp = try #require(config.simulatorDevices.first { $0.accessory.id == "lamp" })
        #expect(lamp.accessory.roomID == "living-room")
        #expect(lamp.accessory.category == .lightbulb)
        #expect(lamp.behaviour.latency == .milliseconds(250))
        #expect(lamp.accessory.services[1].characteristic(ofType: "on")?.value == .bool(true))
        #expect(lamp.accessory.services[1].characteristic(ofType: "brightness")?.value == .int(40))
        let thermo = try #require(config.simulatorDevices.first { $0.accessory.id == "thermo" })
        #expect(thermo.behaviour.failStatus == .busy)
        #expect(thermo.behaviour.failureRate == 1)
        let target = try #require(thermo.accessory.services[1].characteristic(ofType: "target-temperature"))
        #expect(target.minStep == 0.5 && target.minValue == 10 && target.maxValue == 38)
        #expect(thermo.drifts.count == 1 && thermo.drifts[0].range == 18...24 && thermo.drifts[0].interval == .seconds(2))
        let bridged = try #require(config.simulatorDevices.first { $0.accessory.id == "b1" })
        #expect(bridged.accessory.bridgeID == "bridge")
        #expect(!bridged.accessory.isReachable)
        #expect(bridged.accessory.roomID == nil)
        #expect(config.simulatorDevices.first { $0.accessory.id == "bridge" }?.accessory.category == .bridge)
    }

    @Test("each mistake is named with file, line, key and problem", arguments: [
        ("homes: {name: x}\n", "homegate.yml:1: homes: expected a list, got a mapping"),
        ("homes: []\n", "homegate.yml:1: homes: list at least one home"),
        ("homes:\n  - rooms: []\n", "homegate.yml:2: homes[0]: \"name\" is required here"),
        ("homes:\n  - name: My-Home\n", "homegate.yml:2: homes[0].name: \"My-Home\" may contain only letters, digits, spaces and apostrophes, not \"-\""),
        ("homes:\n  - name: ' Home'\n", "homegate.yml:2: homes[0].name: \" Home\" must start with a letter or a digit"),
        ("homes:\n  - name: Home 1\n  - name: home1\n", "homegate.yml:3: homes[1]: \"home1\" is already in use as \"Home 1\""),
        ("homes:\n  - name: A\n    primary: true\n  - name: B\n    primary: true\n", "homegate.yml:2: homes: only one home can be primary"),
        ("homes:\n  - name: A\n    rooms: [Kitchen, kitchen]\n", "homegate.yml:3: homes[0].rooms[1]: \"kitchen\" is already in use as \"Kitchen\""),
        ("homes:\n  - name: A\n    rooms: [Default Room]\n", "homegate.yml:3: homes[0].rooms[0]: \"Default Room\" is already in use"),
        ("homes:\n  - name: A\n    rooms: [Hall]\n    zones:\n      - name: hall\n", "homegate.yml:5: homes[0].zones[0]: \"hall\" is already in use as \"Hall\""),
        ("homes:\n  - name: A\n    zones:\n      - name: Up\n        rooms: [Attic]\n", "homegate.yml:5: homes[0].zones[0].rooms[0]: no room \"Attic\" in A (its rooms: none)"),
        ("homes:\n  - name: A\n    accessories:\n      - id: x\n", "homegate.yml:4: homes[0].accessories[0]: \"name\" is required here"),
        ("homes:\n  - name: A\n    accessories:\n      - {id: x, name: L, room: Attic}\n", "homegate.yml:4: homes[0].accessories[0].room: no room \"Attic\" in A"),
        ("homes:\n  - name: A\n    accessories:\n      - {id: 'a b', name: L}\n", "homegate.yml:4: homes[0].accessories[0].id: an id may contain only ASCII letters"),
        ("homes:\n  - name: A\n    accessories:\n      - {id: x, name: L}\n      - {id: x, name: M}\n", "homegate.yml:5: homes[0].accessories[1]: the accessory id \"x\" is already used (line 4)"),
        ("homes:\n  - name: A\n    accessories:\n      - {id: x, name: L, colour: red}\n", "homegate.yml:4: homes[0].accessories[0].colour: unknown key"),
        ("homes:\n  - name: A\n    accessories:\n      - {id: x, name: L, category: lamp}\n", "homegate.yml:4: homes[0].accessories[0].category: unknown category \"lamp\""),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: lightbulp\n", "homegate.yml:6: homes[0].accessories[0].services[0].type: unknown service type \"lightbulp\"; did you mean \"lightbulb\"?"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: switch\n            characteristics: {brightness: 5}\n", "homegate.yml:7: homes[0].accessories[0].services[0].characteristics.brightness: unknown key"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: lightbulb\n            characteristics: {brightness: 150}\n", "homegate.yml:7: homes[0].accessories[0].services[0].characteristics.brightness: brightness must be within 0...100, got 150"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: lightbulb\n            characteristics: {on: maybe}\n", "homegate.yml:7: homes[0].accessories[0].services[0].characteristics.on: on must be true or false (also on/off, 1/0), got \"maybe\""),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        latency_ms: -1\n", "homegate.yml:5: homes[0].accessories[0].latency_ms: must be within 0...600000 milliseconds, got -1"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        failure_rate: 2\n", "homegate.yml:5: homes[0].accessories[0].failure_rate: must be within 0...1, got 2"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        fail_status: -1\n", "homegate.yml:5: homes[0].accessories[0].fail_status: expected a HAP status from -70401 to -70412, got -1"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: thermostat\n            characteristics:\n              target-temperature: {min: 5}\n", "homegate.yml:8: homes[0].accessories[0].services[0].characteristics.target-temperature: target-temperature cannot go below 10, got min 5"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: thermostat\n            characteristics:\n              target-temperature: {step: 0.05}\n", "homegate.yml:8: homes[0].accessories[0].services[0].characteristics.target-temperature: target-temperature step must be a multiple of the catalog's step 0.1, got 0.05"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: temperature-sensor\n            characteristics:\n              current-temperature: {drift: {min: 5, max: 1, step: 1, every: 1}}\n", "homegate.yml:8: homes[0].accessories[0].services[0].characteristics.current-temperature.drift: min (5) must be below max (1)"),
        ("homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: temperature-sensor\n            characteristics:\n              current-temperature: {drift: {min: 1, max: 5, step: 1}}\n", "homegate.yml:8: homes[0].accessories[0].services[0].characteristics.current-temperature.drift: \"every\" is required here"),
        ("homes:\n  - name: A\n    accessories:\n      - name: B\n        bridged:\n          - name: C\n            bridged: []\n", "homegate.yml:7: homes[0].accessories[0].bridged[0].bridged: unknown key"),
        ("simulator:\n  seed: -5\n", "homegate.yml:2: simulator.seed: expected a whole number from 0 to 18446744073709551615, got \"-5\""),
    ])
    func mistakes(_ text: String, expected: String) {
        #expect {
            try parse(text)
        } throws: { error in
            let description = (error as? ConfigError)?.description ?? "\(error)"
            guard description.hasPrefix("/etc/homegate/" + expected) else {
                Issue.record("got: \(description)")
                return false
            }
            return true
        }
    }
}

@Suite("Configuration: drift steps")
struct DriftStepTests {
    @Test("a drift's step must fit the characteristic", arguments: [
        ("current-temperature", "{value: 20, drift: {min: 18, max: 24, step: 0.25, every: 1}}", "must be a multiple of current-temperature's step 0.1, got 0.25"),
        ("brightness", "{value: 50, drift: {min: 0, max: 100, step: 0.5, every: 1}}", "brightness takes whole numbers; the step must be one, got 0.5"),
    ])
    func steps(_ characteristic: String, _ entry: String, _ expected: String) {
        let type = characteristic == "brightness" ? "lightbulb" : "temperature-sensor"
        let text = "homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: \(type)\n            characteristics:\n              \(characteristic): \(entry)\n"
        #expect {
            try ConfigFile.parse(text, file: "/x/homegate.yml")
        } throws: { error in
            (error as? ConfigError)?.description.contains(expected) == true
        }
    }

    @Test("a device's step coarser than the catalog's, a whole multiple of it, is the device's; a finer or uneven one is refused at load", arguments: [
        ("0.2", nil), ("0.5", nil), ("1", nil),
        ("0.05", "homegate.yml:8: homes[0].accessories[0].services[0].characteristics.target-temperature: target-temperature step must be a multiple of the catalog's step 0.1, got 0.05"),
        ("0.15", "homegate.yml:8: homes[0].accessories[0].services[0].characteristics.target-temperature: target-temperature step must be a multiple of the catalog's step 0.1, got 0.15"),
    ] as [(String, String?)])
    func boundStep(_ step: String, _ expected: String?) throws {
        let text = "homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: thermostat\n            characteristics:\n              target-temperature: {value: 20, step: \(step)}\n"
        do {
            let config = try ConfigFile.parse(text, file: "/x/homegate.yml")
            #expect(expected == nil, "accepted, expected: \(expected ?? "")")
            let thermostat = config.simulatorDevices[0].accessory.services[1]
            #expect(thermostat.characteristic(ofType: "target-temperature")?.minStep == Double(step))
        } catch {
            #expect(error.description == "/x/" + (expected ?? "accepted"), "\(error)")
        }
    }

    @Test("a drift on the characteristic's step is accepted")
    func accepted() throws {
        let text = "homes:\n  - name: A\n    accessories:\n      - name: L\n        services:\n          - type: temperature-sensor\n            characteristics:\n              current-temperature: {value: 20, drift: {min: 18, max: 24, step: 0.5, every: 1}}\n"
        let config = try ConfigFile.parse(text, file: "/x/homegate.yml")
        #expect(config.simulatorDevices[0].drifts[0].step == 0.5)
    }
}

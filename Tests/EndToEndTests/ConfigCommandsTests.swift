import Foundation
import Testing
import TestSupport

/// `homegate check-config` and `homegate topics` on the shipped configurations, as a user runs them.
@Suite("homegate check-config and topics", .startsProcesses)
struct ConfigCommandsTests {
    static let demo = PackageRoot.url.appendingPathComponent("config/demo.yml").path
    static let example = PackageRoot.url.appendingPathComponent("config/homegate.example.yml").path

    @Test("check-config accepts the demo and example configurations", arguments: [demo, example])
    func checkShipped(_ path: String) async throws {
        let command = try HomeGateProcess(["check-config", "--config", path])
        #expect(try await command.waitForExit() == 0, "output:\n\(command.output)")
        #expect(command.output.contains("\(path): OK"))
    }

    @Test("check-config summarises the demo home")
    func demoSummary() async throws {
        let command = try HomeGateProcess(["check-config", "--config", Self.demo])
        #expect(try await command.waitForExit() == 0)
        #expect(command.output.contains("home:       Demo Home (primary): 5 rooms, 2 zones, 11 accessories (1 bridge)"))
        #expect(command.output.contains("web page:   http://127.0.0.1:8080/ (no sign-in)"))
    }

    @Test("topics prints the demo home's tree without a broker")
    func demoTopics() async throws {
        let command = try HomeGateProcess(["topics", "--config", Self.demo])
        #expect(try await command.waitForExit() == 0, "output:\n\(command.output)")
        let lines = command.output.split(separator: "\n").map(String.init)
        for expected in [
            "homegate/$state",
            "homegate/demo-home/living-room/floor-lamp/$meta",
            "homegate/demo-home/living-room/floor-lamp/$reachable",
            "homegate/demo-home/living-room/floor-lamp/lightbulb/on  bool [pr pw ev] = false",
            "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness  int [pr pw ev] = 40  0...100 step 1 percentage",
            "homegate/demo-home/kitchen/kitchen-sensor/temperature-sensor/current-temperature  float [pr ev] = 21.5  -273.1...1000 step 0.1 celsius",
            "homegate/demo-home/hallway/front-door-lock/lock-mechanism/lock-target-state  uint8 [pr pw ev] = 1 (secured)  0...1 step 1  values: 0 unsecured, 1 secured",
            "homegate/demo-home/bedroom/bedroom-thermostat/thermostat/target-temperature  float [pr pw ev] = 20  10...38 step 0.5 celsius",
            "homegate/demo-home/hallway/hue-bridge/$reachable",
            "homegate/demo-home/bedroom/bedside-lamp/lightbulb/on  bool [pr pw ev] = false",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)")
        }
        #expect(!command.output.contains("accessory-information"), "information services have no topics")
    }

    @Test("topics with a filter prints only what matches, with labels and bounds; --json one object per characteristic")
    func filteredTopics() async throws {
        let text = try HomeGateProcess(["topics", "--config", Self.demo, "lock"])
        #expect(try await text.waitForExit() == 0, "output:\n\(text.output)")
        #expect(text.output.split(separator: "\n").map(String.init) == [
            "# Demo Home (primary): homegate/demo-home",
            "# Hallway: homegate/demo-home/hallway",
            "homegate/demo-home/hallway/front-door-lock/lock-mechanism/lock-current-state  uint8 [pr ev] = 1 (secured)  0...3 step 1  values: 0 unsecured, 1 secured, 2 jammed, 3 unknown",
            "homegate/demo-home/hallway/front-door-lock/lock-mechanism/lock-target-state  uint8 [pr pw ev] = 1 (secured)  0...1 step 1  values: 0 unsecured, 1 secured",
        ])
        let json = try HomeGateProcess(["topics", "--config", Self.demo, "--json", "Front Door"])
        #expect(try await json.waitForExit() == 0, "output:\n\(json.output)")
        let objects = try json.output.split(separator: "\n").map { try GatewayFixture.decode(Array($0.utf8)) }
        #expect(objects.count == 2)
        let target = try #require(objects.first { $0["type"] as? String == "lock-target-state" })
        #expect(target["topic"] as? String == "homegate/demo-home/hallway/front-door-lock/lock-mechanism/lock-target-state")
        #expect(target["label"] as? String == "secured" && target["value"] as? Int == 1 && target["room"] as? String == "Hallway")
        #expect((target["validValues"] as? [[String: Any]])?.compactMap { $0["label"] as? String } == ["unsecured", "secured"])
    }

    @Test("a bad home in the configuration: exit 78 naming the line and key")
    func badHome() async throws {
        let folder = try TemporaryDirectory.make(prefix: "topics")
        let file = folder.appendingPathComponent("bad.yml").path
        try "homes:\n  - name: A\n    rooms: [Kitchen, kitchen]\n".write(toFile: file, atomically: true, encoding: .utf8)
        for command in ["check-config", "topics"] {
            let process = try HomeGateProcess([command, "--config", file])
            #expect(try await process.waitForExit() == 78)
            #expect(process.output.contains("\(file):3: homes[0].rooms[1]: \"kitchen\" is already in use as \"Kitchen\""))
        }
    }
}

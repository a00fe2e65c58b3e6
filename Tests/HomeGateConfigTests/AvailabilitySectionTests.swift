import Accessories
import HomeModel
import Testing
@testable import HomeGateConfig

/// The `availability:` section and what it decides: how long a silent device stays reachable,
/// by transport, battery and accessory, the keep-alive reads that follow, and the mistakes it names.
@Suite("availability section")
struct AvailabilitySectionTests {
    static let file = "/etc/homegate/homegate.yml"

    func problem(_ text: String) -> String {
        do {
            _ = try ConfigFile.parse(text, file: Self.file)
            return "no error"
        } catch {
            return error.description
        }
    }

    static func accessory(_ id: String, battery charging: Double?? = nil) -> Accessory {
        var services = [Service(iid: 1, type: "accessory-information", uuid: "0000003E-0000-1000-8000-0026BB765291")]
        if let charging {
            var characteristics = [Characteristic(iid: 11, type: "status-low-battery", uuid: "00000079-0000-1000-8000-0026BB765291", format: .uint8,
                                                  perms: [.read], value: .int(0))]
            if let charging {
                characteristics.append(Characteristic(iid: 12, type: "charging-state", uuid: "0000008F-0000-1000-8000-0026BB765291", format: .uint8,
                                                      perms: [.read], value: .int(Int64(charging))))
            }
            services.append(Service(iid: 10, type: "battery-service", uuid: "00000096-0000-1000-8000-0026BB765291", characteristics: characteristics))
        }
        return Accessory(id: AccessoryID(id), name: id, services: services)
    }

    @Test func defaultsWithoutTheSection() throws {
        let availability = try ConfigFile.parse("log_level: info\n", file: Self.file).availability
        #expect(availability == Availability())
        #expect(availability.ip == .milliseconds(3500) && availability.thread == .seconds(40) && availability.battery == .seconds(600))
    }

    @Test func readsEveryKey() throws {
        let availability = try ConfigFile.parse("""
            availability:
              ip: 10
              thread: 120
              battery: 3600.5
              accessories:
                hap-aabbccddeeff-1: 2
                Hallway Sensor: 86400
            """, file: Self.file).availability
        #expect(availability.ip == .seconds(10) && availability.thread == .seconds(120) && availability.battery == .milliseconds(3_600_500))
        #expect(availability.accessories == [AccessoryID("hap-aabbccddeeff-1"): .seconds(2), AccessoryID("Hallway Sensor"): .seconds(86_400)])
    }

    @Test func theOlderThreadKeepAliveStillCounts() throws {
        let availability = try ConfigFile.parse("hap:\n  thread_keep_alive: 60\n", file: Self.file).availability
        #expect(availability.thread == .seconds(70), "the reads' interval plus the 10 s a Thread device has to answer")
        #expect(problem("hap:\n  thread_keep_alive: 60\navailability:\n  thread: 90\n")
            == "/etc/homegate/homegate.yml:2: hap: hap.thread_keep_alive and availability.thread say the same thing; keep availability.thread")
    }

    @Test func namesEachMistake() {
        #expect(problem("availability:\n  ip: 1\n") == "/etc/homegate/homegate.yml:2: availability.ip: must be within 2...86400 seconds, got 1")
        #expect(problem("availability:\n  thread: soon\n") == "/etc/homegate/homegate.yml:2: availability.thread: expected a number of seconds, got \"soon\"")
        #expect(problem("availability:\n  accessories:\n    hap-aabbccddeeff-1: 100000\n")
            == "/etc/homegate/homegate.yml:3: availability.accessories.hap-aabbccddeeff-1: must be within 2...86400 seconds, got 100000")
        #expect(problem("availability:\n  accessories: [a, b]\n").hasPrefix("/etc/homegate/homegate.yml:2: availability.accessories: expected a mapping"))
        #expect(problem("availability:\n  wifi: 10\n").hasPrefix("/etc/homegate/homegate.yml:2: availability.wifi: unknown key"))
        #expect(problem("availability:\n  matter: 10\n").hasPrefix("/etc/homegate/homegate.yml:2: availability.matter: unknown key"))
    }

    @Test func anAccessoryBeatsBatteryWhichBeatsTheTransport() {
        var availability = Availability()
        let mains = Self.accessory("hap-a-1")
        let sensor = Self.accessory("hap-a-2", battery: .some(nil))
        #expect(availability.unreachableAfter([mains], thread: false) == .milliseconds(3500))
        #expect(availability.unreachableAfter([mains], thread: true) == .seconds(40))
        #expect(availability.unreachableAfter([mains, sensor], thread: true) == .seconds(600), "a bridge with a battery device on it")
        availability.accessories[AccessoryID("hap-a-1")] = .seconds(30)
        availability.accessories[AccessoryID("hap-a-2")] = .seconds(20)
        #expect(availability.unreachableAfter([mains, sensor], thread: true) == .seconds(20), "the smallest of the device's own")
    }

    @Test func batteryPoweredIsABatteryThatCannotCharge() {
        #expect(Availability.isBatteryPowered(Self.accessory("x", battery: .some(nil))), "no charging state")
        #expect(Availability.isBatteryPowered(Self.accessory("x", battery: 2)), "not chargeable")
        #expect(!Availability.isBatteryPowered(Self.accessory("x", battery: 0)), "a backup battery, not charging")
        #expect(!Availability.isBatteryPowered(Self.accessory("x", battery: 1)), "a backup battery, charging")
        #expect(!Availability.isBatteryPowered(Self.accessory("x")), "no battery")
    }

    @Test func theKeepAliveAddsUpToTheTime() {
        #expect(Availability.keepAlive(unreachableAfter: .milliseconds(3500), longestAnswer: Availability.ipAnswer) == (.milliseconds(1500), .seconds(2)))
        #expect(Availability.keepAlive(unreachableAfter: .seconds(40), longestAnswer: Availability.threadAnswer) == (.seconds(30), .seconds(10)))
        #expect(Availability.keepAlive(unreachableAfter: .seconds(2), longestAnswer: Availability.ipAnswer) == (.seconds(1), .seconds(1)),
                "half each when the longest answer would leave less than a second between reads")
        #expect(Availability.keepAlive(unreachableAfter: .seconds(3), longestAnswer: Availability.ipAnswer) == (.seconds(1), .seconds(2)))
        #expect(Availability.keepAlive(unreachableAfter: .seconds(600), longestAnswer: Availability.threadAnswer) == (.seconds(590), .seconds(10)))
    }
}

import Foundation
import Testing
import Wire
import HAP
@testable import HAPDriver
@testable import Gateway
import HomeModel

/// Home Assistant parity, counted on the device zoo: for each real device's accessory database
/// that Home Assistant's own HomeKit integration (`homekit_controller`) has a snapshot of, the
/// entities it makes (`Tests/Fixtures/hap/zoo/homekit_controller_entities.tsv`) are matched one
/// by one, field by field (platform, device class, entity category, unit, state class), against
/// the components of HomeGate's discovery config for the same accessory (by aid) of the same
/// database.
@Suite struct HomeAssistantParityTests {
    /// One entity as Home Assistant's registry has it.
    struct Reference: Hashable, CustomStringConvertible {
        let fixture: String
        /// The accessory's aid in the fixture (Home Assistant's device identifier `...:aid:N`).
        let aid: Int
        let domain: String
        let deviceClass: String
        let category: String
        let unit: String
        let stateClass: String
        let name: String

        var description: String { "\(fixture) aid \(aid): \(domain) \"\(name)\" [\(deviceClass) \(category) \(unit) \(stateClass)]" }

        /// Whether a discovery component shows this entity: same platform, and the same device
        /// class, category, unit and state class where Home Assistant's entity has one.
        func isShown(by component: JSON) -> Bool {
            func field(_ key: String) -> String { component[key]?.string ?? "" }
            return field("platform") == domain && (deviceClass.isEmpty || field("device_class") == deviceClass)
                && field("entity_category") == category && field("unit_of_measurement") == unit && field("state_class") == stateClass
        }
    }

    /// A line of the reference that is not eight tab-separated fields with a numeric aid.
    struct ReferenceError: Error, CustomStringConvertible {
        let line: String
        var description: String { "not a reference line: \(line)" }
    }

    static let zoo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/hap/zoo").standardized

    static func references() throws -> [Reference] {
        let text = try String(contentsOf: zoo.appendingPathComponent("homekit_controller_entities.tsv"), encoding: .utf8)
        return try text.split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 8, let aid = Int(fields[1]) else { throw ReferenceError(line: String(line)) }
            return Reference(fixture: fields[0], aid: aid, domain: fields[2], deviceClass: fields[3], category: fields[4], unit: fields[5],
                             stateClass: fields[6], name: fields[7])
        }
    }

    /// Every component of the discovery config HomeGate makes for each accessory of a zoo
    /// database, by aid, as a device paired over HAP would have it (all accessories in the
    /// default room).
    static func components(of fixture: String) throws -> [Int: [JSON]] {
        let database = try [UInt8](Data(contentsOf: zoo.appendingPathComponent("\(fixture).json")))
        let body = Array(#"{"accessories": "#.utf8) + database + Array("}".utf8)
        let parsed = try AccessoryDescription.parseReporting(body)
        let mapping = AccessoryMapping(deviceID: "AA:BB:CC:DD:EE:FF", database: parsed.accessories, warnings: parsed.warnings)
        let home = Home(id: "home", name: "Home", isPrimary: true, accessories: mapping.accessories)
        let map = TopicMap(base: "homegate", homes: [home])
        var byAid: [Int: [JSON]] = [:]
        for aid in parsed.accessories.map(\.aid) {
            let id = AccessoryMapping.accessoryID(deviceID: "AA:BB:CC:DD:EE:FF", aid: aid)
            guard let accessory = home.accessories.first(where: { $0.id == id }),
                  let config = HomeAssistantDiscovery.config(for: accessory, in: home, map: map, base: "homegate", prefix: "homeassistant",
                                                              roomName: home.room(of: accessory).name, bridgeID: accessory.bridgeID),
                  case .object(let components)? = config.payload["components"] else { continue }
            byAid[aid] = Array(components.values)
        }
        return byAid
    }

    /// The references no component shows, matching each component at most once.
    static func unmatched(_ references: [Reference], _ components: [JSON]) -> [Reference] {
        var free = components
        var missing: [Reference] = []
        // Entities with a device class first, so a class-less one does not take their component.
        for reference in references.sorted(by: { !$0.deviceClass.isEmpty && $1.deviceClass.isEmpty }) {
            if let index = free.firstIndex(where: reference.isShown(by:)) {
                free.remove(at: index)
            } else {
                missing.append(reference)
            }
        }
        return missing
    }

    /// The reference less what is left out on purpose, and those of it that no component of the
    /// same accessory shows.
    static func measure() throws -> (references: [Reference], missing: [Reference]) {
        let references = try Self.references().filter { leftOut[$0.name] == nil }
        var missing: [Reference] = []
        for fixture in Set(references.map(\.fixture)).sorted() {
            let components = try components(of: fixture)
            let ofFixture = references.filter { $0.fixture == fixture }
            for aid in Set(ofFixture.map(\.aid)).sorted() {
                missing += unmatched(ofFixture.filter { $0.aid == aid }, components[aid] ?? [])
            }
        }
        return (references, missing)
    }

    /// Entities homekit_controller makes that HomeGate leaves out on purpose, with the reason.
    static let leftOut: [String: String] = [
        "Aqara Hub-1563 Volume": "a characteristic of a service the device marks hidden: HomeKit never shows hidden services",
        "Aqara Hub-1563 Pairing Mode": "a characteristic of a service the device marks hidden: HomeKit never shows hidden services",
        "Koogeek-SW2-187A91 Power": "a characteristic of a service the device marks hidden: HomeKit never shows hidden services",
        "Airversa AP2 1808 Provision Preferred Thread Credentials":
            "it gives the device the credentials of a Thread network Home Assistant knows; the gateway knows none to give",
        "Nanoleaf Strip 3B32 Provision Preferred Thread Credentials":
            "it gives the device the credentials of a Thread network Home Assistant knows; the gateway knows none to give",
        "HAA-C718B3 Setup": "a characteristic of a service the device marks hidden: HomeKit never shows hidden services",
        "HAA-C718B3 Update": "a characteristic of a service the device marks hidden: HomeKit never shows hidden services",
        "LG webOS TV AF80": "a media player: Home Assistant's MQTT integration has none (the television is a power switch, an input select and remote-key buttons)",
    ]

    @Test("for every zoo device Home Assistant has a snapshot of, discovery shows at least 95% of homekit_controller's entities in every domain, field by field")
    func parityPerDomain() throws {
        let (references, missing) = try Self.measure()
        for domain in Set(references.map(\.domain)).sorted() {
            let total = references.filter { $0.domain == domain }.count
            let shown = total - missing.filter { $0.domain == domain }.count
            #expect(Double(shown) >= 0.95 * Double(total), "\(domain): \(shown) of \(total); missing: \(missing.filter { $0.domain == domain })")
        }
        let shown = references.count - missing.count
        print("Home Assistant parity on the zoo: \(shown) of \(references.count) entities of homekit_controller (\(100 * shown / references.count)%)")
        for reference in missing { print("  missing: \(reference)") }
    }

    @Test("overall, discovery shows at least 97% of homekit_controller's entities for the zoo (of those not left out on purpose)")
    func parityOverall() throws {
        let (references, missing) = try Self.measure()
        let shown = references.count - missing.count
        #expect(Double(shown) >= 0.97 * Double(references.count), "\(shown) of \(references.count); missing: \(missing)")
    }

    @Test("what is left out on purpose is in the reference and is indeed not shown")
    func leftOutOnPurpose() throws {
        let references = try Self.references().filter { Self.leftOut[$0.name] != nil }
        #expect(references.count == Self.leftOut.count)
        for reference in references {
            #expect(Self.unmatched([reference], try Self.components(of: reference.fixture)[reference.aid] ?? []) == [reference], "\(reference)")
        }
    }

    @Test("the reference covers the zoo's devices that homekit_controller has snapshots of")
    func referenceCoversTheZoo() throws {
        let fixtures = Set(try Self.references().map(\.fixture))
        #expect(fixtures == ["airversa_ap2", "anker_eufycam", "aqara_gateway", "aqara_switch", "arlo_baby", "connectsense", "ecobee3",
                             "ecobee3_no_sensors", "eve_degree", "eve_energy", "haa_fan", "home_assistant_bridge_basic_heater_cooler",
                             "home_assistant_bridge_fan", "home_assistant_bridge_heater_cooler", "hue_bridge", "koogeek_ls1",
                             "koogeek_p1eu", "koogeek_sw2", "lennox_e30", "lg_tv", "mysa_living", "nanoleaf_strip_nl55", "netamo_doorbell",
                             "netatmo_home_coach", "schlage_sense", "simpleconnect_fan", "vocolinc_flowerbud"])
        for fixture in fixtures { #expect(FileManager.default.fileExists(atPath: Self.zoo.appendingPathComponent("\(fixture).json").path)) }
    }
}

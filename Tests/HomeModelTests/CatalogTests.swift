import Foundation
import Testing
@testable import HomeModel

@Suite("HAP catalog")
struct CatalogTests {
    let catalog = Catalog.standard

    // MARK: Integrity

    @Test("the embedded file decodes, and decodes to the standard catalog")
    func decodes() throws {
        let decoded = try Catalog(json: Array(EmbeddedCatalog.json.utf8))
        #expect(decoded.characteristics == catalog.characteristics)
        #expect(decoded.services == catalog.services)
    }

    @Test("it holds the bulk of HAP's types")
    func size() {
        #expect(catalog.services.count >= 50)
        #expect(catalog.characteristics.count >= 150)
    }

    @Test("names and UUIDs are unique")
    func unique() {
        #expect(Set(catalog.characteristics.map(\.name)).count == catalog.characteristics.count)
        #expect(Set(catalog.characteristics.map(\.uuid)).count == catalog.characteristics.count)
        #expect(Set(catalog.services.map(\.name)).count == catalog.services.count)
        #expect(Set(catalog.services.map(\.uuid)).count == catalog.services.count)
        #expect(Set(catalog.characteristics.map(\.displayName)).count == catalog.characteristics.count)
        #expect(Set(catalog.services.map(\.displayName)).count == catalog.services.count)
    }

    @Test("UUIDs: 36 characters, upper-case, on Apple's base")
    func uuids() {
        let hex = Set("0123456789ABCDEF")
        for uuid in catalog.characteristics.map(\.uuid) + catalog.services.map(\.uuid) {
            #expect(uuid.count == 36, "\(uuid)")
            #expect(uuid == uuid.uppercased(), "\(uuid)")
            #expect(uuid.hasSuffix(UUIDs.appleSuffix), "\(uuid)")
            let parts = uuid.split(separator: "-", omittingEmptySubsequences: false)
            #expect(parts.map(\.count) == [8, 4, 4, 4, 12], "\(uuid)")
            #expect(parts.joined().allSatisfy { hex.contains($0) }, "\(uuid)")
        }
    }

    @Test("names are kebab-case and fit a topic level as they are")
    func names() {
        for name in catalog.characteristics.map(\.name) + catalog.services.map(\.name) {
            #expect(Slug.make(name, fallback: "") == name, "\(name)")
            #expect(name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }, "\(name)")
        }
    }

    @Test("every required and optional characteristic exists, none listed twice")
    func serviceCharacteristicsExist() {
        for service in catalog.services {
            #expect(!service.required.isEmpty || service.hidden, "\(service.name) requires nothing")
            for name in service.required + service.optional {
                #expect(catalog.characteristic(name) != nil, "\(service.name) lists unknown \(name)")
            }
            let all = service.required + service.optional
            #expect(Set(all).count == all.count, "\(service.name) lists a characteristic twice")
        }
    }

    @Test("bounds are consistent")
    func bounds() {
        for type in catalog.characteristics {
            if let minValue = type.minValue, let maxValue = type.maxValue {
                #expect(minValue <= maxValue, "\(type.name)")
            }
            if let minStep = type.minStep {
                #expect(minStep > 0, "\(type.name)")
            }
            if let range = type.format.integerRange {
                for bound in [type.minValue, type.maxValue].compactMap({ $0 }) {
                    #expect(range.contains(bound), "\(type.name): \(bound) outside \(type.format)")
                    #expect(bound == bound.rounded(), "\(type.name): \(bound) is not whole")
                }
                if let minStep = type.minStep {
                    #expect(minStep == minStep.rounded(), "\(type.name): step \(minStep)")
                }
            }
            if let maxLen = type.maxLen {
                #expect(maxLen > 0, "\(type.name)")
                #expect(type.format == .string, "\(type.name): maxLen on \(type.format)")
            }
            if let range = type.validValuesRange {
                #expect(range.count == 2 && range[0] <= range[1], "\(type.name)")
            }
        }
    }

    @Test("bounds only on numeric formats")
    func boundsNumericOnly() {
        for type in catalog.characteristics where !type.format.isNumeric {
            #expect(type.minValue == nil && type.maxValue == nil && type.minStep == nil, "\(type.name) (\(type.format))")
            #expect(type.validValues == nil && type.validValuesRange == nil, "\(type.name) (\(type.format))")
            #expect(type.unit == nil || type.format == .string, "\(type.name) has a unit")
        }
    }

    @Test("valid values are inside the bounds and the format's integer range")
    func validValues() {
        for type in catalog.characteristics {
            guard let validValues = type.validValues else { continue }
            #expect(!validValues.isEmpty, "\(type.name)")
            #expect(validValues.map(\.value) == validValues.map(\.value).sorted(), "\(type.name)")
            #expect(Set(validValues.map(\.value)).count == validValues.count, "\(type.name)")
            #expect(Set(validValues.map(\.name)).count == validValues.count, "\(type.name) names a value twice")
            for valid in validValues {
                #expect(valid.value == valid.value.rounded(), "\(type.name): \(valid.value)")
                if let minValue = type.minValue { #expect(valid.value >= minValue, "\(type.name): \(valid.value)") }
                if let maxValue = type.maxValue { #expect(valid.value <= maxValue, "\(type.name): \(valid.value)") }
                if let range = type.format.integerRange {
                    #expect(range.contains(valid.value), "\(type.name): \(valid.value)")
                } else {
                    Issue.record("\(type.name): valid values on a \(type.format) characteristic")
                }
                #expect(!valid.name.isEmpty && Slug.make(valid.name, fallback: "") == valid.name, "\(type.name): \(valid.name)")
            }
        }
    }

    @Test("every characteristic can be read, written or evented, and is a real format")
    func perms() {
        for type in catalog.characteristics {
            #expect(!type.perms.isEmpty, "\(type.name)")
            #expect(type.perms.contains(.read) || type.perms.contains(.write), "\(type.name)")
            #expect(Set(type.perms).count == type.perms.count, "\(type.name)")
            if type.perms.contains(.events) { #expect(type.perms.contains(.read), "\(type.name): events without read") }
        }
    }

    @Test("momentary only where expected")
    func momentary() {
        #expect(catalog.characteristics.filter(\.momentary).map(\.name) == ["programmable-switch-event"])
    }

    @Test("hidden services: protocol information and firmware update")
    func hidden() {
        #expect(catalog.service("protocol-information")?.hidden == true)
        #expect(catalog.service("firmware-update")?.hidden == true)
        #expect(catalog.service("lightbulb")?.hidden == false)
        #expect(catalog.service("accessory-information")?.hidden == false)
    }

    @Test("a catalog entry that does not fit is named: the entry and the field")
    func refusals() {
        func problem(_ text: String) -> String {
            do {
                _ = try Catalog(json: Array(text.utf8))
                return "no error"
            } catch {
                return error.description
            }
        }
        let lamp = #"{"name": "on", "displayName": "On", "uuid": "00000025-0000-1000-8000-0026BB765291", "format": "bool", "perms": ["pr"]}"#
        #expect(problem(#"{"characteristics": [\#(lamp)], "services": []}"#) == "no error")
        #expect(problem(#"{"characteristics": [\#(lamp.replacingOccurrences(of: #""bool""#, with: #""boolean""#))], "services": []}"#)
            == #"on: format: "boolean" is no HAP format"#)
        #expect(problem(#"{"characteristics": [\#(lamp.replacingOccurrences(of: #""pr""#, with: #""read""#))], "services": []}"#)
            == #"on: perms: "read" is no HAP permission"#)
        #expect(problem(#"{"characteristics": [{"name": "x", "displayName": "X", "uuid": "1", "format": "uint8", "perms": [], "validValues": {"one": "a"}}], "services": []}"#)
            == "x: validValues: valid value one is not a number")
        #expect(problem(#"{"services": []}"#) == "characteristics must be a list")
        #expect(problem("[") .hasPrefix("the catalog is not JSON"))
    }

    // MARK: Look-ups

    @Test("look-ups by name, short UUID and full UUID", arguments: [
        "on", "25", "0025", "00000025", "00000025-0000-1000-8000-0026BB765291", "00000025-0000-1000-8000-0026bb765291",
    ])
    func characteristicLookUp(_ key: String) {
        #expect(catalog.characteristic(key)?.name == "on")
    }

    @Test("service look-ups by name, short UUID and full UUID", arguments: [
        "lightbulb", "43", "0043", "00000043-0000-1000-8000-0026BB765291", "00000043-0000-1000-8000-0026bb765291",
    ])
    func serviceLookUp(_ key: String) {
        #expect(catalog.service(key)?.name == "lightbulb")
    }

    @Test("short UUIDs with hex letters", arguments: [("3E", "accessory-information"), ("3e", "accessory-information"), ("8A", "temperature-sensor")])
    func hexShortUUID(_ key: String, name: String) {
        #expect(catalog.service(key)?.name == name)
    }

    @Test("unknown names and UUIDs find nothing", arguments: [
        "", "lightbulbs", "Lightbulb", "FFFFFFFF", "E863F10D-079E-48FF-8F27-9C2605A29F52", "123456789", "zz",
    ])
    func unknown(_ key: String) {
        #expect(catalog.service(key) == nil)
        #expect(catalog.characteristic(key) == nil)
    }

    @Test("every entry is found by its name and by its UUID, short and long")
    func everyEntryFound() {
        for type in catalog.characteristics {
            #expect(catalog.characteristic(type.name) == type)
            #expect(catalog.characteristic(type.uuid) == type)
            #expect(catalog.characteristic(type.uuid.lowercased()) == type)
            let short = String(type.uuid.prefix(8).drop { $0 == "0" })
            #expect(catalog.characteristic(short) == type, "\(type.name) by \(short)")
        }
        for type in catalog.services {
            #expect(catalog.service(type.name) == type)
            #expect(catalog.service(type.uuid) == type)
            let short = String(type.uuid.prefix(8).drop { $0 == "0" })
            #expect(catalog.service(short) == type, "\(type.name) by \(short)")
        }
    }

    @Test("UUID expansion")
    func expand() {
        #expect(UUIDs.expand("43") == "00000043-0000-1000-8000-0026BB765291")
        #expect(UUIDs.expand("3e") == "0000003E-0000-1000-8000-0026BB765291")
        #expect(UUIDs.expand("00000043") == "00000043-0000-1000-8000-0026BB765291")
        #expect(UUIDs.expand("e863f10d-079e-48ff-8f27-9c2605a29f52") == "E863F10D-079E-48FF-8F27-9C2605A29F52")
    }

    // MARK: Known facts

    @Test("lightbulb requires on and offers brightness, hue, saturation and colour temperature")
    func lightbulb() throws {
        let lightbulb = try #require(catalog.service("lightbulb"))
        #expect(lightbulb.required == ["on"])
        for name in ["brightness", "hue", "saturation", "color-temperature", "name"] {
            #expect(lightbulb.optional.contains(name), "\(name)")
        }
        #expect(lightbulb.uuid == "00000043-0000-1000-8000-0026BB765291")
        #expect(lightbulb.displayName == "Lightbulb")
    }

    @Test("on is a readable, writable, evented bool")
    func on() throws {
        let on = try #require(catalog.characteristic("on"))
        #expect(on.format == .bool)
        #expect(Set(on.perms) == [.read, .write, .events])
        #expect(on.uuid == "00000025-0000-1000-8000-0026BB765291")
    }

    @Test("brightness is an int percentage 0...100 in steps of 1")
    func brightness() throws {
        let brightness = try #require(catalog.characteristic("brightness"))
        #expect(brightness.format == .int)
        #expect(brightness.unit == "percentage")
        #expect(brightness.minValue == 0)
        #expect(brightness.maxValue == 100)
        #expect(brightness.minStep == 1)
        #expect(brightness.perms.contains(.write))
    }

    @Test("target temperature is a float 10...38 in steps of 0.1, in celsius")
    func targetTemperature() throws {
        let temperature = try #require(catalog.characteristic("target-temperature"))
        #expect(temperature.format == .float)
        #expect(temperature.minValue == 10)
        #expect(temperature.maxValue == 38)
        #expect(temperature.minStep == 0.1)
        #expect(temperature.unit == "celsius")
        let current = try #require(catalog.characteristic("current-temperature"))
        #expect(!current.perms.contains(.write))
        #expect(current.perms.contains(.events))
    }

    @Test("lock target state: 0 unsecured, 1 secured")
    func lockTargetState() throws {
        let lock = try #require(catalog.characteristic("lock-target-state"))
        #expect(lock.format == .uint8)
        #expect(lock.validValues?.map(\.value) == [0, 1])
        #expect(lock.validValues?.map(\.name) == ["unsecured", "secured"])
        let current = try #require(catalog.characteristic("lock-current-state"))
        #expect(current.validValues?.map(\.value) == [0, 1, 2, 3])
        let mechanism = try #require(catalog.service("lock-mechanism"))
        #expect(Set(mechanism.required) == ["lock-current-state", "lock-target-state"])
    }

    @Test("more services everyone scripts against", arguments: [
        ("thermostat", ["current-heating-cooling-state", "target-heating-cooling-state", "current-temperature", "target-temperature", "temperature-display-units"]),
        ("outlet", ["on"]),
        ("switch", ["on"]),
        ("temperature-sensor", ["current-temperature"]),
        ("garage-door-opener", ["current-door-state", "target-door-state", "obstruction-detected"]),
        ("accessory-information", ["identify", "manufacturer", "model", "name", "serial-number", "firmware-revision"]),
        ("stateless-programmable-switch", ["programmable-switch-event"]),
    ])
    func required(_ service: String, required: [String]) {
        #expect(catalog.service(service)?.required == required)
    }

    @Test("identify is write-only; name is read-only with 64 characters at most")
    func informationCharacteristics() throws {
        let identify = try #require(catalog.characteristic("identify"))
        #expect(identify.perms == [.write])
        #expect(identify.format == .bool)
        let name = try #require(catalog.characteristic("name"))
        #expect(name.perms == [.read])
        #expect(name.maxLen == 64)
    }

    // MARK: Decoding a catalog file

    @Test("a catalog file with a non-numeric valid value is refused")
    func badValidValue() {
        let json = """
        {"characteristics": [{"name": "x", "displayName": "X", "uuid": "X", "format": "uint8", "perms": ["pr"], "validValues": {"one": "a"}}],
         "services": []}
        """
        #expect(throws: CatalogError.self) {
            try Catalog(json: Array(json.utf8))
        }
    }

    @Test("a minimal catalog file decodes, with defaults for what it leaves out")
    func minimal() throws {
        let json = """
        {"characteristics": [{"name": "x", "displayName": "X", "uuid": "0000ABCD-0000-1000-8000-0026BB765291", "format": "uint8",
                              "perms": ["pr", "ev"], "validValues": {"2": "two", "0": "zero", "10": "ten"}}],
         "services": [{"name": "s", "displayName": "S", "uuid": "0000ABCE-0000-1000-8000-0026BB765291", "required": ["x"], "optional": []}]}
        """
        let catalog = try Catalog(json: Array(json.utf8))
        let x = try #require(catalog.characteristic("ABCD"))
        #expect(x.momentary == false)
        #expect(x.validValues?.map(\.value) == [0, 2, 10])
        #expect(x.validValues?.map(\.name) == ["zero", "two", "ten"])
        #expect(catalog.service("abce")?.hidden == false)
    }

    @Test("a catalog file with an unknown format or permission is refused", arguments: [
        #"{"characteristics": [{"name": "x", "displayName": "X", "uuid": "X", "format": "double", "perms": ["pr"]}], "services": []}"#,
        #"{"characteristics": [{"name": "x", "displayName": "X", "uuid": "X", "format": "bool", "perms": ["rw"]}], "services": []}"#,
        #"{"characteristics": [], "services": [{"name": "s", "displayName": "S", "uuid": "S", "required": ["x"]}]}"#,
    ])
    func badFile(_ json: String) {
        #expect(throws: CatalogError.self) {
            try Catalog(json: Array(json.utf8))
        }
    }
}

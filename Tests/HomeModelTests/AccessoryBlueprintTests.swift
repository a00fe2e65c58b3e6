import Testing
@testable import HomeModel
import Wire

@Suite("Accessory blueprints")
struct AccessoryBlueprintTests {
    typealias ServiceBlueprint = AccessoryBlueprint.ServiceBlueprint

    func build(_ services: [ServiceBlueprint], name: String = "Floor Lamp") throws(BlueprintError) -> Accessory {
        try AccessoryBlueprint(id: "acc-1", name: name, category: .lightbulb, roomID: "room-1", services: services).build()
    }

    func buildError(_ services: [ServiceBlueprint]) -> String? {
        do {
            let accessory = try build(services)
            Issue.record("built \(accessory.services.map(\.type))")
            return nil
        } catch {
            return error.message
        }
    }

    // MARK: Instance ids

    @Test("accessory information is iid 1, its characteristics 2 to 7, then services in order")
    func iids() throws {
        let accessory = try build([
            ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": .int(40)]),
            ServiceBlueprint(type: "outlet"),
            ServiceBlueprint(type: "thermostat"),
        ])
        #expect(accessory.services.map(\.iid) == [1, 8, 11, 13])
        #expect(accessory.services.map(\.type) == ["accessory-information", "lightbulb", "outlet", "thermostat"])
        let information = accessory.services[0]
        #expect(information.characteristics.map(\.iid) == [2, 3, 4, 5, 6, 7])
        #expect(information.characteristics.map(\.type) == ["identify", "manufacturer", "model", "name", "serial-number", "firmware-revision"])
        #expect(accessory.services[1].characteristics.map(\.iid) == [9, 10])
        #expect(accessory.services[1].characteristics.map(\.type) == ["on", "brightness"])
        #expect(accessory.services[2].characteristics.map(\.iid) == [12])
        #expect(accessory.services[3].characteristics.map(\.iid) == [14, 15, 16, 17, 18])
        // Instance ids are unique within the accessory.
        let all = accessory.services.map(\.iid) + accessory.services.flatMap { $0.characteristics.map(\.iid) }
        #expect(Set(all).count == all.count)
    }

    @Test("the same blueprint builds the same accessory")
    func deterministic() throws {
        let services = [
            ServiceBlueprint(type: "lightbulb", characteristics: ["color-temperature": nil, "hue": nil, "brightness": nil, "saturation": nil]),
            ServiceBlueprint(type: "thermostat", characteristics: ["name": nil, "current-relative-humidity": nil]),
        ]
        let first = try build(services)
        for _ in 0..<10 {
            #expect(try build(services) == first)
        }
    }

    @Test("optional characteristics follow the required ones in the catalog's order, not the blueprint's")
    func optionalOrder() throws {
        let accessory = try build([
            ServiceBlueprint(type: "lightbulb", characteristics: ["color-temperature": nil, "hue": nil, "brightness": nil]),
        ])
        #expect(accessory.services[1].characteristics.map(\.type) == ["on", "brightness", "hue", "color-temperature"])
        #expect(accessory.services[1].characteristics.map(\.iid) == [9, 10, 11, 12])
    }

    // MARK: Required and optional

    @Test("required characteristics are always there", arguments: ["lightbulb", "thermostat", "lock-mechanism", "garage-door-opener", "outlet"])
    func required(_ type: String) throws {
        let accessory = try build([ServiceBlueprint(type: type)])
        let standard = try #require(Catalog.standard.service(type))
        #expect(accessory.services[1].characteristics.map(\.type) == standard.required)
    }

    @Test("optional characteristics only when asked for")
    func optional() throws {
        let plain = try build([ServiceBlueprint(type: "lightbulb")])
        #expect(plain.services[1].characteristic(ofType: "brightness") == nil)
        #expect(plain.services[1].characteristic(ofType: "name") == nil)
        let dimmable = try build([ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": nil])])
        #expect(dimmable.services[1].characteristic(ofType: "brightness") != nil)
        #expect(dimmable.services[1].characteristic(ofType: "hue") == nil)
    }

    @Test("characteristics carry the catalog's format, permissions and bounds")
    func catalogProperties() throws {
        let accessory = try build([ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": nil])])
        let brightness = try #require(accessory.services[1].characteristic(ofType: "brightness"))
        #expect(brightness.uuid == "00000008-0000-1000-8000-0026BB765291")
        #expect(brightness.format == .int)
        #expect(brightness.minValue == 0)
        #expect(brightness.maxValue == 100)
        #expect(brightness.minStep == 1)
        #expect(brightness.unit == "percentage")
        #expect(brightness.isWritable && brightness.isReadable && brightness.supportsEvents)
        #expect(accessory.services[1].uuid == "00000043-0000-1000-8000-0026BB765291")
    }

    @Test("the accessory's own fields")
    func accessoryFields() throws {
        let blueprint = AccessoryBlueprint(id: "acc-7", name: "Porch Light", manufacturer: "Acme", model: "L1", firmwareRevision: "2.1",
                                           category: .lightbulb, roomID: "porch", bridgeID: "bridge-1",
                                           services: [ServiceBlueprint(type: "lightbulb", isPrimary: true)])
        let accessory = try blueprint.build()
        #expect(accessory.id == "acc-7")
        #expect(accessory.name == "Porch Light")
        #expect(accessory.manufacturer == "Acme")
        #expect(accessory.model == "L1")
        #expect(accessory.serialNumber == "acc-7")
        #expect(accessory.firmwareRevision == "2.1")
        #expect(accessory.category == .lightbulb)
        #expect(accessory.roomID == "porch")
        #expect(accessory.bridgeID == "bridge-1")
        #expect(accessory.isReachable)
        #expect(accessory.services[1].isPrimary)
        let information = accessory.services[0]
        #expect(information.characteristic(ofType: "manufacturer")?.value == .string("Acme"))
        #expect(information.characteristic(ofType: "model")?.value == .string("L1"))
        #expect(information.characteristic(ofType: "name")?.value == .string("Porch Light"))
        #expect(information.characteristic(ofType: "serial-number")?.value == .string("acc-7"))
        #expect(information.characteristic(ofType: "firmware-revision")?.value == .string("2.1"))
        #expect(information.characteristic(ofType: "identify")?.value == nil)
        #expect(AccessoryBlueprint(id: "x", name: "X", serialNumber: "SN-1").serialNumber == "SN-1")
    }

    @Test("a hidden service stays hidden")
    func hiddenService() throws {
        let accessory = try build([ServiceBlueprint(type: "lightbulb", isHidden: true)])
        #expect(accessory.services[1].isHidden)
        #expect(accessory.visibleServices.isEmpty)
    }

    // MARK: Initial values

    @Test("initial values are kept")
    func initialValues() throws {
        let accessory = try build([
            ServiceBlueprint(type: "lightbulb", characteristics: ["on": .bool(true), "brightness": .int(40)]),
            ServiceBlueprint(type: "thermostat", characteristics: ["target-temperature": .float(21.5), "current-temperature": .float(19.2)]),
            ServiceBlueprint(type: "lock-mechanism", characteristics: ["lock-target-state": .uint(1), "lock-current-state": .uint(2)]),
        ])
        #expect(accessory.characteristic(9)?.characteristic.value == .bool(true))
        #expect(accessory.characteristic(10)?.characteristic.value == .int(40))
        #expect(accessory.services[2].characteristic(ofType: "target-temperature")?.value == .float(21.5))
        // Read-only characteristics take initial values too.
        #expect(accessory.services[2].characteristic(ofType: "current-temperature")?.value == .float(19.2))
        #expect(accessory.services[3].characteristic(ofType: "lock-current-state")?.value == .uint(2))
    }

    @Test("initial values are validated, naming the service")
    func invalidInitialValues() {
        #expect(buildError([ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": .int(150)])])
            == "services[0] (lightbulb): brightness must be within 0...100, got 150")
        #expect(buildError([ServiceBlueprint(type: "outlet"), ServiceBlueprint(type: "lightbulb", characteristics: ["on": .string("yes")])])
            == "services[1] (lightbulb): on takes a bool value, got \"yes\"")
        #expect(buildError([ServiceBlueprint(type: "thermostat", characteristics: ["target-temperature": .float(5)])])
            == "services[0] (thermostat): target-temperature must be within 10...38, got 5")
        #expect(buildError([ServiceBlueprint(type: "lock-mechanism", characteristics: ["lock-target-state": .uint(5)])])?
            .hasPrefix("services[0] (lock-mechanism): lock-target-state must be") == true)
    }

    // MARK: Refusals

    @Test("an unknown service type is refused with a suggestion", arguments: [
        ("lightbulbb", "lightbulb"), ("lightblub", "lightbulb"), ("thermostatt", "thermostat"), ("outlett", "outlet"),
        ("Lightbulb", "lightbulb"), ("temperature-sensr", "temperature-sensor"), ("lock-mechanizm", "lock-mechanism"),
    ])
    func unknownService(_ type: String, suggestion: String) {
        #expect(buildError([ServiceBlueprint(type: type)]) == "services[0]: unknown service type \"\(type)\"; did you mean \"\(suggestion)\"?")
    }

    @Test("an unknown service type far from every name is refused without a suggestion")
    func unknownServiceNoSuggestion() {
        #expect(buildError([ServiceBlueprint(type: "lightbulb"), ServiceBlueprint(type: "teleporter-xyz-9000")])
            == "services[1]: unknown service type \"teleporter-xyz-9000\"")
    }

    @Test("a characteristic the service type does not have is refused, listing required and optional ones")
    func foreignCharacteristic() {
        let message = buildError([ServiceBlueprint(type: "outlet", characteristics: ["brightness": .int(5)])])
        #expect(message == "services[0] (outlet): \"brightness\" is not a characteristic of outlet (required: on; optional: name, outlet-in-use)")
        let lightbulb = buildError([ServiceBlueprint(type: "lightbulb", characteristics: ["speed": nil])])
        #expect(lightbulb?.hasPrefix("services[0] (lightbulb): \"speed\" is not a characteristic of lightbulb (required: on; optional: brightness, hue, saturation, name") == true)
    }

    @Test("services may be given by UUID, short or long")
    func serviceByUUID() throws {
        let accessory = try build([ServiceBlueprint(type: "43"), ServiceBlueprint(type: "00000047-0000-1000-8000-0026BB765291")])
        #expect(accessory.services.map(\.type) == ["accessory-information", "lightbulb", "outlet"])
    }

    // MARK: Defaults

    @Test("defaults: false, 0 clamped into range, the first valid value, empty text", arguments: [
        ("lightbulb", "on", Value.bool(false)),
        ("lightbulb", "brightness", .int(0)),
        ("lightbulb", "hue", .float(0)),
        ("lightbulb", "color-temperature", .uint(140)),
        ("thermostat", "target-temperature", .float(10)),
        ("thermostat", "current-temperature", .float(0)),
        ("thermostat", "target-heating-cooling-state", .uint(0)),
        ("thermostat", "temperature-display-units", .uint(0)),
        ("lock-mechanism", "lock-target-state", .uint(0)),
        ("lock-mechanism", "lock-current-state", .uint(0)),
        ("garage-door-opener", "obstruction-detected", .bool(false)),
        ("thermostat", "heating-threshold-temperature", .float(0)),
        ("thermostat", "cooling-threshold-temperature", .float(10)),
    ])
    func defaults(_ service: String, characteristic: String, expected: Value) throws {
        let accessory = try build([ServiceBlueprint(type: service, characteristics: [characteristic: nil])])
        let value = accessory.services[1].characteristic(ofType: characteristic)?.value
        #expect(value == expected)
    }

    @Test("the name characteristic defaults to the service's name")
    func defaultName() throws {
        let named = try build([ServiceBlueprint(type: "lightbulb", name: "Reading Light", characteristics: ["name": nil])])
        #expect(named.services[1].characteristic(ofType: "name")?.value == .string("Reading Light"))
        #expect(named.services[1].name == "Reading Light")
        let given = try build([ServiceBlueprint(type: "lightbulb", name: "Reading Light", characteristics: ["name": .string("Desk")])])
        #expect(given.services[1].characteristic(ofType: "name")?.value == .string("Desk"))
    }

    @Test("the name characteristic of an unnamed service defaults to the accessory's name, not to \"name\"")
    func defaultNameUnnamed() throws {
        let accessory = try build([ServiceBlueprint(type: "lightbulb", characteristics: ["name": nil])], name: "Floor Lamp")
        let value = accessory.services[1].characteristic(ofType: "name")?.value
        #expect(value != .string("name"))
        #expect(value == .string("Floor Lamp"))
    }

    @Test("momentary characteristics start without a value")
    func momentary() throws {
        let accessory = try build([ServiceBlueprint(type: "stateless-programmable-switch")])
        let event = try #require(accessory.services[1].characteristic(ofType: "programmable-switch-event"))
        #expect(event.isMomentary)
        #expect(event.value == nil)
    }

    @Test("every service type builds with all its characteristics, and every default fits its characteristic")
    func everyServiceType() throws {
        for type in Catalog.standard.services where type.name != "accessory-information" {
            let all = Dictionary(uniqueKeysWithValues: type.optional.map { ($0, Value?.none) })
            let accessory: Accessory
            do {
                accessory = try build([ServiceBlueprint(type: type.name, characteristics: all)])
            } catch {
                Issue.record("\(type.name): \(error)")
                continue
            }
            let characteristics = accessory.services[1].characteristics
            #expect(characteristics.map(\.type) == type.required + type.optional, "\(type.name)")
            for characteristic in characteristics {
                guard let value = characteristic.value else {
                    #expect(characteristic.isMomentary, "\(type.name).\(characteristic.type) has no value")
                    continue
                }
                do {
                    try characteristic.validate(value)
                } catch {
                    Issue.record("\(type.name).\(characteristic.type): default \(value) does not fit: \(error)")
                }
            }
        }
    }

    // MARK: A device's own bounds

    typealias Bounds = AccessoryBlueprint.Bounds

    func buildFailure(_ services: [ServiceBlueprint]) -> BlueprintError? {
        do {
            let accessory = try build(services)
            Issue.record("built \(accessory.services.map(\.type))")
            return nil
        } catch {
            return error
        }
    }

    @Test("narrower bounds replace the catalog's, and values are checked against them")
    func narrowerBounds() throws {
        let accessory = try build([ServiceBlueprint(type: "thermostat", characteristics: ["target-temperature": .float(21.5)],
                                                    bounds: ["target-temperature": Bounds(minValue: 15, maxValue: 30, minStep: 0.5)])])
        let temperature = try #require(accessory.services[1].characteristic(ofType: "target-temperature"))
        #expect(temperature.minValue == 15)
        #expect(temperature.maxValue == 30)
        #expect(temperature.minStep == 0.5)
        #expect(temperature.value == .float(21.5))
        #expect(throws: StatusError(.invalidValue, "target-temperature must be a multiple of 0.5 from 15, got 21.3")) {
            try temperature.validateWrite(.float(21.3))
        }
        #expect(throws: StatusError(.invalidValue, "target-temperature must be within 15...30, got 31")) {
            try temperature.validateWrite(.float(31))
        }
        try temperature.validateWrite(.float(29.5))
    }

    @Test("bounds given in part keep the catalog's other bounds")
    func partialBounds() throws {
        let accessory = try build([ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": nil],
                                                    bounds: ["brightness": Bounds(maxValue: 80)])])
        let brightness = try #require(accessory.services[1].characteristic(ofType: "brightness"))
        #expect(brightness.minValue == 0)
        #expect(brightness.maxValue == 80)
        #expect(brightness.minStep == 1)
    }

    @Test("the default starts inside the device's bounds")
    func defaultInsideBounds() throws {
        let accessory = try build([ServiceBlueprint(type: "thermostat",
                                                    bounds: ["target-temperature": Bounds(minValue: 16, maxValue: 28)])])
        #expect(accessory.services[1].characteristic(ofType: "target-temperature")?.value == .float(16))
    }

    @Test("the default of an enumerated characteristic starts inside the device's bounds")
    func enumeratedDefaultInsideBounds() throws {
        // A heat-only thermostat: target heating cooling state 1...1.
        let accessory = try build([ServiceBlueprint(type: "thermostat",
                                                    bounds: ["target-heating-cooling-state": Bounds(minValue: 1, maxValue: 1)])])
        let mode = try #require(accessory.services[1].characteristic(ofType: "target-heating-cooling-state"))
        #expect(mode.value == .uint(1))
        if let value = mode.value {
            #expect(throws: Never.self) { try mode.validate(value) }
        }
    }

    @Test("bounds that widen the catalog's, cross, or step by nothing are refused", arguments: [
        ("target-temperature", Bounds(minValue: 5), "services[0] (thermostat): target-temperature cannot go below 10, got min 5"),
        ("target-temperature", Bounds(maxValue: 40), "services[0] (thermostat): target-temperature cannot go above 38, got max 40"),
        ("target-temperature", Bounds(minValue: 30, maxValue: 20), "services[0] (thermostat): target-temperature min 30 is above max 20"),
        ("target-temperature", Bounds(minStep: 0), "services[0] (thermostat): target-temperature step must be positive, got 0"),
        ("target-temperature", Bounds(minStep: -0.5), "services[0] (thermostat): target-temperature step must be positive, got -0.5"),
        ("target-temperature", Bounds(minStep: 0.05), "services[0] (thermostat): target-temperature step must be a multiple of the catalog's step 0.1, got 0.05"),
        ("target-temperature", Bounds(minStep: 0.15), "services[0] (thermostat): target-temperature step must be a multiple of the catalog's step 0.1, got 0.15"),
        ("target-heating-cooling-state", Bounds(minStep: 0.5), "services[0] (thermostat): target-heating-cooling-state takes whole numbers; the step must be one, got 0.5"),
        ("name", Bounds(maxValue: 3), "services[0] (thermostat): name is not a number; it has no bounds"),
    ])
    func refusedBounds(_ characteristic: String, bounds: Bounds, message: String) {
        var characteristics: [String: Value?] = [:]
        if characteristic == "name" { characteristics["name"] = .some(nil) }
        let error = buildFailure([ServiceBlueprint(type: "thermostat", characteristics: characteristics, bounds: [characteristic: bounds])])
        #expect(error?.message == message)
        #expect(error?.serviceIndex == 0)
        #expect(error?.characteristic == characteristic)
        #expect(error.map { message.hasSuffix($0.problem) } == true)
    }

    @Test("a step that is a whole multiple of the catalog's is the device's step", arguments: [0.1, 0.2, 0.3, 0.5, 1, 2.5])
    func coarserStep(_ step: Double) throws {
        let accessory = try build([ServiceBlueprint(type: "thermostat", bounds: ["target-temperature": Bounds(minStep: step)])])
        #expect(accessory.services[1].characteristic(ofType: "target-temperature")?.minStep == step)
    }

    @Test("bounds for a characteristic the service does not have are refused")
    func boundsForeignCharacteristic() {
        let error = buildFailure([ServiceBlueprint(type: "outlet", bounds: ["brightness": Bounds(maxValue: 50)])])
        #expect(error?.message == "services[0] (outlet): \"brightness\" is not a characteristic of outlet (required: on; optional: name, outlet-in-use)")
        #expect(error?.characteristic == "brightness")
    }

    @Test("bounds for an optional characteristic are not silently dropped")
    func boundsForUnrequestedOptional() throws {
        do {
            let accessory = try build([ServiceBlueprint(type: "lightbulb", bounds: ["brightness": Bounds(maxValue: 50)])])
            let brightness = accessory.services[1].characteristic(ofType: "brightness")
            #expect(brightness != nil, "the bounds were given, but the lightbulb has no brightness")
            #expect(brightness?.maxValue == 50)
        } catch {
            // Refusing them is fine too, if it says why.
            #expect(error.message.contains("brightness"))
        }
    }

    @Test("blueprint errors say where: the service's position, and the characteristic")
    func errorLocation() {
        let unknown = buildFailure([ServiceBlueprint(type: "outlet"), ServiceBlueprint(type: "lightbulbb")])
        #expect(unknown?.serviceIndex == 1)
        #expect(unknown?.characteristic == nil)
        #expect(unknown?.problem == "unknown service type \"lightbulbb\"; did you mean \"lightbulb\"?")
        let value = buildFailure([ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": .int(150)])])
        #expect(value?.serviceIndex == 0)
        #expect(value?.characteristic == "brightness")
        #expect(value?.problem == "brightness must be within 0...100, got 150")
        #expect(value?.description == "services[0] (lightbulb): brightness must be within 0...100, got 150")
        let plain = BlueprintError("something else")
        #expect(plain.message == "something else" && plain.problem == "something else")
        #expect(plain.serviceIndex == nil && plain.characteristic == nil)
    }

    @Test("suggestions for misspelt names")
    func closest() {
        let names = Catalog.standard.services.map(\.name)
        #expect(BlueprintError.closest("lightbulbb", in: names) == "lightbulb")
        #expect(BlueprintError.closest("thermostst", in: names) == "thermostat")
        #expect(BlueprintError.closest("xyzzy-plugh", in: names) == nil)
        #expect(BlueprintError.closest("anything", in: []) == nil)
    }
}

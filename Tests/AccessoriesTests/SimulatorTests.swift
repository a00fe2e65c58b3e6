import HomeModel
import Testing
import TestSupport
@testable import Accessories
import Wire

/// Accessories to simulate, built from blueprints.
enum Devices {
    typealias ServiceBlueprint = AccessoryBlueprint.ServiceBlueprint

    static func accessory(_ id: AccessoryID, _ name: String, bridge: AccessoryID? = nil, reachable: Bool = true,
                          services: [ServiceBlueprint]) -> Accessory {
        do {
            var accessory = try AccessoryBlueprint(id: id, name: name, bridgeID: bridge, services: services).build()
            accessory.isReachable = reachable
            return accessory
        } catch {
            Issue.record("blueprint \(id) does not build: \(error)")
            return Accessory(id: id, name: name)
        }
    }

    /// Floor Lamp: on 9 (false), brightness 10 (40).
    static let lamp = accessory("acc-lamp", "Floor Lamp", services: [
        ServiceBlueprint(type: "lightbulb", characteristics: ["brightness": .int(40)]),
    ])
    /// Thermometer: current-temperature 9 (21.0), read-only.
    static let thermometer = accessory("acc-thermometer", "Thermometer", services: [
        ServiceBlueprint(type: "temperature-sensor", characteristics: ["current-temperature": .float(21)]),
    ])
    /// Button: programmable-switch-event 9, momentary.
    static let button = accessory("acc-button", "Button", services: [ServiceBlueprint(type: "stateless-programmable-switch")])
    static let bridge = accessory("acc-bridge", "Hue Bridge", services: [])
    static let bridged = (1...3).map { number in
        accessory(AccessoryID("acc-bulb-\(number)"), "Bulb \(number)", bridge: "acc-bridge", services: [ServiceBlueprint(type: "lightbulb")])
    }
    static let offline = accessory("acc-offline", "Cellar Light", reachable: false, services: [ServiceBlueprint(type: "lightbulb")])

    static let lampOn = CharacteristicReference(accessoryID: "acc-lamp", iid: 9)
    static let lampBrightness = CharacteristicReference(accessoryID: "acc-lamp", iid: 10)
    static let temperature = CharacteristicReference(accessoryID: "acc-thermometer", iid: 9)
    static let buttonEvent = CharacteristicReference(accessoryID: "acc-button", iid: 9)

    static func bulbOn(_ number: Int) -> CharacteristicReference {
        CharacteristicReference(accessoryID: AccessoryID("acc-bulb-\(number)"), iid: 9)
    }
}

/// Reads one event, failing the test if the stream has ended.
func nextEvent(_ iterator: inout AsyncStream<AccessoryEvent>.Iterator) async -> AccessoryEvent? {
    let event = await iterator.next()
    if event == nil { Issue.record("the event stream ended") }
    return event
}

/// The status a driver call fails with, or nil if it succeeds.
func failure<T>(_ body: () async throws -> T) async -> HAPStatus? {
    do {
        _ = try await body()
        return nil
    } catch let error as StatusError {
        return error.status
    } catch {
        Issue.record("not a StatusError: \(error)")
        return nil
    }
}

/// The time limit is a hang guard: every test runs on a manual clock and passes in milliseconds;
/// a test that waits for a sleeper that never comes fails after it instead of hanging the run.
/// (Under the unbounded suite of issue 30, 200 steps of the drift test, each a hop through a
/// cooperative pool of two threads shared with hundreds of tests, took more than a minute.)
@Suite("Simulator", .timeLimit(.minutes(1)))
struct SimulatorTests {
    let clock = ManualClock()

    func makeSimulator(_ devices: [Simulator.Device], seed: UInt64 = 1) -> Simulator {
        Simulator(devices: devices, clock: clock, seed: seed)
    }

    func makeSimulator(_ accessories: [Accessory], seed: UInt64 = 1) -> Simulator {
        makeSimulator(accessories.map { Simulator.Device(accessory: $0) }, seed: seed)
    }

    func value(_ simulator: Simulator, _ reference: CharacteristicReference) async -> Value? {
        await simulator.accessories().first { $0.id == reference.accessoryID }?.characteristic(reference.iid)?.characteristic.value
    }

    // MARK: Structure

    @Test("accessories() gives every accessory in order, with its structure and reachability")
    func structure() async throws {
        let simulator = makeSimulator([Devices.lamp, Devices.bridge] + Devices.bridged + [Devices.offline, Devices.thermometer])
        let accessories = await simulator.accessories()
        #expect(accessories.map(\.id) == ["acc-lamp", "acc-bridge", "acc-bulb-1", "acc-bulb-2", "acc-bulb-3", "acc-offline", "acc-thermometer"])
        #expect(accessories.map(\.isReachable) == [true, true, true, true, true, false, true])
        #expect(accessories[0] == Devices.lamp)
        #expect(accessories[2].bridgeID == "acc-bridge")
        #expect(accessories[0].services.map(\.type) == ["accessory-information", "lightbulb"])
        #expect(accessories[0].characteristic(10)?.characteristic.value == .int(40))
        #expect(await simulator.isReachable("acc-offline") == false)
        #expect(await simulator.isReachable("acc-lamp"))
        #expect(await simulator.isReachable("no-such-accessory") == false)
    }

    @Test("accessories behind a bridge that starts unreachable start unreachable")
    func bridgeStartsUnreachable() async {
        var bridge = Devices.bridge
        bridge.isReachable = false
        let simulator = makeSimulator([bridge] + Devices.bridged)
        #expect(await simulator.accessories().map(\.isReachable) == [false, false, false, false])
        #expect(await failure { try await simulator.read(Devices.bulbOn(1)) } == .communicationFailure)
    }

    @Test("a bridge the simulator does not know does not make its accessories unreachable")
    func unknownBridge() async {
        let simulator = makeSimulator(Devices.bridged)
        #expect(await simulator.accessories().map(\.isReachable) == [true, true, true])
    }

    @Test("an accessory listed twice is simulated once")
    func duplicates() async {
        var renamed = Devices.lamp
        renamed.name = "Other"
        let simulator = makeSimulator([Devices.lamp, renamed])
        let accessories = await simulator.accessories()
        #expect(accessories.count == 1, "\(accessories.map(\.name))")
        #expect(accessories.first?.name == "Floor Lamp")
    }

    // MARK: Reads and writes

    @Test("a write changes what read and accessories() see, and sends no event")
    func writeRoundTrip() async throws {
        let simulator = makeSimulator([Devices.lamp])
        var events = simulator.events.makeAsyncIterator()
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        #expect(try await simulator.read(Devices.lampOn) == .bool(false))
        try await simulator.write(.int(80), to: Devices.lampBrightness)
        try await simulator.write(.bool(true), to: Devices.lampOn)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(80))
        #expect(try await simulator.read(Devices.lampOn) == .bool(true))
        #expect(await value(simulator, Devices.lampBrightness) == .int(80))
        #expect(await value(simulator, Devices.lampOn) == .bool(true))
        // The next event is a device-side change, not the confirmed writes.
        try await simulator.update(Devices.lampBrightness, to: .int(10))
        #expect(await nextEvent(&events) == .value(Devices.lampBrightness, .int(10)))
    }

    @Test("refused writes: read-only -70404, unknown iid or accessory -70409, invalid value -70410")
    func refusedWrites() async throws {
        let simulator = makeSimulator([Devices.lamp, Devices.thermometer])
        #expect(await failure { try await simulator.write(.float(30), to: Devices.temperature) } == .readOnly)
        #expect(await failure { try await simulator.write(.bool(true), to: CharacteristicReference(accessoryID: "acc-lamp", iid: 99)) } == .noSuchResource)
        #expect(await failure { try await simulator.write(.bool(true), to: CharacteristicReference(accessoryID: "acc-nope", iid: 9)) } == .noSuchResource)
        #expect(await failure { try await simulator.write(.int(150), to: Devices.lampBrightness) } == .invalidValue)
        #expect(await failure { try await simulator.write(.string("on"), to: Devices.lampOn) } == .invalidValue)
        // The name is read-only too.
        #expect(await failure { try await simulator.write(.string("New"), to: CharacteristicReference(accessoryID: "acc-lamp", iid: 5)) } == .readOnly)
        // Nothing changed.
        #expect(try await simulator.read(Devices.temperature) == .float(21))
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        #expect(try await simulator.read(Devices.lampOn) == .bool(false))
    }

    @Test("the refusal's status and message")
    func refusalMessage() async {
        let simulator = makeSimulator([Devices.lamp])
        do {
            try await simulator.write(.int(150), to: Devices.lampBrightness)
            Issue.record("the write passed")
        } catch {
            #expect(error == StatusError(.invalidValue, "brightness must be within 0...100, got 150"))
            #expect(error.description == "brightness must be within 0...100, got 150")
        }
    }

    @Test("refused reads: write-only -70405, unknown -70409, no value yet -70402")
    func refusedReads() async throws {
        let simulator = makeSimulator([Devices.lamp, Devices.button])
        #expect(await failure { try await simulator.read(CharacteristicReference(accessoryID: "acc-lamp", iid: 2)) } == .writeOnly)
        #expect(await failure { try await simulator.read(CharacteristicReference(accessoryID: "acc-lamp", iid: 8)) } == .noSuchResource)
        #expect(await failure { try await simulator.read(CharacteristicReference(accessoryID: "acc-nope", iid: 9)) } == .noSuchResource)
        #expect(await failure { try await simulator.read(Devices.buttonEvent) } == .communicationFailure)
        #expect(try await simulator.read(CharacteristicReference(accessoryID: "acc-lamp", iid: 5)) == .string("Floor Lamp"))
        // identify is written, never read.
        try await simulator.write(.bool(true), to: CharacteristicReference(accessoryID: "acc-lamp", iid: 2))
    }

    // MARK: Latency

    @Test("a write with latency completes only when the clock has advanced past it")
    func latency() async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(latency: .seconds(2)))])
        let write = Task { try await simulator.write(.int(90), to: Devices.lampBrightness) }
        await clock.waitForSleepers(1)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeperCount == 1)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        #expect(await value(simulator, Devices.lampBrightness) == .int(40))
        clock.advance(by: .milliseconds(1))
        try await write.value
        #expect(clock.sleeperCount == 0)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(90))
    }

    @Test("reads do not wait for the latency")
    func readsImmediate() async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(latency: .seconds(60)))])
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        #expect(clock.sleeperCount == 0)
    }

    @Test("writes with latency overlap: each takes its own time from when it started")
    func overlappingWrites() async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(latency: .seconds(10)))])
        let first = Task { try await simulator.write(.int(10), to: Devices.lampBrightness) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        let second = Task { try await simulator.write(.int(20), to: Devices.lampBrightness) }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        try await first.value
        #expect(try await simulator.read(Devices.lampBrightness) == .int(10))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(5))
        try await second.value
        #expect(try await simulator.read(Devices.lampBrightness) == .int(20))
    }

    @Test("an accessory that drops off during the latency fails the write with -70402")
    func dropsOffDuringLatency() async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(latency: .seconds(1)))])
        let write = Task { () async -> HAPStatus? in await failure { try await simulator.write(.int(90), to: Devices.lampBrightness) } }
        await clock.waitForSleepers(1)
        try await simulator.setReachable("acc-lamp", false)
        clock.advance(by: .seconds(1))
        #expect(await write.value == .communicationFailure)
        try await simulator.setReachable("acc-lamp", true)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
    }

    @Test("a cancelled write stops waiting, fails with -70408 and changes nothing")
    func cancelledWrite() async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(latency: .seconds(30)))])
        let write = Task { () async -> HAPStatus? in await failure { try await simulator.write(.int(90), to: Devices.lampBrightness) } }
        await clock.waitForSleepers(1)
        write.cancel()
        #expect(await write.value == .timedOut)
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(60))
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
    }

    // MARK: Failures

    @Test("a failure rate of 1 fails every write with its status and changes nothing", arguments: [
        HAPStatus.busy, .communicationFailure, .outOfResources, .insufficientAuthorization,
    ])
    func failEveryWrite(_ status: HAPStatus) async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(failureRate: 1, failStatus: status))])
        for attempt in 0..<5 {
            #expect(await failure { try await simulator.write(.int(Int64(attempt)), to: Devices.lampBrightness) } == status)
        }
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        #expect(await value(simulator, Devices.lampBrightness) == .int(40))
    }

    /// Which of 100 writes succeed at a failure rate of 0.5 with `seed`; checks each one's effect.
    func pattern(seed: UInt64) async throws -> [Bool] {
        let simulator = Simulator(devices: [Simulator.Device(accessory: Devices.lamp, behaviour: .init(failureRate: 0.5, failStatus: .busy))],
                                  clock: ManualClock(), seed: seed)
        var outcomes: [Bool] = []
        var expected = Value.int(40)
        for number in 0..<100 {
            let value = Value.int(Int64(number))
            let status = await failure { try await simulator.write(value, to: Devices.lampBrightness) }
            #expect(status == nil || status == .busy)
            if status == nil { expected = value }
            outcomes.append(status == nil)
            #expect(try await simulator.read(Devices.lampBrightness) == expected)
        }
        return outcomes
    }

    @Test("a seeded failure rate of 0.5 fails some writes, not all, the same ones for the same seed", arguments: [UInt64(0), 1, 42, 0xDEAD_BEEF])
    func seededFailures(_ seed: UInt64) async throws {
        let first = try await pattern(seed: seed)
        let successes = first.filter { $0 }.count
        #expect(successes > 10 && successes < 90, "\(successes) of 100 succeeded")
        #expect(try await pattern(seed: seed) == first)
    }

    @Test("different seeds fail different writes")
    func differentSeeds() async throws {
        #expect(try await pattern(seed: 1) != pattern(seed: 2))
    }

    @Test("a failure rate of 0 never fails")
    func neverFails() async throws {
        let simulator = makeSimulator([Simulator.Device(accessory: Devices.lamp, behaviour: .init(failureRate: 0, failStatus: .busy))])
        for number in 0..<50 {
            try await simulator.write(.int(Int64(number)), to: Devices.lampBrightness)
        }
        #expect(try await simulator.read(Devices.lampBrightness) == .int(49))
    }

    // MARK: Reachability

    @Test("an unreachable accessory fails reads and writes with -70402 until it is back")
    func unreachable() async throws {
        let simulator = makeSimulator([Devices.offline, Devices.lamp])
        let on = CharacteristicReference(accessoryID: "acc-offline", iid: 9)
        #expect(await failure { try await simulator.read(on) } == .communicationFailure)
        #expect(await failure { try await simulator.write(.bool(true), to: on) } == .communicationFailure)
        #expect(HAPStatus.communicationFailure.rawValue == -70402)
        try await simulator.setReachable("acc-offline", true)
        try await simulator.write(.bool(true), to: on)
        #expect(try await simulator.read(on) == .bool(true))
        try await simulator.setReachable("acc-lamp", false)
        #expect(await failure { try await simulator.read(Devices.lampOn) } == .communicationFailure)
        #expect(await failure { try await simulator.write(.bool(true), to: Devices.lampOn) } == .communicationFailure)
        #expect(await simulator.accessories().map(\.isReachable) == [true, false])
    }

    @Test("reachability of an unknown accessory is refused with -70409")
    func unknownReachability() async {
        let simulator = makeSimulator([Devices.lamp])
        #expect(await failure { try await simulator.setReachable("acc-nope", false) } == .noSuchResource)
        #expect(await failure { try await simulator.setBehaviour("acc-nope", latency: .seconds(1)) } == .noSuchResource)
        #expect(await failure { try await simulator.update(CharacteristicReference(accessoryID: "acc-nope", iid: 9), to: .bool(true)) } == .noSuchResource)
    }

    @Test("reachability events: one per accessory whose reachability changed")
    func reachabilityEvents() async throws {
        let simulator = makeSimulator([Devices.lamp])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.setReachable("acc-lamp", false)
        try await simulator.setReachable("acc-lamp", false) // no change, no event
        try await simulator.setReachable("acc-lamp", true)
        try await simulator.setReachable("acc-lamp", true) // no change, no event
        try await simulator.update(Devices.lampOn, to: .bool(true))
        #expect(await nextEvent(&events) == .reachability("acc-lamp", reachable: false))
        #expect(await nextEvent(&events) == .reachability("acc-lamp", reachable: true))
        #expect(await nextEvent(&events) == .value(Devices.lampOn, .bool(true)))
    }

    @Test("a bridge takes everything behind it off the network and back, one event per accessory, in order")
    func bridge() async throws {
        let simulator = makeSimulator([Devices.bridge] + Devices.bridged + [Devices.lamp])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.setReachable("acc-bridge", false)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: false))
        for number in 1...3 {
            #expect(await nextEvent(&events) == .reachability(AccessoryID("acc-bulb-\(number)"), reachable: false))
        }
        #expect(await simulator.accessories().map(\.isReachable) == [false, false, false, false, true])
        for number in 1...3 {
            #expect(await failure { try await simulator.read(Devices.bulbOn(number)) } == .communicationFailure)
            #expect(await failure { try await simulator.write(.bool(true), to: Devices.bulbOn(number)) } == .communicationFailure)
        }
        #expect(try await simulator.read(Devices.lampOn) == .bool(false))

        try await simulator.setReachable("acc-bridge", true)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: true))
        for number in 1...3 {
            #expect(await nextEvent(&events) == .reachability(AccessoryID("acc-bulb-\(number)"), reachable: true))
        }
        #expect(await simulator.accessories().map(\.isReachable) == [true, true, true, true, true])
        try await simulator.write(.bool(true), to: Devices.bulbOn(2))
        #expect(try await simulator.read(Devices.bulbOn(2)) == .bool(true))
    }

    @Test("a bridged accessory set unreachable on its own stays unreachable when the bridge comes back")
    func bridgedOwnReachability() async throws {
        let simulator = makeSimulator([Devices.bridge] + Devices.bridged + [Devices.lamp])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.setReachable("acc-bulb-2", false)
        #expect(await nextEvent(&events) == .reachability("acc-bulb-2", reachable: false))
        try await simulator.setReachable("acc-bridge", false)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: false))
        #expect(await nextEvent(&events) == .reachability("acc-bulb-1", reachable: false))
        #expect(await nextEvent(&events) == .reachability("acc-bulb-3", reachable: false))
        try await simulator.setReachable("acc-bridge", true)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: true))
        #expect(await nextEvent(&events) == .reachability("acc-bulb-1", reachable: true))
        #expect(await nextEvent(&events) == .reachability("acc-bulb-3", reachable: true))
        #expect(await simulator.isReachable("acc-bulb-2") == false)
        #expect(await simulator.accessories().map(\.isReachable) == [true, true, false, true, true])
        #expect(await failure { try await simulator.read(Devices.bulbOn(2)) } == .communicationFailure)
        // While the bridge is down, bringing the bulb back changes nothing anyone sees.
        try await simulator.setReachable("acc-bridge", false)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: false))
        #expect(await nextEvent(&events) == .reachability("acc-bulb-1", reachable: false))
        #expect(await nextEvent(&events) == .reachability("acc-bulb-3", reachable: false))
        try await simulator.setReachable("acc-bulb-2", true)
        #expect(await simulator.isReachable("acc-bulb-2") == false)
        try await simulator.setReachable("acc-bridge", true)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: true))
        for number in 1...3 {
            #expect(await nextEvent(&events) == .reachability(AccessoryID("acc-bulb-\(number)"), reachable: true))
        }
        #expect(try await simulator.read(Devices.bulbOn(2)) == .bool(false))
    }

    // MARK: Device-side changes

    @Test("update() on a reachable accessory changes the value and sends an event")
    func update() async throws {
        let simulator = makeSimulator([Devices.lamp, Devices.thermometer])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.update(Devices.lampBrightness, to: .int(55))
        try await simulator.update(Devices.temperature, to: .float(19.5)) // read-only for writes, not for the device
        #expect(await nextEvent(&events) == .value(Devices.lampBrightness, .int(55)))
        #expect(await nextEvent(&events) == .value(Devices.temperature, .float(19.5)))
        #expect(try await simulator.read(Devices.lampBrightness) == .int(55))
        #expect(try await simulator.read(Devices.temperature) == .float(19.5))
    }

    @Test("update() on an unreachable accessory changes the value silently")
    func updateUnreachable() async throws {
        let simulator = makeSimulator([Devices.lamp])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.setReachable("acc-lamp", false)
        try await simulator.update(Devices.lampBrightness, to: .int(77))
        try await simulator.setReachable("acc-lamp", true)
        #expect(await nextEvent(&events) == .reachability("acc-lamp", reachable: false))
        #expect(await nextEvent(&events) == .reachability("acc-lamp", reachable: true))
        #expect(try await simulator.read(Devices.lampBrightness) == .int(77))
        #expect(await value(simulator, Devices.lampBrightness) == .int(77))
    }

    @Test("update() behind an unreachable bridge changes the value silently")
    func updateBehindBridge() async throws {
        let simulator = makeSimulator([Devices.bridge] + Devices.bridged)
        var events = simulator.events.makeAsyncIterator()
        try await simulator.setReachable("acc-bridge", false)
        try await simulator.update(Devices.bulbOn(1), to: .bool(true))
        try await simulator.setReachable("acc-bridge", true)
        try await simulator.update(Devices.bulbOn(3), to: .bool(true))
        var received: [AccessoryEvent] = []
        for _ in 0..<9 {
            if let event = await nextEvent(&events) { received.append(event) }
        }
        #expect(!received.contains(.value(Devices.bulbOn(1), .bool(true))))
        #expect(received.last == .value(Devices.bulbOn(3), .bool(true)))
        #expect(try await simulator.read(Devices.bulbOn(1)) == .bool(true))
    }

    @Test("update() validates the value and the characteristic")
    func updateRefused() async throws {
        let simulator = makeSimulator([Devices.lamp])
        #expect(await failure { try await simulator.update(Devices.lampBrightness, to: .int(150)) } == .invalidValue)
        #expect(await failure { try await simulator.update(Devices.lampOn, to: .int(1)) } == .invalidValue)
        #expect(await failure { try await simulator.update(CharacteristicReference(accessoryID: "acc-lamp", iid: 42), to: .bool(true)) } == .noSuchResource)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
    }

    @Test("a momentary event is sent but not kept")
    func momentary() async throws {
        let simulator = makeSimulator([Devices.button])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.update(Devices.buttonEvent, to: .uint(1))
        #expect(await nextEvent(&events) == .value(Devices.buttonEvent, .uint(1)))
        #expect(await value(simulator, Devices.buttonEvent) == nil)
    }

    // MARK: Behaviour

    @Test("setBehaviour: latency, fail status, clearing the failure; each key only when given")
    func setBehaviour() async throws {
        let simulator = makeSimulator([Devices.lamp])
        try await simulator.setBehaviour("acc-lamp", latency: .seconds(3))
        let slow = Task { try await simulator.write(.int(1), to: Devices.lampBrightness) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        #expect(try await simulator.read(Devices.lampBrightness) == .int(40))
        clock.advance(by: .seconds(1))
        try await slow.value
        #expect(try await simulator.read(Devices.lampBrightness) == .int(1))

        // A fail status makes every write fail; the latency stays.
        try await simulator.setBehaviour("acc-lamp", failStatus: .busy)
        let refused = Task { () async -> HAPStatus? in await failure { try await simulator.write(.int(2), to: Devices.lampBrightness) } }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(3))
        #expect(await refused.value == .busy)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(1))

        // Changing the latency leaves the failure on.
        try await simulator.setBehaviour("acc-lamp", latency: .zero)
        #expect(await failure { try await simulator.write(.int(3), to: Devices.lampBrightness) } == .busy)
        #expect(clock.sleeperCount == 0)

        // Another status replaces the first.
        try await simulator.setBehaviour("acc-lamp", failStatus: .outOfResources)
        #expect(await failure { try await simulator.write(.int(3), to: Devices.lampBrightness) } == .outOfResources)

        // Clearing lets writes through again.
        try await simulator.setBehaviour("acc-lamp", clearFailure: true)
        try await simulator.write(.int(4), to: Devices.lampBrightness)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(4))

        // Nothing given, nothing changed.
        try await simulator.setBehaviour("acc-lamp")
        try await simulator.write(.int(5), to: Devices.lampBrightness)
        #expect(try await simulator.read(Devices.lampBrightness) == .int(5))
    }

    @Test("a behaviour applies to its accessory only")
    func behaviourPerAccessory() async throws {
        let simulator = makeSimulator([Devices.lamp, Devices.offline])
        try await simulator.setReachable("acc-offline", true)
        try await simulator.setBehaviour("acc-offline", failStatus: .busy)
        try await simulator.write(.int(60), to: Devices.lampBrightness)
        #expect(await failure { try await simulator.write(.bool(true), to: CharacteristicReference(accessoryID: "acc-offline", iid: 9)) } == .busy)
    }

    // MARK: Drift

    @Test("drifting values move within the range, in steps, rounded to the step, each change an event")
    func drift() async throws {
        let drift = Simulator.Drift(iid: 9, range: 20...22, step: 0.1, interval: .seconds(60))
        let simulator = Simulator(devices: [Simulator.Device(accessory: Devices.thermometer, drifts: [drift])], clock: clock, seed: 1234)
        var events = simulator.events.makeAsyncIterator()
        let run = Task { try await simulator.run() }
        await clock.waitForSleepers(1)
        var previous = 21.0
        var changes = 0
        var seen: Set<Double> = []
        for _ in 0..<200 {
            clock.advance(by: .seconds(60))
            await clock.waitForSleepers(1) // the drift has taken its step and sleeps again
            guard case .float(let current) = await value(simulator, Devices.temperature) else {
                Issue.record("the temperature is not a float")
                break
            }
            #expect(drift.range.contains(current), "\(current)")
            #expect(abs(current - previous) < 0.1 + 1e-9, "\(previous) -> \(current)")
            #expect(current == (current * 10).rounded() / 10, "\(current)")
            #expect(!String(describing: current).contains("0000"), "\(current)")
            if current != previous {
                changes += 1
                #expect(await nextEvent(&events) == .value(Devices.temperature, .float(current)))
                #expect(Value.float(current).jsonText.count <= 4, "\(Value.float(current).jsonText)")
            }
            seen.insert(current)
            previous = current
        }
        #expect(changes > 20, "only \(changes) changes in 200 steps")
        #expect(seen.count > 3)
        run.cancel()
        let result = await run.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
        // After cancellation, time passes without changes.
        let before = await value(simulator, Devices.temperature)
        clock.advance(by: .seconds(3_600))
        #expect(await value(simulator, Devices.temperature) == before)
    }

    @Test("a drift does nothing before its interval has passed")
    func driftWaits() async throws {
        let drift = Simulator.Drift(iid: 9, range: 0...100, step: 1, interval: .seconds(10))
        let simulator = Simulator(devices: [Simulator.Device(accessory: Devices.thermometer, drifts: [drift])], clock: clock, seed: 5)
        let run = Task { try await simulator.run() }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        #expect(await value(simulator, Devices.temperature) == .float(21))
        run.cancel()
        _ = await run.result
        #expect(clock.sleeperCount == 0)
    }

    @Test("a drift reflects off the edges of its range")
    func driftEdges() async throws {
        var thermometer = Devices.thermometer
        thermometer.setValue(.float(22), iid: 9)
        let drift = Simulator.Drift(iid: 9, range: 21.9...22, step: 0.1, interval: .seconds(1))
        let simulator = Simulator(devices: [Simulator.Device(accessory: thermometer, drifts: [drift])], clock: clock, seed: 99)
        let run = Task { try await simulator.run() }
        await clock.waitForSleepers(1)
        for _ in 0..<50 {
            clock.advance(by: .seconds(1))
            await clock.waitForSleepers(1)
            let current = await value(simulator, Devices.temperature)
            #expect(current == .float(22) || current == .float(21.9), "\(String(describing: current))")
        }
        run.cancel()
        _ = await run.result
    }

    @Test("several drifting characteristics run side by side and stop together")
    func severalDrifts() async throws {
        let humidity = Devices.accessory("acc-humidity", "Hygrometer", services: [
            .init(type: "humidity-sensor", characteristics: ["current-relative-humidity": .float(50)]),
        ])
        let simulator = Simulator(devices: [
            Simulator.Device(accessory: Devices.thermometer, drifts: [Simulator.Drift(iid: 9, range: 15...25, step: 0.5, interval: .seconds(30))]),
            Simulator.Device(accessory: humidity, drifts: [Simulator.Drift(iid: 9, range: 40...60, step: 1, interval: .seconds(45))]),
        ], clock: clock, seed: 3)
        let run = Task { try await simulator.run() }
        await clock.waitForSleepers(2)
        for _ in 0..<40 {
            clock.advance(by: .seconds(15))
            await clock.waitForSleepers(2)
        }
        if case .float(let temperature) = await value(simulator, Devices.temperature) {
            #expect((15...25).contains(temperature))
            #expect(temperature == (temperature * 2).rounded() / 2)
        } else {
            Issue.record("no temperature")
        }
        let humidityValue = await value(simulator, CharacteristicReference(accessoryID: "acc-humidity", iid: 9))
        if case .float(let relative) = humidityValue {
            #expect((40...60).contains(relative))
            #expect(relative == relative.rounded())
        } else {
            Issue.record("no humidity")
        }
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("run() without drifting characteristics sleeps on nothing, runs the drifts of accessories that join later, and ends when cancelled")
    func runWithoutDrifts() async throws {
        let simulator = makeSimulator([Devices.lamp])
        var events = simulator.events.makeAsyncIterator()
        let run = Task { try await simulator.run() }
        #expect(clock.sleeperCount == 0)
        let drift = Simulator.Drift(iid: 9, range: 0...40, step: 1, interval: .seconds(10))
        simulator.replaceDevices([Simulator.Device(accessory: Devices.lamp), Simulator.Device(accessory: Devices.thermometer, drifts: [drift])])
        await clock.waitForSleepers(1)
        var changed = false
        for _ in 0..<20 where !changed {
            clock.advance(by: .seconds(10))
            await clock.waitForSleepers(1)
            changed = await value(simulator, Devices.temperature) != .float(21)
        }
        #expect(changed, "the new thermometer drifts")
        if case .value(let reference, _) = await nextEvent(&events) { #expect(reference == Devices.temperature) }
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.value }
        #expect(clock.sleeperCount == 0)
    }

    // MARK: Devices replaced (the configuration reloaded)

    @Test("replaced devices: new ones join in the given order, gone ones leave, the others keep their values, reachability and behaviour")
    func replaceDevices() async throws {
        let simulator = makeSimulator([Devices.lamp, Devices.thermometer, Devices.offline])
        try await simulator.write(.int(75), to: Devices.lampBrightness)
        try await simulator.setReachable("acc-offline", true)
        try await simulator.setBehaviour("acc-offline", failStatus: .busy)
        var changedLamp = Devices.lamp
        changedLamp.setValue(.int(5), iid: 10)
        let changes = simulator.replaceDevices([Simulator.Device(accessory: Devices.button), Simulator.Device(accessory: changedLamp),
                                                Simulator.Device(accessory: Devices.offline)])
        #expect(changes == Simulator.DeviceChanges(added: ["acc-button"], removed: ["acc-thermometer"]))
        #expect(await simulator.accessories().map(\.id) == ["acc-button", "acc-lamp", "acc-offline"])
        #expect(try await simulator.read(Devices.lampBrightness) == .int(75), "a device that stays keeps its value")
        #expect(simulator.accessory("acc-offline")?.isReachable == true, "and its reachability")
        #expect(await failure { try await simulator.write(.bool(true), to: CharacteristicReference(accessoryID: "acc-offline", iid: 9)) } == .busy,
                "and its behaviour")
        #expect(simulator.serves("acc-button"))
        #expect(!simulator.serves("acc-thermometer"))
        #expect(simulator.accessory("acc-thermometer") == nil)
        #expect(await failure { try await simulator.read(Devices.temperature) } == .noSuchResource)
        #expect(simulator.replaceDevices([Simulator.Device(accessory: Devices.button), Simulator.Device(accessory: changedLamp),
                                          Simulator.Device(accessory: Devices.offline)]) == Simulator.DeviceChanges(), "the same devices: no change")
    }

    @Test("a bridge that joins brings its accessories; their reachability follows it")
    func bridgeJoins() async throws {
        let simulator = makeSimulator([Devices.lamp])
        let changes = simulator.replaceDevices(([Devices.lamp, Devices.bridge] + Devices.bridged).map { Simulator.Device(accessory: $0) })
        #expect(changes.added == ["acc-bridge", "acc-bulb-1", "acc-bulb-2", "acc-bulb-3"])
        var events = simulator.events.makeAsyncIterator()
        try await simulator.setReachable("acc-bridge", false)
        #expect(await nextEvent(&events) == .reachability("acc-bridge", reachable: false))
        for number in 1...3 {
            #expect(await nextEvent(&events) == .reachability(AccessoryID("acc-bulb-\(number)"), reachable: false))
        }
        #expect(await failure { try await simulator.read(Devices.bulbOn(2)) } == .communicationFailure)
        #expect(await simulator.accessories().map(\.isReachable) == [true, false, false, false, false])
    }

    @Test("the drift of an accessory that left stops; one that joins again drifts anew, once")
    func driftStopsWhenItLeaves() async throws {
        let drift = Simulator.Drift(iid: 9, range: 0...40, step: 1, interval: .seconds(10))
        let thermometer = Simulator.Device(accessory: Devices.thermometer, drifts: [drift])
        let simulator = makeSimulator([thermometer, Simulator.Device(accessory: Devices.lamp)])
        let run = Task { try await simulator.run() }
        await clock.waitForSleepers(1)
        simulator.replaceDevices([Simulator.Device(accessory: Devices.lamp)])
        clock.advance(by: .seconds(10)) // its drift wakes, finds it gone and ends: it never sleeps again
        simulator.replaceDevices([thermometer, Simulator.Device(accessory: Devices.lamp)])
        await clock.waitForSleepers(1)
        #expect(await value(simulator, Devices.temperature) == .float(21), "it joins with its configured value")
        clock.advance(by: .seconds(10))
        await clock.waitForSleepers(1)
        #expect(clock.sleeperCount == 1, "one drift, not two")
        run.cancel()
        _ = await run.result
        #expect(clock.sleeperCount == 0)
    }

    @Test("rounding to the step hides binary fractions", arguments: [
        (21.200000000000003, 0.1, 21.2), (21.1 + 0.1, 0.1, 21.2), (0.30000000000000004, 0.1, 0.3), (21.26, 0.5, 21.5),
        (21.24, 0.5, 21.0), (7.4, 1, 7), (-3.35, 0.1, -3.4), (1.005, 0.01, 1.0), (99.99, 0.25, 100), (0.07, 0.05, 0.05),
    ])
    func roundToStep(_ value: Double, step: Double, expected: Double) {
        let rounded = Simulator.round(value, toStep: step)
        #expect(rounded == expected)
    }
}

/// A hang guard, as the simulator's.
@Suite("Manual clock", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test("sleepers wake when the clock passes their deadline, not before")
    func wakes() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == ManualClock.Instant(offset: .seconds(5)))
    }

    @Test("a deadline in the past returns at once")
    func past() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(3)))
        #expect(clock.sleeperCount == 0)
    }

    @Test("cancellation wakes a sleeper with CancellationError")
    func cancellation() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForSleepers(1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("a task cancelled before it sleeps does not sleep")
    func cancelledBefore() async {
        let clock = ManualClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(5))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }
}

import Accessories
import Foundation
@testable import Gateway
import HomeModel
import HomeStore
import Logging
import MQTT
import TestSupport
import Wire

/// The engine in memory: a ``MemoryBus`` as its broker, the simulator as its devices, a
/// ``ManualClock`` for every deadline and latency. Commands are published as another client
/// would, and what the engine sends is read off the bus.
final class EngineHarness: Sendable {
    let bus = MemoryBus()
    let clock = ManualClock()
    let simulator: Simulator
    let gateway: Gateway
    let base = "homegate"
    private let task: Task<Void, any Error>

    /// The lab's home: a lamp (`on`, `brightness`), a temperature sensor (read-only), and a slow
    /// lamp whose writes take `latency` on the manual clock.
    static func labHome(latency: Duration) throws -> (Home, [Simulator.Device]) {
        let lamp = try AccessoryBlueprint(id: "lamp", name: "Lamp", category: .lightbulb, roomID: "office", services: [
            .init(type: "lightbulb", characteristics: ["on": .bool(false), "brightness": .int(10)]),
        ]).build()
        let sensor = try AccessoryBlueprint(id: "sensor", name: "Sensor", category: .sensor, roomID: "office", services: [
            .init(type: "temperature-sensor", characteristics: ["current-temperature": .float(21.5)]),
        ]).build()
        let slow = try AccessoryBlueprint(id: "slow", name: "Slow Lamp", category: .lightbulb, roomID: "office", services: [
            .init(type: "lightbulb", characteristics: ["on": .bool(false), "brightness": .int(10)]),
        ]).build()
        let lock = try AccessoryBlueprint(id: "lock", name: "Door", category: .doorLock, roomID: "office", services: [
            .init(type: "lock-mechanism", characteristics: ["lock-current-state": .uint(1), "lock-target-state": .uint(1)]),
        ]).build()
        let home = Home(id: "home", name: "Lab", isPrimary: true, rooms: [Room(id: "office", name: "Office")], accessories: [lamp, sensor, slow, lock])
        let devices = [Simulator.Device(accessory: lamp), Simulator.Device(accessory: sensor),
                       Simulator.Device(accessory: slow, behaviour: .init(latency: latency)), Simulator.Device(accessory: lock)]
        return (home, devices)
    }

    /// Starts the engine on the lab's home and waits until it has published the tree.
    /// - Parameter homeAssistantPrefix: Home Assistant discovery on, with this prefix.
    /// - Parameters:
    ///   - store: the engine's store (none by default);
    ///   - configure: changes to the engine's configuration (the history's, the wall clock).
    init(writeTimeout: Duration = .seconds(10), queueLimit: Int = 1000, latency: Duration = .seconds(1), homeAssistantPrefix: String? = nil,
         store: HomeStore? = nil, configure: (inout Gateway.Configuration) -> Void = { _ in }) async throws {
        let (home, devices) = try Self.labHome(latency: latency)
        simulator = Simulator(devices: devices, clock: clock, seed: 1)
        var configuration = Gateway.Configuration(baseTopic: try TopicName(base), writeTimeout: writeTimeout, queueLimit: queueLimit, clock: clock)
        configuration.homeAssistantPrefix = homeAssistantPrefix
        configure(&configuration)
        gateway = Gateway(configuration: configuration, bus: bus, driver: simulator, simulator: simulator, store: store, homes: [home],
                          logger: Logger(label: "engine-tests") { _ in SwiftLogNoOpLogHandler() })
        let gateway = gateway
        task = Task { try await gateway.run() }
        try await bus.waitUntilSubscribed()
        bus.connect()
        _ = try await bus.next(on: "\(base)/$layout")
        // `$layout` can go out before the rest of the synchronisation's retained topics, in the
        // same turn of the engine: a call into the engine (isolated, so it waits for that turn;
        // `waitUntilSubscribed()` is nonisolated and would not) runs after it.
        _ = await gateway.isConnectedToBroker
    }

    deinit { task.cancel() }

    func stop() async {
        task.cancel()
        _ = await task.result
    }

    static let lamp = "homegate/lab/office/lamp/lightbulb"
    static let lockTarget = "homegate/lab/office/door/lock-mechanism/lock-target-state"
    static let slow = "homegate/lab/office/slow-lamp/lightbulb"
    static let sensor = "homegate/lab/office/sensor/temperature-sensor/current-temperature"

    /// Publishes `payload` on `topic` and returns the acknowledgement on `topic/result`, decoded.
    func command(_ topic: String, _ payload: String, retain: Bool = false) async throws -> JSON {
        let before = bus.count(on: topic + "/result")
        try bus.publish(topic, payload, retain: retain)
        return try JSON.parse(await bus.next(on: topic + "/result", after: before).payload)
    }

    /// Publishes without waiting.
    func send(_ topic: String, _ payload: String) throws {
        try bus.publish(topic, payload)
    }

    /// The acknowledgements on `topic/result` so far, decoded.
    func acknowledgements(_ topic: String) throws -> [JSON] {
        try bus.sent.value.filter { $0.topic.string == topic + "/result" }.map { try JSON.parse($0.payload) }
    }

    /// The simulated device's own value.
    func deviceValue(_ accessory: AccessoryID, _ type: String) async throws -> Value? {
        let device = await simulator.accessories().first { $0.id == accessory }
        return device?.services.compactMap { $0.characteristic(ofType: type) }.first?.value
    }
}

extension MemoryBus {
    /// Waits until the engine has made its subscriptions.
    func waitUntilSubscribed() async throws {
        _ = try await subscribed.wait(timeout: HangGuard.standard, for: "the engine's subscriptions") { $0 ? true : nil }
    }
}

import Accessories
import Foundation
import HAP
import HAPDriver
import HomeModel
import Logging
import Testing
import TestSupport

/// The HAP driver against HAP-python: a bridge and the accessories behind it, writes, events,
/// a dead peer noticed within 5 s, and a restarted one reachable again with values refreshed.
@Suite(.serialized, .startsProcesses) struct DriverPeerTests {
    private static func driver(for peer: HAPPeer) async throws -> (HAPDriver, Task<Void, Never>) {
        let (controller, pairing) = try await pairWithPeer(peer)
        let device = HAPDriver.Device(deviceID: pairing.pairingID, publicKey: pairing.publicKey, host: peer.host, port: peer.port,
                                      name: "Test Bridge", placement: Placement(room: "Hall"))
        let driver = HAPDriver(controller: controller, devices: [device], logger: Logger(label: "test"))
        let task = Task { await driver.run() }
        return (driver, task)
    }

    private static func id(_ peer: HAPPeer, _ aid: Int) -> AccessoryID {
        HAPDriver.accessoryID(deviceID: peer.deviceID, aid: aid)
    }

    @Test func theBridgeAndEachAccessoryBehindItAreAccessoriesOfTheirOwn() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (driver, task) = try await Self.driver(for: peer)
        defer { task.cancel() }
        let accessories = try await driver.accessories()
        #expect(accessories.map(\.id) == (1...4).map { Self.id(peer, $0) })
        let bridge = try #require(accessories.first)
        #expect(bridge.category == .bridge)
        #expect(bridge.bridgeID == nil)
        for accessory in accessories.dropFirst() { #expect(accessory.bridgeID == bridge.id) }
        #expect(accessories.map(\.name) == [peer.name, "Desk Lamp", "Outdoor Sensor", "Front Door"])
        #expect(accessories[1].category == .lightbulb)
        #expect(accessories[3].category == .doorLock)
        let lamp = accessories[1]
        #expect(lamp.visibleServices.map(\.type) == ["lightbulb"])
        #expect(lamp.visibleServices.first?.characteristics.map(\.type).contains("brightness") == true)
        #expect(driver.placement(of: bridge.id) == Placement(room: "Hall"))
        #expect(driver.serves(lamp.id))
        #expect(!driver.serves(AccessoryID("sim-lamp")))
    }

    @Test func aWriteReachesTheDeviceAndAReadReturnsIt() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (driver, task) = try await Self.driver(for: peer)
        defer { task.cancel() }
        let lamp = try #require(try await driver.accessories().first { $0.name == "Desk Lamp" })
        let on = try #require(lamp.services.flatMap(\.characteristics).first { $0.type == "on" })
        let reference = CharacteristicReference(accessoryID: lamp.id, iid: on.iid)
        try await driver.write(.bool(true), to: reference)
        let received = try await peer.waitForWrite { $0.aid == 2 && $0.characteristic == "On" }
        #expect(received.valueJSON == "true")
        #expect(try await driver.read(reference) == .bool(true))
        // The lock's target is a timed-write characteristic: the driver prepares first.
        let lock = try #require(try await driver.accessories().first { $0.name == "Front Door" })
        let target = try #require(lock.services.flatMap(\.characteristics).first { $0.type == "lock-target-state" })
        try await driver.write(.uint(1), to: CharacteristicReference(accessoryID: lock.id, iid: target.iid))
        let timed = try await peer.waitForWrite { $0.aid == 4 && $0.characteristic == "LockTargetState" }
        #expect(timed.pid != nil)
    }

    @Test func theSensorsChangesArriveAsEvents() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0.3)
        defer { Task { await peer.stop() } }
        let (driver, task) = try await Self.driver(for: peer)
        defer { task.cancel() }
        let log = EventLog(driver.events)
        let sensor = Self.id(peer, 3)
        _ = try await driver.accessories()
        let arrived = await log.wait { events in events.contains { Self.isValue($0, of: sensor) } }
        #expect(arrived)
        for case .value(let reference, let value) in log.all where reference.accessoryID == sensor {
            #expect(value.number.map { (20...25).contains($0) } == true)
        }
    }

    @Test func aKilledPeerMakesEverythingBehindItUnreachableAndARestartBringsItBack() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0.3)
        defer { Task { await peer.stop() } }
        let (driver, task) = try await Self.driver(for: peer)
        defer { task.cancel() }
        let log = EventLog(driver.events)
        _ = try await driver.accessories()
        let ids = Set((1...4).map { Self.id(peer, $0) })
        let killedAt = ContinuousClock.now
        await peer.kill()
        let allUnreachable = await Self.allUnreachable(ids, in: log)
        #expect(allUnreachable, "every accessory behind the bridge is unreachable within 5 s")
        #expect(ContinuousClock.now - killedAt < .seconds(5))
        let before = log.all.count
        try await peer.restart()
        let back = await log.wait(within: .seconds(20)) { events in
            let recent = events.dropFirst(before)
            let described = recent.contains { event in
                if case .accessories(let accessories) = event { return Set(accessories.map(\.id)) == ids && accessories.allSatisfy(\.isReachable) }
                return false
            }
            return described && recent.contains { Self.isValue($0, of: Self.id(peer, 3)) }
        }
        #expect(back, "after the restart the accessories are described again, reachable, and events flow")
    }

    @Test func aSilentPeerIsNoticedByTheKeepAliveWithinFiveSeconds() async throws {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await peer.stop() } }
        let (driver, task) = try await Self.driver(for: peer)
        defer { task.cancel() }
        let log = EventLog(driver.events)
        _ = try await driver.accessories()
        let ids = Set((1...4).map { Self.id(peer, $0) })
        peer.pause()
        defer { peer.resume() }
        let frozenAt = ContinuousClock.now
        let allUnreachable = await Self.allUnreachable(ids, in: log)
        #expect(allUnreachable, "a peer that stops answering is noticed within 5 s")
        #expect(ContinuousClock.now - frozenAt < .seconds(5))
        peer.resume()
        let back = await log.wait(within: .seconds(20)) { events in
            events.contains { event in
                if case .accessories(let accessories) = event { return accessories.allSatisfy(\.isReachable) && accessories.count == 4 }
                return false
            } && events.last.map { if case .accessories = $0 { return true } else { return !Self.isUnreachable($0) } } == true
        }
        #expect(back)
    }

    /// Waits (at most 5 s) until every accessory of `ids` was reported unreachable.
    private static func allUnreachable(_ ids: Set<AccessoryID>, in log: EventLog<AccessoryEvent>) async -> Bool {
        await log.wait(within: .seconds(5)) { events in
            Set(events.compactMap { event -> AccessoryID? in
                if case .reachability(let id, false) = event { return id }
                return nil
            }).isSuperset(of: ids)
        }
    }

    private static func isUnreachable(_ event: AccessoryEvent) -> Bool {
        if case .reachability(_, false) = event { return true }
        return false
    }

    private static func isValue(_ event: AccessoryEvent, of id: AccessoryID) -> Bool {
        if case .value(let reference, _) = event { return reference.accessoryID == id }
        return false
    }
}


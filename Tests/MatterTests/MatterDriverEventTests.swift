import Accessories
import HomeModel
import Logging
import Matter
import Testing
import Wire
@testable import MatterDriver

@Suite(.timeLimit(.minutes(1))) struct MatterDriverEventTests {
    /// A driver that has been told of `fixture`'s node (as after the server's node list).
    static func driver(with fixture: String) throws -> (MatterDriver, NodeData) {
        let driver = MatterDriver(configuration: .init(server: Client.Configuration(url: "ws://127.0.0.1:1/ws")), logger: Logger(label: "test"))
        driver.state.withLock { $0.fabric = 1 }
        let node = try NodeMappingTests.node(fixture)
        driver.describe(node)
        return (driver, node)
    }

    @Test("a Generic Switch's MultiPressComplete: a device-event on $events and a double press on the programmable switch")
    func switchPress() async throws {
        let (driver, node) = try Self.driver(with: "generic_switch_multi")
        var events = driver.events.makeAsyncIterator()
        guard case .accessories(let accessories)? = await events.next() else { Issue.record("no accessories"); return }
        // Endpoint 1's switch (the dump's endpoint 0 also lists Switch, without features).
        let switchService = try #require(accessories.first?.services.first { $0.type == "stateless-programmable-switch" && $0.iid >> 16 == 2 })
        let endpoint = 1
        driver.handle(.nodeEvent(NodeEvent(nodeID: node.nodeID, endpoint: endpoint, cluster: 0x3B, event: 6,
                                           data: ["previousPosition": 1, "totalNumberOfPressesCounted": 2])))
        guard case .deviceEvent(let id, let kind, let fields)? = await events.next() else { Issue.record("no device event"); return }
        #expect(id == accessories.first?.id)
        #expect(kind == "Switch: Multi Press Complete")
        #expect(fields["totalNumberOfPressesCounted"] == .int(2) && fields["endpoint"] == .int(Int64(endpoint)))
        guard case .value(let reference, let value)? = await events.next() else { Issue.record("no switch value"); return }
        #expect(reference.iid == switchService.iid + 1 && value == .uint(1))
    }

    @Test("an attribute report is passed on even when the driver's copy already had it; a bridged device's Reachable is its reachability")
    func reports() async throws {
        let (driver, node) = try Self.driver(with: "fritz_bridge")
        var events = driver.events.makeAsyncIterator()
        guard case .accessories(let accessories)? = await events.next() else { Issue.record("no accessories"); return }
        #expect(accessories.count >= 2 && accessories.dropFirst().allSatisfy { $0.bridgeID == accessories.first?.id })
        let reachable = try #require(node.attributes.keys.first { $0.cluster == 0x39 && $0.attribute == 0x11 })
        driver.handle(.attributeUpdated(node: node.nodeID, reachable, .bool(false)))
        guard case .reachability(let id, let flag)? = await events.next() else { Issue.record("no reachability"); return }
        #expect(!flag && id.rawValue.hasSuffix("-\(reachable.endpoint)"))
    }
}

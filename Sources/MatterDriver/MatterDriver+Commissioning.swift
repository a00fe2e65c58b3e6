import Accessories
import HomeModel
import Matter
import Wire

/// Commissioning and removing Matter devices through the Matter Server, and the commissionable
/// devices it finds.
extension MatterDriver {
    /// Why commissioning or removing failed: a management error code (`invalid-request`,
    /// `busy`, `device-error`, `timeout`, `not-found`) and a message.
    public struct CommissionError: Error, CustomStringConvertible {
        public let code: String
        public let message: String

        public var description: String { message }
    }

    /// Commissions a device onto the server's fabric with its setup code (a manual code, Apple
    /// Home's "Turn On Pairing Mode" code for a device that stays in Apple Home, or an `MT:` QR
    /// payload) and waits until the server has interviewed it; its accessories go to `placement`.
    /// - Returns: the ids of its accessories.
    public func commission(_ code: SetupCode, placement: Placement) async throws(CommissionError) -> [AccessoryID] {
        let connection = try claimCommissioning(placement)
        defer { state.withLock { $0.commissioning = nil } }
        let result: JSON
        do {
            result = try await connection.send("commission_with_code", ["code": .string(code.text), "network_only": .bool(!connection.info.bluetoothEnabled)],
                                               timeout: configuration.server.commissionTimeout)
        } catch {
            throw Self.commissionError(error, doing: "commissioning")
        }
        let node: NodeData
        do {
            node = try NodeData(json: result)
        } catch {
            throw CommissionError(code: "device-error", message: "the Matter Server commissioned a node but described it oddly: \(error)")
        }
        logger.info("Matter: commissioned node \(node.nodeID) with \(code)")
        // The server's node_added may come before or after this answer: the node is described
        // here too (the same accessories; the engine takes them once).
        state.withLock { state in
            if let fabric = state.fabric { state.placements[NodeMapping.accessoryID(fabric: fabric, node: node.nodeID).rawValue] = placement }
        }
        describe(node)
        return state.withLock { $0.mappings[node.nodeID]?.accessories.map(\.id) ?? [] }
    }

    /// Removes the node `accessory` belongs to from the server's fabric (HomeGate's only: a
    /// device shared from Apple Home stays there). Its accessories leave the home.
    public func decommission(_ accessory: AccessoryID) async throws(CommissionError) {
        let found = state.withLock { state in
            (state.connection, state.mappings.first { $0.value.accessories.contains { $0.id == accessory } }?.key)
        }
        guard let node = found.1 else { throw CommissionError(code: "not-found", message: "\(accessory) is not an accessory of a Matter node") }
        guard let connection = found.0 else { throw CommissionError(code: "device-error", message: "the Matter Server cannot be reached") }
        do {
            _ = try await connection.send("remove_node", ["node_id": .uint(node)], timeout: .seconds(60))
        } catch {
            throw Self.commissionError(error, doing: "removing node \(node)")
        }
        logger.info("Matter: removed node \(node) from the fabric")
        handle(.nodeRemoved(node))
    }

    /// Matter devices in commissioning mode on the network (the server's `discover`, mDNS
    /// `_matterc._udp`), as the accessory browser lists them (transport `matter`).
    public func commissionable() async throws(CommissionError) -> [FoundAccessory] {
        guard let connection = state.withLock({ $0.connection }) else {
            throw CommissionError(code: "device-error", message: "the Matter Server cannot be reached")
        }
        let result: JSON
        do {
            result = try await connection.send("discover", timeout: .seconds(30))
        } catch {
            throw Self.commissionError(error, doing: "discovering")
        }
        return (result.array ?? []).map(Self.found)
    }

    /// One entry of the server's `discover` answer as the accessory browser lists it.
    public static func found(_ entry: JSON) -> FoundAccessory {
        let discriminator = entry["long_discriminator"]?.int.map(String.init) ?? "?"
        let vendor = entry["vendor_id"]?.int.map { String($0, radix: 16, uppercase: true) } ?? "?"
        let product = entry["product_id"]?.int.map { String($0, radix: 16, uppercase: true) } ?? "?"
        let name = entry["device_name"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? entry["instance_name"]?.string ?? "Matter device"
        return FoundAccessory(deviceID: entry["instance_name"]?.string ?? "matter-\(discriminator)", name: name,
                              model: "VID 0x\(vendor) PID 0x\(product), discriminator \(discriminator)",
                              category: nil, host: entry["addresses"]?.array?.first?.string ?? entry["host_name"]?.string ?? "",
                              port: entry["port"]?.int.map(Int.init) ?? 5540, isPaired: false, transport: "matter")
    }

    private func claimCommissioning(_ placement: Placement) throws(CommissionError) -> Connection {
        let claimed = state.withLock { state -> Result<Connection, CommissionError> in
            guard let connection = state.connection else {
                return .failure(CommissionError(code: "device-error", message: "the Matter Server (\(configuration.server.url)) cannot be reached"))
            }
            guard state.commissioning == nil else {
                return .failure(CommissionError(code: "busy", message: "a Matter commissioning is under way; try again when it has finished"))
            }
            state.commissioning = placement
            return .success(connection)
        }
        return try claimed.get()
    }

    /// A server error of commissioning or removing, as a management error and a sentence.
    public static func commissionError(_ error: ServerError, doing what: String) -> CommissionError {
        switch error {
        case .timedOut: CommissionError(code: "timeout", message: "the Matter Server did not finish \(what) in time")
        case .refused(.nodeCommissionFailed, let details):
            CommissionError(code: "device-error", message: "commissioning failed: \(details) (is the device in pairing mode, on this network, and the code right?)")
        case .refused(.nodeNotExists, let details): CommissionError(code: "not-found", message: details)
        case .refused(.invalidArguments, let details): CommissionError(code: "invalid-request", message: details)
        default: CommissionError(code: "device-error", message: "\(what): \(error)")
        }
    }
}

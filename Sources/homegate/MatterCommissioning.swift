import Accessories
import Foundation
import HomeGateConfig
import Logging
import Matter
import MatterDriver
import Wire

/// `homegate pair --matter CODE`: commissions a Matter device onto the fabric of the Matter
/// Server the configuration names (`matter:`), which keeps the node; a running gateway brings
/// its accessories in as soon as the server announces it.
enum MatterCommissioning {
    static func commission(_ text: String, config: String, dataDirectory: String?) async throws {
        let code = try SetupCode(text)
        let overrides = ConfigFile.Overrides(dataDirectory: dataDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        let file = try loadConfigFileOrExit(config, overrides: overrides)
        guard let settings = file.matter else {
            printError("\(config) has no matter: section (the Matter Server to commission through)")
            throw HomeGateExit.configuration
        }
        let logger = Logger(label: "homegate", factory: { StreamLogHandler.standardError(label: $0) })
        let server = Client.Configuration(url: settings.url)
        do {
            let node = try await Client.withConnection(server, logger: logger) { connection in
                let result = try await connection.send("commission_with_code", ["code": .string(code.text), "network_only": .bool(!connection.info.bluetoothEnabled)],
                                                       timeout: server.commissionTimeout)
                return try NodeData(json: result)
            }
            let name = node[0, 0x28, 5]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? node[0, 0x28, 3]?.string ?? "Matter node \(node.nodeID)"
            print("commissioned \(name) as node \(node.nodeID) on the Matter Server at \(settings.url)")
            print("a running gateway connected to it brings the device in at once; otherwise at its next start")
        } catch let error as ServerError {
            printError("commissioning failed: \(MatterDriver.commissionError(error, doing: "commissioning").message)")
            throw error.isUnreachable ? HomeGateExit.refused : HomeGateExit.ioError
        }
    }
}

extension MatterCommissioning {
    /// `homegate discover --config FILE`: the Matter devices in commissioning mode the server of
    /// the configuration's `matter:` section finds (its `discover`, about 5 s), listed as the
    /// HAP accessories are (transport `matter`; the id is the device's mDNS instance name).
    static func commissionable(config: String) async throws -> [FoundAccessory] {
        let file = try loadConfigFileOrExit(config, overrides: ConfigFile.Overrides())
        guard let settings = file.matter else {
            printError("\(config) has no matter: section (the Matter Server to ask)")
            throw HomeGateExit.configuration
        }
        let logger = Logger(label: "homegate", factory: { StreamLogHandler.standardError(label: $0) })
        do {
            let result = try await Client.withConnection(Client.Configuration(url: settings.url), logger: logger) { connection in
                try await connection.send("discover", timeout: .seconds(30))
            }
            return (result.array ?? []).map(MatterDriver.found)
        } catch let error as ServerError {
            printError("the Matter Server at \(settings.url): \(error)")
            throw error.isUnreachable ? HomeGateExit.refused : HomeGateExit.ioError
        }
    }
}

extension ServerError {
    var isUnreachable: Bool {
        if case .unreachable = self { return true }
        return false
    }
}

extension Optional {
    /// The wrapped value transformed by an async function, or nil.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

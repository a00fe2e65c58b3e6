import Foundation

/// Real Matter devices on a real Matter Server: `Tests/Fixtures/matter/live/matter_lab.py`
/// (python-matter-server 8.1.2 and CircuitMatter 0.4.1 lights, with the lab's documented patches
/// to CircuitMatter, in network namespaces of the lab's own; see its README). The server's
/// WebSocket is forwarded to 127.0.0.1; the devices are commissioned by their QR payloads.
///
/// Needs root (network namespaces) and `scripts/setup --matter`.
public final class MatterLab: @unchecked Sendable {
    /// A device of the lab.
    public struct Device: Sendable {
        public let name: String
        /// `onoff`, `dimmable`, `ct` or `color`.
        public let kind: String
        /// Its QR payload (`MT:...`).
        public let qr: String
        /// Its 11-digit manual pairing code.
        public let manual: String
        /// The UDP port it listens on (5541, 5542, ...).
        public let port: Int
    }

    /// `ws://127.0.0.1:PORT/ws`.
    public let url: String
    public let devices: [Device]
    private let process: ChildProcess

    /// Starts the lab with devices of `kinds`. `subscriptionCeiling` (seconds) lowers the server's
    /// maximum report interval, and so how soon a silent device counts as unavailable (stock:
    /// 60 s and about 170 s to unavailable).
    public static func start(kinds: [String], folder: URL, subscriptionCeiling: Int? = nil) async throws -> MatterLab {
        let python = try MatterZooServer.locatePython()
        var arguments = [MatterZooServer.folder.appendingPathComponent("live/matter_lab.py").path, "up",
                         "--workdir", folder.appendingPathComponent("lab").path, "--devices", kinds.joined(separator: ",")]
        if let subscriptionCeiling { arguments += ["--sub-max-interval", String(subscriptionCeiling), "--unavailable-after", "0"] }
        let process = try ChildProcess(python, arguments, environment: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"], input: true)
        let line = try await process.output.wait(timeout: .seconds(120), for: "matter_lab.py's ready line") { text -> String? in
            if let ready = HAPPeer.completeLines(of: text).first(where: { $0.hasPrefix("{\"ws\"") }) { return ready }
            return process.exit.value != nil ? "" : nil
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let url = object["ws"] as? String else {
            process.signal(SIGKILL)
            throw FixtureError("matter_lab.py did not start: \(process.output.value.suffix(4000))")
        }
        let devices = (object["devices"] as? [[String: Any]] ?? []).compactMap { entry -> Device? in
            guard let name = entry["name"] as? String, let kind = entry["kind"] as? String, let qr = entry["qr"] as? String,
                  let manual = entry["manual"] as? String else { return nil }
            return Device(name: name, kind: kind, qr: qr, manual: manual, port: entry["port"] as? Int ?? 0)
        }
        return MatterLab(url: url, devices: devices, process: process)
    }

    private init(url: String, devices: [Device], process: ChildProcess) {
        self.url = url
        self.devices = devices
        self.process = process
    }

    deinit {
        process.signal(SIGTERM)
    }

    /// The first device of `kind`.
    public func device(_ kind: String) throws -> Device {
        guard let device = devices.first(where: { $0.kind == kind }) else { throw FixtureError("the lab has no \(kind) device") }
        return device
    }

    /// Sends a control line (`toggle NAME`, `on NAME`, `state NAME`, `stop NAME`, `start NAME`,
    /// ...) and returns its JSON answer.
    @discardableResult
    public func control(_ line: String) async throws -> [String: Any] {
        let before = Self.answers(process.output.value).count
        try process.writeInput(line + "\n")
        let answer = try await process.output.wait(timeout: HangGuard.standard, for: "matter_lab.py to answer \(line)") { text -> String? in
            let answers = Self.answers(text)
            return answers.count > before ? answers[before] : nil
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], object["ok"] as? Bool == true else {
            throw FixtureError("matter_lab.py refused \(line): \(answer)")
        }
        return object
    }

    /// Tears the lab down (devices, server, namespaces) and waits for it.
    public func stop() async {
        process.signal(SIGTERM)
        _ = try? await process.waitForExit(timeout: .seconds(30))
    }

    /// Everything the lab printed.
    public var logText: String { process.output.value }

    private static func answers(_ text: String) -> [String] {
        HAPPeer.completeLines(of: text).filter { $0.hasPrefix("{\"ok\"") }
    }
}

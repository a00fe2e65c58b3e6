import Foundation

/// The real Matter Server (python-matter-server 8.1.2 and its CHIP SDK) with real devices' node
/// dumps imported (Home Assistant's Matter fixtures, `Tests/Fixtures/matter/zoo/nodes/`), run by
/// `Tests/Fixtures/matter/zoo_server.py` on 127.0.0.1 with its storage in a folder of its own.
///
/// Imported nodes are test nodes (ids from 900000): the server answers their commands and
/// attribute writes with success and keeps them in memory only, so ``startServer()`` imports
/// them again after ``stopServer()``.
public final class MatterZooServer: @unchecked Sendable {
    /// `ws://127.0.0.1:PORT/ws`.
    public let url: String
    /// Each fixture's node id on the server.
    public let nodes: [String: UInt64]
    /// The server's storage folder; its log (debug level) is `server.log` there.
    public let storage: URL
    private let process: ChildProcess

    /// The node dumps of the zoo, by name (the file names without `.json`), sorted.
    public static func fixtures() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("zoo/nodes").path)
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// A fixture's node dump as the JSON object Home Assistant keeps.
    public static func dump(of fixture: String) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent("zoo/nodes/\(fixture).json"))
        guard let node = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FixtureError("\(fixture).json is not a node dump")
        }
        return node
    }

    /// Starts the server with `fixtures` imported and waits until it answers.
    public static func start(fixtures: [String], folder storage: URL) async throws -> MatterZooServer {
        let python = try locatePython()
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try FreePort.next()
            let serverStorage = storage.appendingPathComponent("matter-\(port)")
            let process = try ChildProcess(python, [folder.appendingPathComponent("zoo_server.py").path, "--port", String(port),
                                                    "--storage", serverStorage.path] + fixtures,
                                           environment: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"], input: true)
            do {
                let ready = try await readyLine(process, number: 1)
                return MatterZooServer(url: ready.url, nodes: ready.nodes, storage: serverStorage, process: process)
            } catch {
                process.signal(SIGKILL)
                lastError = error // most likely the port was taken in between: try another
            }
        }
        throw lastError ?? FixtureError("zoo_server.py did not start")
    }

    private init(url: String, nodes: [String: UInt64], storage: URL, process: ChildProcess) {
        self.url = url
        self.nodes = nodes
        self.storage = storage
        self.process = process
    }

    deinit {
        process.signal(SIGKILL)
    }

    /// The server's log so far.
    public func logText() -> String {
        (try? String(contentsOf: storage.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Whether the server's log has a line containing every one of `parts` (a command it took:
    /// the server logs a test node's command before it answers, unbuffered).
    public func logHasLine(_ parts: [String]) -> Bool {
        logText().split(separator: "\n").contains { line in parts.allSatisfy { line.contains($0) } }
    }

    /// Stops the Matter Server (the script stays, to start it again).
    public func stopServer() async throws {
        let before = Self.lines(process.output.value, containing: "\"stopped\": true")
        try process.writeInput("stop\n")
        _ = try await process.output.wait(timeout: HangGuard.standard, for: "the Matter Server to stop") { text in
            Self.lines(text, containing: "\"stopped\": true") > before ? true : nil
        }
    }

    /// Starts the Matter Server again, with the same dumps imported again.
    public func startServer() async throws {
        let before = Self.lines(process.output.value, containing: "\"ready\": true")
        try process.writeInput("start\n")
        _ = try await Self.readyLine(process, number: before + 1)
    }

    /// The node ids the server has now (its own `get_nodes`).
    public func nodeIDs() async throws -> [UInt64] {
        let before = Self.lines(process.output.value, containing: "{\"nodes\": [")
        try process.writeInput("nodes\n")
        let line = try await process.output.wait(timeout: HangGuard.standard, for: "the Matter Server's nodes") { text -> String? in
            let lines = HAPPeer.completeLines(of: text).filter { $0.contains("{\"nodes\": [") }
            return lines.count > before ? lines[before] : nil
        }
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return (object?["nodes"] as? [[String: Any]] ?? []).compactMap { ($0["node_id"] as? NSNumber)?.uint64Value }
    }

    /// Stops the server and the script.
    public func stop() async {
        try? process.writeInput("quit\n")
        await process.stop()
    }

    private struct Ready {
        let url: String
        let nodes: [String: UInt64]
    }

    private static func readyLine(_ process: ChildProcess, number: Int) async throws -> Ready {
        let line = try await process.output.wait(timeout: HangGuard.standard, for: "zoo_server.py's ready line") { text -> String? in
            let ready = HAPPeer.completeLines(of: text).filter { $0.contains("\"ready\": true") }
            if ready.count >= number { return ready[number - 1] }
            if process.exit.value != nil { return "" }
            return nil
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let url = object["url"] as? String else {
            throw FixtureError("zoo_server.py did not start the Matter Server: \(process.output.value.suffix(3000))")
        }
        let nodes = (object["nodes"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.uint64Value }
        return Ready(url: url, nodes: nodes)
    }

    private static func lines(_ text: String, containing marker: String) -> Int {
        HAPPeer.completeLines(of: text).filter { $0.contains(marker) }.count
    }

    static var folder: URL {
        PackageRoot.url.appendingPathComponent("Tests/Fixtures/matter")
    }

    /// The Matter venv's python (`scripts/setup --matter`).
    static func locatePython() throws -> String {
        let python = PackageRoot.url.appendingPathComponent(".venv-matter/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python),
              FileManager.default.isExecutableFile(atPath: PackageRoot.url.appendingPathComponent(".venv-matter/bin/matter-server").path) else {
            throw FixtureError("the Matter Server is not installed at .venv-matter: run scripts/setup --matter (python-matter-server 8.1.2 on pyenv's Python 3.12)")
        }
        return python
    }
}

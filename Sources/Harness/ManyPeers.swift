import Foundation

/// Many HomeKit accessories in one process: `Tests/Fixtures/hap/many_peers.py`, N HAP-python
/// 5.0.0 accessory servers on one asyncio loop, each on its own port of 127.0.0.1 (picked by the
/// kernel) with its own device id, keys and pairings, without mDNS.
///
/// Each serves one standalone accessory (aid 1) named "Lamp 000", "Lamp 001", ...: a Lightbulb
/// with On and Brightness. Writes are reported (``writes()``); ``set(_:json:peer:)`` makes every
/// peer (or one) change a value by itself, an EVENT to subscribed controllers.
public final class ManyPeers: @unchecked Sendable {
    /// One accessory server.
    public struct Peer: Sendable, Equatable {
        public let index: Int
        public let port: Int
        /// Its device id (pairing identifier, `XX:XX:XX:XX:XX:XX`).
        public let deviceID: String
        /// The accessory's name ("Lamp 007").
        public let name: String
    }

    /// A value a client wrote to a peer.
    public struct Write: Sendable, Equatable {
        public let index: Int
        /// `On` or `Brightness`.
        public let characteristic: String
        /// The value's JSON text as the peer printed it (`true`, `42`).
        public let valueJSON: String
    }

    public let host = "127.0.0.1"
    /// The setup code of every peer.
    public let pincode: String
    /// The peers, by index.
    public let peers: [Peer]
    private let process: ChildProcess

    /// Starts `count` peers and waits until every one listens.
    public static func start(count: Int, pincode: String = "031-45-154", timeout: Duration = .seconds(60)) async throws -> ManyPeers {
        let python = try HAPPeer.locatePython()
        let script = PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/many_peers.py").path
        let process = try ChildProcess(python, [script, "--count", String(count), "--pincode", pincode],
                                       environment: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"], input: true)
        do {
            _ = try await process.output.wait(timeout: timeout, for: "many_peers.py to print its ready line") { text -> Bool? in
                HAPPeer.completeLines(of: text).contains { $0.hasPrefix("{\"event\": \"ready\"") || $0.hasPrefix("{\"event\": \"error\"") } ? true : nil
            }
        } catch {
            process.signal(SIGKILL)
            throw FixtureError("many_peers.py did not get ready within \(timeout): \(process.output.value.suffix(4000))")
        }
        let peers = HAPPeer.completeLines(of: process.output.value).compactMap(Self.peer(in:)).sorted { $0.index < $1.index }
        guard peers.count == count else {
            process.signal(SIGKILL)
            throw FixtureError("many_peers.py started \(peers.count) of \(count) peers: \(process.output.value.suffix(4000))")
        }
        return ManyPeers(pincode: pincode, peers: peers, process: process)
    }

    private init(pincode: String, peers: [Peer], process: ChildProcess) {
        self.pincode = pincode
        self.peers = peers
        self.process = process
    }

    deinit {
        process.signal(SIGKILL)
    }

    /// The process's id (one process for all the peers).
    public var pid: pid_t { process.pid }

    /// Stops every peer (SIGTERM) and waits for the process to exit; SIGKILL if it has not within 10 s.
    public func stop() async {
        await process.stop()
    }

    /// Everything it printed: JSON event lines and HAP-python's warnings.
    public func logText() -> String {
        process.output.value
    }

    /// Every write a client made so far, in order.
    public func writes() -> [Write] {
        HAPPeer.completeLines(of: logText()).compactMap(Self.write(in:))
    }

    /// Waits until `predicate` holds for the writes so far; returns them.
    @discardableResult
    public func waitForWrites(timeout: Duration = .seconds(30), until predicate: @escaping @Sendable ([Write]) -> Bool) async throws -> [Write] {
        do {
            return try await process.output.wait(timeout: timeout, for: "writes to the peers") { text in
                let writes = HAPPeer.completeLines(of: text).compactMap(Self.write(in:))
                return predicate(writes) ? writes : nil
            }
        } catch {
            throw FixtureError("waited \(timeout) for writes to the peers; they have \(writes().count); the peers printed:\n\(logText().suffix(4000))")
        }
    }

    /// How many peers reported a pairing so far.
    public func pairedCount() -> Int {
        HAPPeer.completeLines(of: logText()).filter { $0.hasPrefix("{\"event\": \"paired\"") }.count
    }

    /// Every peer (or only peer `index`) changes `characteristic` (`Brightness` or `On`) to the
    /// JSON value `json` by itself: an EVENT to each subscribed controller, sent at once.
    public func set(_ characteristic: String, json: String, peer index: Int? = nil) async throws {
        let target = index.map { ", \"index\": \($0)" } ?? ""
        try await control("{\"command\": \"set\", \"characteristic\": \"\(characteristic)\", \"value\": \(json)\(target)}")
    }

    /// Sends one control line and waits for its answer, the next `done` or `error` line.
    private func control(_ line: String) async throws {
        let answered = Self.answers(in: process.output.value).count
        try process.writeInput(line + "\n")
        let answer: String
        do {
            answer = try await process.output.wait(timeout: HangGuard.standard, for: "many_peers.py to answer \(line)") { text in
                let answers = Self.answers(in: text)
                return answers.count > answered ? answers[answered] : nil
            }
        } catch {
            throw FixtureError("many_peers.py did not answer \(line); it printed:\n\(logText().suffix(4000))")
        }
        guard answer.contains("\"event\": \"done\"") else { throw FixtureError("many_peers.py refused \(line): \(answer)") }
    }

    private static func answers(in text: String) -> [String] {
        HAPPeer.completeLines(of: text).filter { $0.hasPrefix("{\"event\": \"done\"") || $0.hasPrefix("{\"event\": \"error\"") }
    }

    private static func peer(in line: String) -> Peer? {
        guard line.hasPrefix("{\"event\": \"peer\""), let members = HAPPeerJSON.members(of: line),
              let index = members["index"].flatMap({ Int($0) }), let port = members["port"].flatMap({ Int($0) }),
              let id = members["id"].flatMap(HAPPeerJSON.string), let name = members["name"].flatMap(HAPPeerJSON.string) else { return nil }
        return Peer(index: index, port: port, deviceID: id, name: name)
    }

    private static func write(in line: String) -> Write? {
        guard line.hasPrefix("{\"event\": \"write\""), let members = HAPPeerJSON.members(of: line),
              let index = members["index"].flatMap({ Int($0) }), let characteristic = members["characteristic"].flatMap(HAPPeerJSON.string),
              let value = members["value"] else { return nil }
        return Write(index: index, characteristic: characteristic, valueJSON: value)
    }
}

import Foundation

/// A real device's accessory database served over real HAP: `Tests/Fixtures/hap/zoo_peer.py`,
/// HAP-python 5.0.0 doing the protocol with the captured database (aiohomekit's fixtures in
/// `Tests/Fixtures/hap/zoo/`) in place of its own accessories, on 127.0.0.1 without mDNS.
///
/// Writes to characteristics with `pw` are taken and pushed as events to other controllers;
/// ``set(aid:iid:json:)`` changes a value as the device would by itself; ``refuseEvents(_:)``
/// makes it refuse event subscriptions (-70406); ``serveGarbage(_:)`` makes `GET /accessories`
/// answer a database no controller can use.
public final class ZooPeer: @unchecked Sendable {
    /// The fixture's name (`eve_energy`).
    public let database: String
    public let port: Int
    public let host = "127.0.0.1"
    public let pincode: String
    /// Its device id (pairing identifier).
    public let deviceID: String
    private let script: PeerScript

    /// The fixtures of the zoo, by name (the file names without `.json`), sorted.
    public static func databases() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// The captured accessories of fixture `name`, as the JSON array aiohomekit keeps.
    public static func accessories(of name: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: folder.appendingPathComponent("\(name).json"))
        guard let accessories = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw FixtureError("\(name).json is not a JSON array of accessories")
        }
        return accessories
    }

    /// Starts a peer serving fixture `database` and waits until it listens.
    public static func start(database: String, pincode: String = "031-45-154", garbage: Bool = false) async throws -> ZooPeer {
        let python = try HAPPeer.locatePython()
        let script = PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/zoo_peer.py").path
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try FreePort.next()
            var arguments = [script, "--port", String(port), "--pincode", pincode,
                             "--database", folder.appendingPathComponent("\(database).json").path]
            if garbage { arguments.append("--garbage") }
            do {
                let (process, ready) = try await HAPPeer.launch(python: python, arguments: arguments, input: true)
                return ZooPeer(database: database, port: port, pincode: pincode, deviceID: ready.id, process: process)
            } catch {
                lastError = error // most likely the port was taken in between: try another
            }
        }
        throw lastError ?? FixtureError("zoo_peer.py did not start")
    }

    private init(database: String, port: Int, pincode: String, deviceID: String, process: ChildProcess) {
        self.database = database
        self.port = port
        self.pincode = pincode
        self.deviceID = deviceID
        self.script = PeerScript(name: "zoo_peer.py", serving: database, process: process)
    }

    deinit {
        script.process.signal(SIGKILL)
    }

    private static var folder: URL {
        PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/zoo")
    }

    /// Stops the peer (SIGTERM) and waits for it to exit.
    public func stop() async {
        await script.stop()
    }

    /// Everything it printed: JSON event lines and HAP-python's warnings.
    public func logText() -> String {
        script.logText
    }

    /// The first complete line printed so far that matches `predicate`, else the first that
    /// arrives within `timeout`.
    @discardableResult
    public func waitForLine(timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await script.waitForLine(timeout: timeout, where: predicate)
    }

    /// The device changes characteristic `aid`.`iid` to the JSON value `json` by itself (an
    /// EVENT to subscribed controllers).
    public func set(aid: Int, iid: Int, json: String) async throws {
        try await control("{\"command\": \"set\", \"aid\": \(aid), \"iid\": \(iid), \"value\": \(json)}")
    }

    /// Refuses (or accepts again) every later event subscription with -70406.
    public func refuseEvents(_ on: Bool) async throws {
        try await control("{\"command\": \"refuse-events\", \"on\": \(on)}")
    }

    /// Makes `GET /accessories` answer an unusable database (or the real one again).
    public func serveGarbage(_ on: Bool) async throws {
        try await control("{\"command\": \"garbage\", \"on\": \(on)}")
    }

    /// Another controller pairs with the device (as an iPhone's Home or a second Home Assistant
    /// would): `controller` its pairing id (a UUID), admin or not.
    public func addPairing(controller: String, admin: Bool) async throws {
        try await control("{\"command\": \"add-pairing\", \"controller\": \"\(controller)\", \"admin\": \(admin)}")
    }

    /// Makes one step fail once, the next time it comes: `verify` (pair-verify refused) or
    /// `database` (`GET /accessories` unusable).
    public func breakOnce(_ step: String) async throws {
        try await control("{\"command\": \"break\", \"step\": \"\(step)\"}")
    }

    /// Makes `GET /accessories` hostile from now on (`malformed`, `deep`, `huge`, `many`; see
    /// zoo_peer.py), or peaceful again with nil.
    public func hostile(_ mode: String?) async throws {
        try await control(mode.map { "{\"command\": \"hostile\", \"mode\": \"\($0)\"}" } ?? "{\"command\": \"peaceful\"}")
    }

    /// Closes every controller's connection (they reconnect and read the database again).
    public func dropConnections() async throws {
        try await control("{\"command\": \"drop\"}")
    }

    /// Sends subscribed controllers an EVENT for a characteristic that does not exist (aid 99, iid 99).
    public func sendUnknownEvent() async throws {
        try await control("{\"command\": \"unknown-event\"}")
    }

    /// Misbehaves on the wire from now on: `silent`, `slow` (`seconds` late), `endless-chunked`, `bad-tag`; nil ends it.
    public func misbehave(_ mode: String?, seconds: Double = 3) async throws {
        try await control("{\"command\": \"misbehave\", \"mode\": \(mode.map { "\"\($0)\"" } ?? "null"), \"seconds\": \(seconds)}")
    }

    /// Sends `count` EVENTs (values 0 to count - 1) of one characteristic as fast as it can.
    public func eventFlood(aid: Int, iid: Int, count: Int) async throws {
        try await control("{\"command\": \"event-flood\", \"aid\": \(aid), \"iid\": \(iid), \"count\": \(count)}")
    }

    /// Moves the device's clock for Adaptive Lighting `milliseconds` ahead: a bulb following a
    /// transition sets the colour temperature of its new time at once (zoo_peer.py).
    public func advance(milliseconds: Int) async throws {
        try await control("{\"command\": \"advance\", \"ms\": \(milliseconds)}")
    }

    private func control(_ line: String) async throws {
        try await script.control(line)
    }
}

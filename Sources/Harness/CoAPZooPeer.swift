import Foundation

/// A Thread device's captured accessory database served over HAP over CoAP:
/// `Tests/Fixtures/hap/coap_peer.py` (aiocoap 0.4.17 on UDP, `[::1]`, a free port, no mDNS)
/// serving one of the zoo's fixtures (`airversa_ap2`, `nanoleaf_bulb`, `eve_energy`) as aid 1.
///
/// `coap_crosscheck.py` proves the peer against aiohomekit 4.0.1's CoAP controller
/// (``runCrossCheck(fixtures:timeout:)``); docs/hap.md ("HAP over CoAP, as served by the test
/// peer") has the wire facts. Writes are taken and pushed as events to the other subscribed
/// sessions; ``set(aid:iid:json:)`` changes a value as the device would by itself;
/// ``refuseEvents(_:)`` refuses subscriptions (PDU status 1); ``drop()`` forgets every session
/// (later requests answer 4.04); ``misbehave(_:seconds:)`` goes silent, slow or sends bad tags.
public final class CoAPZooPeer: @unchecked Sendable {
    /// The fixture's name (`nanoleaf_bulb`).
    public let database: String
    /// The address it serves on.
    public let host = "::1"
    /// The UDP port it took.
    public let port: Int
    public let pincode: String
    /// Its device id (pairing identifier), kept in ``stateFile``.
    public let deviceID: String
    /// Its identity and pairings; a peer started again with the same file keeps both.
    public let stateFile: URL
    private let script: PeerScript

    /// Starts a peer serving fixture `database` and waits until it listens.
    ///
    /// - Parameters:
    ///   - stateFile: its identity and pairings; a new file in a temporary folder if nil.
    ///   - mac: a fixed device id (`AA:BB:CC:DD:EE:FF`) for a new state file.
    public static func start(database: String, pincode: String = "031-45-154", stateFile: URL? = nil, mac: String? = nil) async throws -> CoAPZooPeer {
        let python = try HAPPeer.locatePython()
        let stateFile = try stateFile ?? TemporaryDirectory.make(prefix: "coap-peer").appendingPathComponent("accessory.state")
        var arguments = [script("coap_peer.py").path, "--port", "0", "--pincode", pincode, "--state", stateFile.path,
                         "--database", PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/zoo/\(database).json").path]
        if let mac { arguments += ["--mac", mac] }
        let (process, ready) = try await HAPPeer.launch(python: python, arguments: arguments, input: true)
        guard let line = HAPPeer.completeLines(of: process.output.value).first(where: { $0.hasPrefix("{\"event\": \"ready\"") }),
              let port = HAPPeerJSON.members(of: line)?["port"].flatMap({ Int($0) }) else {
            process.signal(SIGKILL)
            throw FixtureError("coap_peer.py's ready line has no port: \(process.output.value.suffix(2000))")
        }
        return CoAPZooPeer(database: database, port: port, pincode: pincode, deviceID: ready.id, stateFile: stateFile, process: process)
    }

    private init(database: String, port: Int, pincode: String, deviceID: String, stateFile: URL, process: ChildProcess) {
        self.database = database
        self.port = port
        self.pincode = pincode
        self.deviceID = deviceID
        self.stateFile = stateFile
        self.script = PeerScript(name: "coap_peer.py", serving: database, process: process)
    }

    deinit {
        script.process.signal(SIGKILL)
    }

    /// Stops the peer (SIGTERM) and waits for it to exit; SIGKILL if it has not within 10 s.
    public func stop() async {
        await script.stop()
    }

    /// Everything it printed: JSON event lines and its warnings.
    public func logText() -> String {
        script.logText
    }

    /// The first complete line printed so far that matches `predicate`, else the first that
    /// arrives within `timeout`. Lines look like `{"event": "write", "aid": 1, "iid": 51, "value": true}`
    /// (see coap_peer.py's docstring for all of them).
    @discardableResult
    public func waitForLine(timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await script.waitForLine(timeout: timeout, where: predicate)
    }

    /// The device changes characteristic `aid`.`iid` to the JSON value `json` by itself (an
    /// event to every session subscribed to it).
    public func set(aid: Int, iid: Int, json: String) async throws {
        try await control("{\"command\": \"set\", \"aid\": \(aid), \"iid\": \(iid), \"value\": \(json)}")
    }

    /// Refuses (or accepts again) every later subscription, with PDU status 1.
    public func refuseEvents(_ on: Bool) async throws {
        try await control("{\"command\": \"refuse-events\", \"on\": \(on)}")
    }

    /// Forgets every session, as a rebooted device does: later requests on `/` answer 4.04.
    public func drop() async throws {
        try await control("{\"command\": \"drop\"}")
    }

    /// Misbehaves from now on: `silent` (drops every datagram unread: no ACK, no answer), `slow`
    /// (answers `seconds` late, after an empty ACK), `bad-tag` (every sealed answer and event has
    /// a wrong tag); nil ends it.
    public func misbehave(_ mode: String?, seconds: Double = 3) async throws {
        try await control("{\"command\": \"misbehave\", \"mode\": \(mode.map { "\"\($0)\"" } ?? "null"), \"seconds\": \(seconds)}")
    }

    /// Makes the database request (0x09) answer a body that is no database (or the real one again).
    public func serveGarbage(_ on: Bool) async throws {
        try await control("{\"command\": \"garbage\", \"on\": \(on)}")
    }

    /// Another controller pairs with the device (as an iPhone's Home or a second Home Assistant
    /// would): `controller` its pairing id (a UUID), admin or not.
    public func addPairing(controller: String, admin: Bool) async throws {
        try await control("{\"command\": \"add-pairing\", \"controller\": \"\(controller)\", \"admin\": \(admin)}")
    }

    /// Makes one step fail once, the next time it comes: `verify` (pair-verify refused),
    /// `database` (0x09 answers garbage) or `values` (a read answered CoAP 5.00).
    public func breakOnce(_ step: String) async throws {
        try await control("{\"command\": \"break\", \"step\": \"\(step)\"}")
    }

    /// The zoo's fixtures a HAP-over-CoAP device could have: one accessory, every instance id
    /// within CoAP's 16 bits.
    public static func databases() throws -> [String] {
        try ZooPeer.databases().filter { name in
            let accessories = try ZooPeer.accessories(of: name)
            guard accessories.count == 1, let services = accessories[0]["services"] as? [[String: Any]] else { return false }
            let iids = services.flatMap { service in
                [service["iid"] as? Int ?? 0] + (service["characteristics"] as? [[String: Any]] ?? []).map { $0["iid"] as? Int ?? 0 }
            }
            return iids.allSatisfy { (1...0xFFFF).contains($0) }
        }
    }

    /// Sends `count` datagrams of random bytes to every session's controller, from the peer's port.
    public func sendGarbageDatagrams(count: Int) async throws {
        try await control("{\"command\": \"garbage-datagrams\", \"count\": \(count)}")
    }

    /// Sends events as non-confirmable PUTs (or confirmable ones again, the default).
    public func sendEventsNonConfirmable(_ on: Bool) async throws {
        try await control("{\"command\": \"event-type\", \"type\": \"\(on ? "non" : "con")\"}")
    }

    private func control(_ line: String) async throws {
        try await script.control(line)
    }

    private static func script(_ name: String) -> URL {
        PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/\(name)")
    }

    // MARK: - The cross-check

    /// What `coap_crosscheck.py` reported: its exit status and everything it printed.
    public struct CrossCheck: Sendable {
        /// 0 when every check passed, 1 at the first mismatch (named in ``output``).
        public let status: Int32
        public let output: String
    }

    /// Runs `coap_crosscheck.py` (aiohomekit 4.0.1's CoAP controller against coap_peer.py) for
    /// `fixtures` (its default three when empty) with the venv's Python; fails saying how to
    /// install them when the venv lacks aiohomekit or aiocoap.
    public static func runCrossCheck(fixtures: [String] = [], timeout: Duration = .seconds(300)) async throws -> CrossCheck {
        let python = try HAPPeer.locatePython()
        let probe = try ChildProcess(python, ["-c", "import aiohomekit.controller.coap, aiocoap"])
        guard try await probe.waitForExit(timeout: .seconds(60)) == 0 else {
            throw FixtureError("the venv's Python (\(python)) cannot import aiohomekit's CoAP controller or aiocoap: "
                + "run scripts/setup (it installs aiohomekit==4.0.1 and aiocoap==0.4.17 into .venv)\n\(probe.output.value.suffix(2000))")
        }
        let check = try ChildProcess(python, [script("coap_crosscheck.py").path] + fixtures,
                                     environment: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"])
        let status = try await check.waitForExit(timeout: timeout)
        return CrossCheck(status: status, output: check.output.value)
    }
}

import Foundation

/// A HomeKit accessory for one test: HAP-python 5.0.0 running `Tests/Fixtures/hap/hap_peer.py`, a
/// bridge on 127.0.0.1 without mDNS.
///
/// The bridge is aid 1; aid 2 "Desk Lamp" (Lightbulb: On, Brightness); aid 3 "Outdoor Sensor"
/// (TemperatureSensor: CurrentTemperature, stepping 20.0, 20.5, ... 25.0 by itself every
/// `temperatureInterval` seconds); aid 4 "Front Door" (LockMechanism: LockCurrentState and
/// LockTargetState, which has the `tw` permission; writing the target sets the current state).
/// The peer prints a JSON line for every characteristic a client writes (``writes()``).
/// With `camera: true` the bridge also has aid 5 "Porch Camera" (HAP-python's Camera: Camera RTP
/// Stream Management, Microphone), whose snapshots (`POST /resource`) are always the bytes of
/// `Tests/Fixtures/hap/snapshot.jpg` (``snapshotJPEG``).
///
/// HAP-python needs the venv that `scripts/setup` creates at `<package root>/.venv` (or the venv
/// named by `HOMEGATE_VENV`). Its quirks are listed in the field notes (HomeKit Accessory Protocol,
/// Test peers from PyPI): test against the specification, not against them.
public final class HAPPeer: @unchecked Sendable {
    /// The TCP port it listens on (kept across ``restart()``).
    public let port: Int
    /// The address it listens on.
    public let host = "127.0.0.1"
    /// The setup code, `XXX-XX-XXX`.
    public let pincode: String
    /// The bridge's name (the name of aid 1).
    public let name: String
    /// The accessory's device id (its pairing identifier, `XX:XX:XX:XX:XX:XX`), kept in the state file.
    public let deviceID: String
    /// HAP-python's state file: keys and pairings; they survive ``restart()``.
    public let stateFile: URL

    private let temperatureInterval: Double
    /// The bridge has the camera (aid 5).
    public let camera: Bool
    private let python: String
    private let lock = NSLock()
    private var process: ChildProcess?
    /// What the processes before the current one printed (a ``restart()`` starts a new one).
    private var earlierOutput = ""
    /// Counts the processes started, so a waiter notices a restart.
    private let generation = Recorder<Int>(0)

    /// Starts a peer and waits until it listens.
    ///
    /// - Parameters:
    ///   - pincode: the setup code, `XXX-XX-XXX`.
    ///   - temperatureInterval: seconds between the sensor's own changes; 0 keeps it at 20.0.
    ///   - stateFile: HAP-python's state file; a peer started again with the same file keeps its
    ///     device id and pairings. A new file in a temporary folder if nil.
    ///   - port: the port (one try); a free port if nil.
    ///   - name: the bridge's name.
    public static func start(
        pincode: String = "031-45-154",
        temperatureInterval: Double = 0.5,
        stateFile: URL? = nil,
        port fixedPort: Int? = nil,
        name: String = "HomeGate Test Bridge",
        camera: Bool = false
    ) async throws -> HAPPeer {
        let python = try locatePython()
        let stateFile = try stateFile ?? TemporaryDirectory.make(prefix: "hap-peer").appendingPathComponent("bridge.state")
        var lastError: (any Error)?
        for _ in 0..<(fixedPort == nil ? 5 : 1) {
            let port = try fixedPort ?? FreePort.next()
            let arguments = launchArguments(port: port, pincode: pincode, name: name, temperatureInterval: temperatureInterval, stateFile: stateFile,
                                            camera: camera)
            do {
                let (process, ready) = try await launch(python: python, arguments: arguments)
                return HAPPeer(port: port, pincode: pincode, name: name, deviceID: ready.id, stateFile: stateFile,
                               temperatureInterval: temperatureInterval, camera: camera, python: python, process: process)
            } catch {
                lastError = error // most likely the port was taken in between: try another
            }
        }
        throw lastError ?? FixtureError("hap_peer.py did not start")
    }

    private init(port: Int, pincode: String, name: String, deviceID: String, stateFile: URL,
                 temperatureInterval: Double, camera: Bool, python: String, process: ChildProcess) {
        self.port = port
        self.pincode = pincode
        self.name = name
        self.deviceID = deviceID
        self.stateFile = stateFile
        self.temperatureInterval = temperatureInterval
        self.camera = camera
        self.python = python
        self.process = process
        generation.update { $0 += 1 }
    }

    deinit {
        lock.withLock { process }?.signal(SIGKILL)
    }

    // MARK: - Life cycle

    /// Stops the peer (SIGTERM, HAP-python's `driver.stop`) and waits for it to exit; SIGKILL if
    /// it has not within 10 s. Its state file stays.
    public func stop() async {
        guard let process = lock.withLock({ self.process }) else { return }
        await process.stop()
        retire(process)
    }

    /// Kills the peer (SIGKILL): its connections drop without a goodbye. Its state file stays.
    public func kill() async {
        guard let process = lock.withLock({ self.process }) else { return }
        process.signal(SIGKILL)
        _ = try? await process.waitForExit(timeout: .seconds(10))
        retire(process)
    }

    /// Freezes the peer (SIGSTOP): its connections stay open but nothing answers, as a device
    /// that hung or lost power behind a switch that keeps the link up.
    public func pause() {
        lock.withLock { process }?.signal(SIGSTOP)
    }

    /// Lets a frozen peer run again (SIGCONT).
    public func resume() {
        lock.withLock { process }?.signal(SIGCONT)
    }

    /// HAP-python's own time for each request it took since the last call (or its start), in
    /// microseconds: from the bytes' arrival to the answer handed to the socket.
    public func requestTimes() async throws -> [Double] {
        let before = Self.completeLines(of: logText()).count
        lock.withLock { process }?.signal(SIGUSR1)
        let line = try await waitForOutput(timeout: HangGuard.standard, for: "the HAP peer's request times") { text in
            Self.completeLines(of: text).dropFirst(before).first { $0.contains("\"request-times\"") }
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let times = (object["microseconds"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.doubleValue }) else {
            throw FixtureError("the HAP peer's request times do not parse: \(line.prefix(200))")
        }
        return times
    }

    /// Stops the peer if it runs and starts it again on the same port with the same state file,
    /// so it keeps its device id and pairings; returns once it listens.
    public func restart() async throws {
        await stop()
        let arguments = Self.launchArguments(port: port, pincode: pincode, name: name, temperatureInterval: temperatureInterval, stateFile: stateFile,
                                             camera: camera)
        let (process, ready) = try await Self.launch(python: python, arguments: arguments)
        guard ready.id == deviceID else {
            process.signal(SIGKILL)
            throw FixtureError("hap_peer.py came back with device id \(ready.id), not \(deviceID)")
        }
        lock.withLock { self.process = process }
        generation.update { $0 += 1 }
    }

    private func retire(_ process: ChildProcess) {
        lock.withLock {
            guard self.process === process else { return }
            earlierOutput += process.output.value
            self.process = nil
        }
    }

    // MARK: - What it printed

    /// Everything the peer printed so far, over restarts: its JSON event lines (standard output)
    /// and HAP-python's log (standard error, WARNING and above), interleaved. For failure messages.
    public func logText() -> String {
        lock.withLock { earlierOutput + (process?.output.value ?? "") }
    }

    /// Every characteristic write a client made so far, over restarts, in order.
    public func writes() -> [PeerWrite] {
        Self.completeLines(of: logText()).compactMap(PeerWrite.init(line:))
    }

    /// The first write so far (over restarts) that matches `predicate`, else the first that
    /// arrives within `timeout`.
    @discardableResult
    public func waitForWrite(timeout: Duration = HangGuard.standard, where predicate: (PeerWrite) -> Bool) async throws -> PeerWrite {
        try await waitForOutput(timeout: timeout, for: "a write to the HAP peer that matches") { text in
            Self.completeLines(of: text).lazy.compactMap(PeerWrite.init(line:)).first(where: predicate)
        }
    }

    /// The first complete line printed so far (over restarts) that matches `predicate`, else the
    /// first that arrives within `timeout`. Event lines look like
    /// `{"event": "paired", "controller": "<uuid>", "admin": true}` or
    /// `{"event": "unpaired", "controller": "<uuid>"}`.
    @discardableResult
    public func waitForLine(timeout: Duration = HangGuard.standard, where predicate: (String) -> Bool) async throws -> String {
        try await waitForOutput(timeout: timeout, for: "a line from the HAP peer that matches") { text in
            Self.completeLines(of: text).first(where: predicate)
        }
    }

    /// Runs `find` on the output so far, again whenever more arrives or the peer restarts.
    func waitForOutput<T>(timeout: Duration, for what: String, _ find: (String) -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (process, earlier, seenGeneration) = lock.withLock { (self.process, self.earlierOutput, self.generation.value) }
            let current = process?.output.value ?? ""
            if let found = find(earlier + current) { return found }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw FixtureError("waited \(timeout) for \(what); the peer printed:\n\(logText().suffix(4000))")
            }
            let seen = current.utf8.count
            let generation = self.generation
            do {
                // Woken by the reader of the peer's output, or by a restart.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    if let process {
                        group.addTask {
                            _ = try await process.output.wait(timeout: remaining, for: what) { $0.utf8.count != seen ? true : nil }
                        }
                    }
                    group.addTask {
                        _ = try await generation.wait(timeout: remaining, for: what) { $0 != seenGeneration ? true : nil }
                    }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            } catch {
                throw FixtureError("waited \(timeout) for \(what); the peer printed:\n\(logText().suffix(4000))")
            }
        }
    }

    /// The lines of `text` that ended with a newline.
    static func completeLines(of text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast() // the part after the last newline is not complete (or is empty)
        return lines.map(String.init)
    }

    // MARK: - Starting

    struct Ready: Sendable {
        let id: String
    }

    private static func launchArguments(port: Int, pincode: String, name: String, temperatureInterval: Double, stateFile: URL,
                                        camera: Bool) -> [String] {
        [
            script().path,
            "--port", String(port),
            "--state", stateFile.path,
            "--pincode", pincode,
            "--name", name,
            "--temperature-interval", String(temperatureInterval),
        ] + (camera ? ["--camera"] : [])
    }

    /// Starts a peer script (the first argument) and waits for its ready line; fails with its
    /// output if it exits first.
    static func launch(python: String, arguments: [String], input: Bool = false) async throws -> (ChildProcess, Ready) {
        let process = try ChildProcess(python, arguments, environment: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"], input: input)
        let timeout = HangGuard.standard // Python starts in ~0.5 s; a hang guard
        let ready: Ready?
        do {
            ready = try await withThrowingTaskGroup(of: Ready?.self) { group in
                group.addTask {
                    try await process.output.wait(timeout: timeout, for: "hap_peer.py to print its ready line") { readyLine(in: $0) }
                }
                group.addTask {
                    _ = try await process.exit.wait(timeout: timeout, for: "hap_peer.py to exit") { $0 }
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        } catch {
            process.signal(SIGKILL)
            _ = try? await process.waitForExit(timeout: .seconds(5))
            throw FixtureError("hap_peer.py did not print its ready line within \(timeout): \(process.output.value)")
        }
        if let ready { return (process, ready) }
        let status = try? await process.waitForExit(timeout: .seconds(5)) // the rest of its output
        if let ready = readyLine(in: process.output.value) { return (process, ready) }
        throw FixtureError("hap_peer.py exited (\(status.map(String.init) ?? "?")) before it listened: \(process.output.value)")
    }

    private static func readyLine(in text: String) -> Ready? {
        for line in completeLines(of: text) where line.hasPrefix("{\"event\": \"ready\"") {
            guard let members = HAPPeerJSON.members(of: line), let id = members["id"].flatMap(HAPPeerJSON.string) else { continue }
            return Ready(id: id)
        }
        return nil
    }

    private static func script() -> URL {
        PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/hap_peer.py")
    }

    /// `$HOMEGATE_VENV/bin/python`, else `<package root>/.venv/bin/python`; fails saying to run scripts/setup.
    public static func locatePython() throws -> String {
        let venv = ProcessInfo.processInfo.environment["HOMEGATE_VENV"].map { URL(fileURLWithPath: $0) }
            ?? PackageRoot.url.appendingPathComponent(".venv")
        let python = venv.appendingPathComponent("bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw FixtureError("HAP-python venv not found at \(venv.path): run scripts/setup (it creates .venv with HAP-python 5.0.0 and aiohomekit 4.0.1)")
        }
        guard FileManager.default.fileExists(atPath: script().path) else {
            throw FixtureError("\(script().path) is missing")
        }
        return python
    }
}

/// One characteristic write a client made to the ``HAPPeer``, from its line
/// `{"event": "write", "aid": 2, "iid": 9, "accessory": "Desk Lamp", "characteristic": "On", "value": true}`
/// (with `"pid": N` when the write was a timed write's execution).
public struct PeerWrite: Sendable, Equatable, CustomStringConvertible {
    /// A JSON value as the client sent it.
    public enum Value: Sendable, Equatable {
        case null
        case bool(Bool)
        /// A number written without a fraction or exponent (`1`, `-3`).
        case int(Int)
        /// A number written with a fraction or exponent (`55.0`, `2e3`).
        case double(Double)
        case string(String)
        /// An array or object, as its JSON text.
        case other(String)
    }

    /// The accessory's aid.
    public let aid: Int
    /// The characteristic's iid.
    public let iid: Int
    /// The accessory's name ("Desk Lamp"), nil if the aid is unknown.
    public let accessory: String?
    /// The characteristic's HAP-python name ("On", "Identify", "LockTargetState"), nil if unknown.
    public let characteristic: String?
    /// The value as the client wrote it: `true` and `1` differ.
    public let value: Value
    /// The value's JSON text exactly as the peer printed it (`true`, `1`, `55.0`, `"text"`).
    public let valueJSON: String
    /// The timed write's pid when the request carried one.
    public let pid: UInt64?

    /// Parses one output line; nil unless it is a write event.
    public init?(line: String) {
        guard line.hasPrefix("{\"event\": \"write\""),
              let members = HAPPeerJSON.members(of: line),
              let aid = members["aid"].flatMap({ Int($0) }),
              let iid = members["iid"].flatMap({ Int($0) }),
              let valueJSON = members["value"]
        else { return nil }
        self.aid = aid
        self.iid = iid
        self.accessory = members["accessory"].flatMap(HAPPeerJSON.string)
        self.characteristic = members["characteristic"].flatMap(HAPPeerJSON.string)
        self.valueJSON = valueJSON
        self.value = HAPPeerJSON.value(valueJSON)
        self.pid = members["pid"].flatMap { UInt64($0) }
    }

    public var description: String {
        "\(aid).\(iid) \(accessory ?? "?")/\(characteristic ?? "?") = \(valueJSON)\(pid.map { " (pid \($0))" } ?? "")"
    }
}

/// Just enough JSON to read hap_peer.py's one-line objects while keeping each value's exact text.
enum HAPPeerJSON {
    /// The members of a JSON object, each value as its JSON text; nil if `line` is not an object.
    static func members(of line: String) -> [String: String]? {
        let bytes = Array(line.utf8)
        var index = 0
        var members: [String: String] = [:]

        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        func skipString() -> Bool { // at the opening quote
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): index += 1; return true
                default: index += 1
                }
            }
            return false
        }
        func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard skipString() else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { index += 1; return true }
                    default:
                        break
                    }
                    index += 1
                }
                return false
            default:
                let start = index
                while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                    index += 1
                }
                return index > start
            }
        }
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { return members }
        while index < bytes.count {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = index
            guard skipString(), let key = string(text(keyStart..<index)) else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            let valueStart = index
            guard skipValue() else { return nil }
            members[key] = text(valueStart..<index)
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return members }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        return nil
    }

    /// The string a JSON string literal stands for; nil for anything else (`null` included).
    static func string(_ json: String) -> String? {
        guard json.hasPrefix("\"") else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)) as? String
    }

    /// A JSON value's text as a ``PeerWrite/Value``.
    static func value(_ json: String) -> PeerWrite.Value {
        switch json {
        case "null": return .null
        case "true": return .bool(true)
        case "false": return .bool(false)
        default: break
        }
        if let string = string(json) { return .string(string) }
        if json.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let double = Double(json) { return .double(double) }
        if let int = Int(json) { return .int(int) }
        if let double = Double(json) { return .double(double) } // an integer too large for Int
        return .other(json)
    }
}

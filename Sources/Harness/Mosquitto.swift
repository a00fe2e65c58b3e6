import Foundation
import Synchronization
import MQTT

/// A real Mosquitto broker for one test: the project's `config/mosquitto.conf` with the listener
/// moved to a free port on 127.0.0.1, plus any extra lines a test needs (TLS, passwords).
public final class Mosquitto: @unchecked Sendable {
    /// The port it listens on (kept across ``restart()``).
    public let port: Int
    /// A folder of its own for the config, log and any files a test adds.
    public let directory: URL
    private let configFile: URL
    private let lock = NSLock()
    private var process: ChildProcess?

    /// `mqtt://127.0.0.1:<port>` (or `mqtts://localhost:<port>` for a TLS listener).
    public var url: BrokerURL {
        // The fixture's own URL parts are always valid.
        try! BrokerURL(scheme: usesTLS ? .mqtts : .mqtt, host: usesTLS ? "localhost" : "127.0.0.1", port: port) // swiftlint:disable:this force_try
    }

    private let usesTLS: Bool

    /// The broker's process id while it runs (for CPU figures read from `/proc/<pid>/stat`).
    public var pid: pid_t? {
        lock.withLock { process?.pid }
    }

    /// Starts a broker. `extraConfiguration` lines go after the listener line, so per-listener
    /// settings (`cafile`, `certfile`, `require_certificate`) apply to it; a key given there
    /// replaces the same key from the project's config.
    /// With `port`, it listens there (one try); else on a free port.
    public static func start(extraConfiguration: [String] = [], directory: URL? = nil, port fixedPort: Int? = nil) async throws -> Mosquitto {
        let binary = try locate()
        var lastError: (any Error)?
        for _ in 0..<(fixedPort == nil ? 5 : 1) {
            let port = try fixedPort ?? FreePort.next()
            let broker = try Mosquitto(port: port, extraConfiguration: extraConfiguration, directory: directory ?? TemporaryDirectory.make(prefix: "mosquitto"))
            do {
                try await broker.launch(binary: binary)
                return broker
            } catch {
                lastError = error // most likely the port was taken in between: try another
            }
        }
        throw lastError ?? FixtureError("Mosquitto did not start")
    }

    private init(port: Int, extraConfiguration: [String], directory: URL) throws {
        self.port = port
        self.directory = directory
        self.configFile = directory.appendingPathComponent("mosquitto.conf")
        self.usesTLS = extraConfiguration.contains { $0.hasPrefix("certfile ") }
        try Self.configuration(port: port, extra: extraConfiguration).write(to: configFile, atomically: true, encoding: .utf8)
    }

    deinit {
        lock.withLock { process }?.signal(SIGKILL)
    }

    /// The project's broker config with the listener on `port` and `extra` lines appended.
    static func configuration(port: Int, extra: [String]) throws -> String {
        let shipped = try String(contentsOf: PackageRoot.url.appendingPathComponent("config/mosquitto.conf"), encoding: .utf8)
        let replacedKeys = Set(extra.compactMap { $0.split(separator: " ").first.map(String.init) } + ["listener", "user"])
        let kept = shipped.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            guard let key = line.split(separator: " ").first else { return true }
            return !replacedKeys.contains(String(key))
        }
        var lines = kept.map(String.init)
        lines.append("listener \(port) 127.0.0.1")
        lines.append(contentsOf: extra)
        // Started as root, Mosquitto drops to the 'mosquitto' user, who cannot read the test's files.
        if geteuid() == 0 { lines.append("user root") }
        return lines.joined(separator: "\n") + "\n"
    }

    private func launch(binary: String) async throws {
        let log = directory.appendingPathComponent("mosquitto.log").path
        let runningBefore = logText().components(separatedBy: " running").count // a restart appends to the log
        let process = try ChildProcess(binary, ["-c", configFile.path], outputFile: log)
        lock.withLock { self.process = process }
        let deadline = ContinuousClock.now + HangGuard.standard
        while ContinuousClock.now < deadline {
            if process.exit.value != nil {
                throw FixtureError("Mosquitto exited at start: \(logText())")
            }
            // Its own log says its listeners are open ("... running"); that the port accepts
            // alone is not enough: another test's server may hold it, and this broker then
            // fails to bind and exits (tests would talk to the wrong broker).
            if logText().components(separatedBy: " running").count > runningBefore, FreePort.accepts(port), process.exit.value == nil { return }
            try await Task.sleep(for: .milliseconds(20)) // the log is a file: poll it
        }
        process.signal(SIGKILL)
        throw FixtureError("Mosquitto did not listen on port \(port) within 10 s: \(logText())")
    }

    /// Stops the broker (SIGTERM) and waits for it to exit. Retained messages are lost: the
    /// shipped config has no persistence.
    public func stop() async {
        guard let process = lock.withLock({ self.process }) else { return }
        await process.stop()
        lock.withLock { self.process = nil }
    }

    /// Starts the broker again on the same port.
    public func restart() async throws {
        await stop()
        try await launch(binary: Self.locate())
    }

    /// What the broker logged so far.
    public func logText() -> String {
        (try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? ""
    }

    /// Finds the mosquitto binary, or fails saying how to install it.
    public static func locate() throws -> String {
        try Executable.locate("mosquitto", extraFolders: ["/usr/sbin", "/usr/local/sbin"],
                              install: "run scripts/setup (or: apt-get install mosquitto mosquitto-clients)")
    }
}

/// A test fixture could not be set up; the message says what to do.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Finding programs the tests need.
public enum Executable {
    /// The path of `name` on PATH or in `extraFolders`; fails with how to install it.
    public static func locate(_ name: String, extraFolders: [String] = [], install: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init) + extraFolders
        for folder in folders {
            let candidate = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw FixtureError("\(name) not found on PATH or in \(extraFolders.joined(separator: ", ")): \(install)")
    }
}

/// The package's root folder (where Package.swift is).
public enum PackageRoot {
    public static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Harness
        .deletingLastPathComponent() // Sources
        .deletingLastPathComponent()
}

/// Temporary folders for tests.
public enum TemporaryDirectory {
    public static func make(prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("homegate-\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Free TCP ports on 127.0.0.1.
public enum FreePort {
    /// The ports handed out so far in this process.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A free port below the kernel's ephemeral range, never one handed out before in this
    /// process.
    ///
    /// Below the ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`), no outgoing
    /// connection's local port and no listener bound to port 0 can take it between now and the
    /// fixture's bind (a port the kernel gave out for port 0 could be: an ejabberd node once
    /// found its port in use); and a fixture that stops and starts again on its port (a
    /// restarted broker or peer) does not find another test's fixture there.
    public static func next() throws -> Int {
        let range = 10_000..<ephemeralStart()
        for _ in 0..<1000 {
            let port = Int.random(in: range)
            guard isFree(port), handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            return port
        }
        throw FixtureError("no free port in \(range.lowerBound)-\(range.upperBound - 1) after 1000 tries")
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    private static func ephemeralStart() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        guard let first = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }), first > 10_100 else { return 32_768 }
        return first
    }

    /// Whether a TCP socket can bind 127.0.0.1:`port` now (and let it go again).
    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

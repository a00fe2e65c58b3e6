import Foundation

/// The real `homegate` binary run as a subprocess, its output recorded.
public final class HomeGateProcess: Sendable {
    public let child: ChildProcess

    /// Starts `homegate` with `arguments`.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        child = try ChildProcess(Self.binary(), arguments, environment: environment)
    }

    /// Standard output and standard error so far.
    public var output: String { child.output.value }

    /// Sends a signal (SIGTERM, SIGINT, SIGKILL, ...).
    public func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// Waits until the output contains `text`; returns the output so far.
    @discardableResult
    public func waitForOutput(containing text: String, timeout: Duration = HangGuard.standard) async throws -> String {
        try await child.output.wait(timeout: timeout, for: "homegate to print \"\(text)\"") { $0.contains(text) ? $0 : nil }
    }

    /// Waits for the process to end; returns its exit status, or minus the signal that ended it.
    public func waitForExit(timeout: Duration = HangGuard.standard) async throws -> Int32 {
        try await child.waitForExit(timeout: timeout)
    }

    /// Where the binary is: `HOMEGATE_BIN`, else next to the test runner, else `.build/debug`.
    public static func binary() throws -> String {
        if let explicit = ProcessInfo.processInfo.environment["HOMEGATE_BIN"] { return explicit }
        let runner = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        let candidates = [
            runner.deletingLastPathComponent().appendingPathComponent("homegate").path,
            PackageRoot.url.appendingPathComponent(".build/debug/homegate").path,
        ]
        if let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) { return found }
        throw FixtureError("the homegate binary is not built (looked in \(candidates.joined(separator: ", "))): run swift build, or scripts/test")
    }
}

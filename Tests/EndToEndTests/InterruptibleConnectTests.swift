import Foundation
import Testing
import TestSupport

/// SIGTERM while a connection attempt hangs (a broker address whose packets vanish): the gateway
/// stops at once, in a network namespace the test makes so nothing leaves the machine. Needs root
/// and iproute2, like `homegate discover`'s tests.
@Suite("stopping during a connection attempt", .startsProcesses)
struct InterruptibleConnectTests {
    @Test("SIGTERM while the TCP connect to a broker that drops packets hangs: exit 0 within seconds, not minutes")
    func stopsDuringAHangingConnect() async throws {
        try await DiscoverNamespace.with(suffix: "-connect", Self.stopsDuringAHangingConnect)
    }

    static func stopsDuringAHangingConnect(in namespace: DiscoverNamespace) async throws {
        // 10.79.0.0/16 goes to lo, where no address answers: SYNs vanish and connect() waits.
        let ip = namespace.ip
        let route = try ChildProcess(ip, ["netns", "exec", namespace.name, ip, "route", "add", "10.79.0.0/16", "dev", "lo"])
        #expect(try await route.waitForExit() == 0, "\(route.output.value)")
        let folder = try TemporaryDirectory.make(prefix: "hanging-connect")
        let config = folder.appendingPathComponent("homegate.yml").path
        try "base_topic: hgtest\nmqtt:\n  url: mqtt://10.79.0.5:1883\n".write(toFile: config, atomically: true, encoding: .utf8)
        let gateway = try namespace.start(HomeGateProcess.binary(), ["run", "--config", config, "--data-dir", folder.appendingPathComponent("data").path,
                                                                  "--log-level", "debug"])
        // Logged once the network thread is inside the connect attempt.
        _ = try await gateway.output.wait(timeout: HangGuard.standard, for: "the connect attempt") { $0.contains("connecting to mqtt://10.79.0.5:1883") ? true : nil }
        let stopped = ContinuousClock.now
        gateway.signal(SIGTERM)
        let status = try await gateway.waitForExit(timeout: HangGuard.standard)
        #expect(status == 0, "\(gateway.output.value)")
        #expect(stopped.duration(to: .now) < .seconds(10), "stopped after \(stopped.duration(to: .now)):\n\(gateway.output.value)")
        #expect(gateway.output.value.contains("not waiting for it"), "\(gateway.output.value)")
    }
}

import Foundation
import HAP
import Harness

/// The CoAP section: our HAP-over-CoAP client (Thread accessories) and aiohomekit 4.0.1's CoAP
/// controller (Home Assistant's) against the same `coap_peer.py` serving the Nanoleaf bulb (a
/// real Thread device's database) on IPv6 loopback, in the same run: pair-setup, pair-verify,
/// read and write round trips of the bulb's On. Each controller gets a fresh peer.
enum CoAPBench {
    /// The bulb's On (bool, `pr pw ev`) in the fixture.
    static let on = CharacteristicAddress(aid: 1, iid: 51)
    static let fixture = "nanoleaf_bulb"

    static func run(iterations: Int) async throws -> HAPBench.Figures {
        Bench.log("CoAP: our client against coap_peer.py (\(fixture)), \(iterations) of each")
        let ours = try await measureOurs(iterations: iterations)
        Bench.log("CoAP: aiohomekit 4.0.1's CoAP controller against coap_peer.py, \(iterations) of each")
        let theirs = try await measureAiohomekit(iterations: iterations)
        return HAPBench.Figures(ours: ours, aiohomekit: theirs)
    }

    private static func measureOurs(iterations: Int) async throws -> HAPBench.Side {
        let peer = try await CoAPZooPeer.start(database: fixture)
        defer { Task { await peer.stop() } }
        let controller = ControllerIdentity.generate()
        let pairStart = ContinuousClock.now
        let pairing = try await CoAPSession.pairSetup(host: peer.host, port: peer.port, code: peer.pincode, controller: controller)
        let pairSetup = pairStart.duration(to: .now)
        var verifies: [Duration] = []
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            let session = try await CoAPSession.open(host: peer.host, port: peer.port, controller: controller, accessory: pairing)
            verifies.append(start.duration(to: .now))
            session.close()
        }
        let session = try await CoAPSession.open(host: peer.host, port: peer.port, controller: controller, accessory: pairing)
        defer { session.close() }
        _ = try await session.accessoryDatabase()
        _ = try await session.read([on]) // warm-up, as aiohomekit's run has one
        var reads: [Duration] = []
        var writes: [Duration] = []
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            let outcome = try await session.read([on])[on]
            reads.append(start.duration(to: .now))
            guard outcome?.status == .success else { throw FixtureError("a read of \(on) failed: \(String(describing: outcome))") }
        }
        for index in 0..<iterations {
            let start = ContinuousClock.now
            let outcome = try await session.write([CharacteristicWrite(on, .bool(index.isMultiple(of: 2)))])[on]
            writes.append(start.duration(to: .now))
            guard outcome?.status == .success else { throw FixtureError("a write of \(on) failed: \(String(describing: outcome))") }
        }
        return HAPBench.Side(pairSetupMilliseconds: (pairSetup.millisecondsValue * 100).rounded() / 100, pairVerify: HAPBench.Summary(verifies),
                             read: HAPBench.Summary(reads), write: HAPBench.Summary(writes))
    }

    private static func measureAiohomekit(iterations: Int) async throws -> HAPBench.Side {
        let peer = try await CoAPZooPeer.start(database: fixture)
        defer { Task { await peer.stop() } }
        let script = PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/aiohomekit_coap_bench.py").path
        let python = PackageRoot.url.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw FixtureError("no \(python): run scripts/setup (it makes .venv with aiohomekit 4.0.1 and aiocoap 0.4.17)")
        }
        let child = try ChildProcess(python, [script, "--host", peer.host, "--port", String(peer.port), "--pincode", peer.pincode,
                                              "--iterations", String(iterations), "--iid", String(on.iid)])
        let status = try await child.waitForExit(timeout: .seconds(600))
        let output = child.output.value
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw FixtureError("aiohomekit_coap_bench.py failed (\(status)): \(output)")
        }
        func summary(_ key: String) -> HAPBench.Summary {
            let entry = object[key] as? [String: Any]
            return HAPBench.Summary(p50: (entry?["p50"] as? Double) ?? 0, p99: (entry?["p99"] as? Double) ?? 0)
        }
        return HAPBench.Side(pairSetupMilliseconds: object["pair_setup_ms"] as? Double, pairVerify: summary("pair_verify_ms"),
                             read: summary("read_ms"), write: summary("write_ms"))
    }
}

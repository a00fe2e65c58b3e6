import Foundation
import HAP
import Harness
import Timing

/// The HAP section: our controller and aiohomekit 4.0.1 (Home Assistant's) against the same
/// HAP-python 5.0.0 peer, in the same run: pair-setup, connect + pair-verify, read and write
/// round trips of the Desk Lamp's On. Each controller gets a fresh peer (an accessory pairs
/// with one admin controller only).
enum HAPBench {
    /// Milliseconds at the median and the 99th percentile.
    struct Summary: Codable {
        let p50: Double
        let p99: Double

        init(p50: Double, p99: Double) {
            self.p50 = p50
            self.p99 = p99
        }

        init(_ durations: [Duration]) {
            let latencies = Latencies(durations)
            p50 = (latencies.p50 / 10).rounded() / 100
            p99 = (latencies.p99 / 10).rounded() / 100
        }
    }

    struct Side: Codable {
        let pairSetupMilliseconds: Double?
        let pairVerify: Summary
        let read: Summary
        let write: Summary
        /// HAP-python's own time per request during this side's reads and writes (from the
        /// bytes' arrival to the answer handed to its socket): the floor under a round trip.
        var peer: Summary?
        /// HAP-python's own time for each pair-verify (its two requests).
        var peerVerify: Summary?
    }

    struct Figures: Codable {
        let ours: Side
        let aiohomekit: Side
    }

    static func run(iterations: Int) async throws -> Figures {
        Bench.log("HAP: our controller against HAP-python, \(iterations) of each")
        let ours = try await measureOurs(iterations: iterations)
        Bench.log("HAP: aiohomekit 4.0.1 against HAP-python, \(iterations) of each")
        let theirs = try await measureAiohomekit(iterations: iterations)
        return Figures(ours: ours, aiohomekit: theirs)
    }

    private static func measureOurs(iterations: Int) async throws -> Side {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await peer.stop() } }
        let controller = ControllerIdentity.generate()
        var pairing: AccessoryPairing?
        var pairSetup: Duration = .zero
        for _ in 0..<5 where pairing == nil {
            let client = try await Client.connect(host: peer.host, port: peer.port)
            let start = ContinuousClock.now
            let result = await Self.pairSetup(client, code: peer.pincode, controller: controller)
            client.close()
            switch result {
            case .success(let paired):
                pairing = paired
                pairSetup = start.duration(to: .now)
            case .failure(let error) where error.pairingError == .authentication:
                Bench.log("HAP: pair-setup refused once (HAP-python's padding quirk); again")
            case .failure(let error):
                throw error
            }
        }
        guard let pairing else { throw FixtureError("pair-setup with the peer failed 5 times") }
        var verifies: [Duration] = []
        _ = try await peer.requestTimes() // from here on: the pair-verifies only
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            let client = try await Client.session(host: peer.host, port: peer.port, controller: controller, accessory: pairing)
            verifies.append(start.duration(to: .now))
            client.close()
        }
        // Pair-verify is two requests (M1 and M3), each answered in one go.
        let verifyTimes = try await peer.requestTimes()
        let peerVerifies = stride(from: 0, to: verifyTimes.count - 1, by: 2).map { Duration.microseconds(verifyTimes[$0] + verifyTimes[$0 + 1]) }
        let client = try await Client.session(host: peer.host, port: peer.port, controller: controller, accessory: pairing)
        defer { client.close() }
        let on = try lampOn(in: try await client.accessories())
        _ = try await peer.requestTimes() // from here on: the reads and writes only
        // The loop runs on the connection's event loop, as aiohomekit's runs on its asyncio loop
        // (and as the gateway's requests are written and answered there).
        let (reads, writes) = try await withTaskExecutorPreference(client.taskExecutor) { () async throws -> ([Duration], [Duration]) in
            var reads: [Duration] = []
            var writes: [Duration] = []
            for index in 0..<iterations {
                let readStart = ContinuousClock.now
                _ = try await client.read([on])
                reads.append(readStart.duration(to: .now))
                let writeStart = ContinuousClock.now
                _ = try await client.write([CharacteristicWrite(on, .bool(index.isMultiple(of: 2)))])
                writes.append(writeStart.duration(to: .now))
            }
            return (reads, writes)
        }
        let peerTimes = try await peer.requestTimes().map { Duration.microseconds($0) }
        let milliseconds = pairSetup.millisecondsValue
        return Side(pairSetupMilliseconds: (milliseconds * 100).rounded() / 100, pairVerify: Summary(verifies), read: Summary(reads), write: Summary(writes),
                    peer: Summary(peerTimes), peerVerify: Summary(peerVerifies))
    }

    private static func pairSetup(_ client: Client, code: String, controller: ControllerIdentity) async -> Result<AccessoryPairing, HAPError> {
        do {
            return .success(try await client.pairSetup(code: code, controller: controller))
        } catch {
            return .failure(error)
        }
    }

    private static func lampOn(in database: [AccessoryDescription]) throws -> CharacteristicAddress {
        let on = AccessoryDescription.fullUUID("25")
        guard let lamp = database.first(where: { $0.aid == 2 }),
              let characteristic = lamp.services.flatMap(\.characteristics).first(where: { $0.type == on }) else {
            throw FixtureError("the peer has no Desk Lamp On characteristic")
        }
        return CharacteristicAddress(aid: 2, iid: characteristic.iid)
    }

    private static func measureAiohomekit(iterations: Int) async throws -> Side {
        let peer = try await HAPPeer.start(temperatureInterval: 0)
        defer { Task { await peer.stop() } }
        let folder = try TemporaryDirectory.make(prefix: "aiohomekit")
        let script = PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/aiohomekit_bench.py").path
        let python = PackageRoot.url.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw FixtureError("no \(python): run scripts/setup (it makes .venv with HAP-python 5.0.0 and aiohomekit 4.0.1)")
        }
        let child = try ChildProcess(python, [script, "--host", peer.host, "--port", String(peer.port), "--pincode", peer.pincode,
                                              "--iterations", String(iterations), "--pairing-file", folder.appendingPathComponent("pairing.json").path])
        let status = try await child.waitForExit(timeout: .seconds(600))
        let output = child.output.value
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw FixtureError("aiohomekit_bench.py failed (\(status)): \(output)")
        }
        func summary(_ key: String) -> Summary {
            let entry = object[key] as? [String: Any]
            return Summary(p50: (entry?["p50"] as? Double) ?? 0, p99: (entry?["p99"] as? Double) ?? 0)
        }
        return Side(pairSetupMilliseconds: object["pair_setup_ms"] as? Double, pairVerify: summary("pair_verify_ms"),
                    read: summary("read_ms"), write: summary("write_ms"))
    }
}

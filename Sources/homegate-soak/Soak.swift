import Foundation
import MQTT
import Harness
import Timing

/// `homegate-soak`: a long run of the real gateway on the demo home under mixed load, recording
/// its resident memory, open file descriptors, threads and acknowledgement latency over time.
/// See `scripts/soak`.
///
/// The load, all through a real Mosquitto (with persistence, so a restart keeps sessions and
/// queued messages): sets at `--rate` per second, each with its own correlation data, whose
/// acknowledgements are counted (every set acknowledged exactly once); commands are sent and the
/// acknowledgements received at QoS 2 (with QoS 1 a broker restart may hand a set over twice,
/// which the gateway then carries out and acknowledges twice: MQTT's at-least-once); a get every 2 s; a device
/// event (the simulator changes a sensor) every 5 s; a reachability flip every 30 s; a rename
/// every 60 s; a broker restart every `--broker-restart-every` seconds.
///
/// Options: `--minutes M` (default 30; fractions allowed), `--rate N` (sets per second, default
/// 20), `--broker-restart-every S` (default 300), `--sample-every S` (default 10), `--output FILE`
/// (default BENCHMARKS.md, where the figures replace the previous soak section among the notes;
/// `-` prints them). Exits 1 when a set or get was not acknowledged exactly once.
@main
enum Soak {
    struct Options {
        var minutes = 30.0
        var rate = 20
        var brokerRestartEvery = 300.0
        var sampleEvery = 10.0
        var output = "BENCHMARKS.md"

        init(_ arguments: [String]) throws {
            var iterator = arguments.dropFirst().makeIterator()
            while let argument = iterator.next() {
                guard let text = iterator.next() else { throw FixtureError("\(argument) needs a value") }
                func number() throws -> Double {
                    guard let value = Double(text), value > 0 else { throw FixtureError("\(argument) needs a positive number, got \(text)") }
                    return value
                }
                switch argument {
                case "--minutes": minutes = try number()
                case "--rate": rate = Int(try number())
                case "--broker-restart-every": brokerRestartEvery = try number()
                case "--sample-every": sampleEvery = try number()
                case "--output": output = text
                default: throw FixtureError("unknown option \(argument); see the comment at the top of Sources/homegate-soak/Soak.swift")
                }
            }
        }
    }

    static func main() async {
        do {
            let options = try Options(CommandLine.arguments)
            let run = try await SoakRun.start()
            let report = try await run.drive(options)
            try await run.stop()
            try report.write(to: options.output)
            if !report.exactlyOnce {
                log("FAILED: \(report.duplicates) duplicate and \(report.missing) missing acknowledgements")
                exit(1)
            }
        } catch {
            log("\(error)")
            exit(1)
        }
    }

    static func log(_ text: String) {
        FileHandle.standardError.write(Data("homegate-soak: \(text)\n".utf8))
    }
}

/// The broker, the gateway on the demo home, and the load's client.
final class SoakRun: @unchecked Sendable {
    let folder: URL
    let broker: Mosquitto
    let gateway: HomeGateProcess
    let client: Client
    let clientRun: Task<Void, any Error>
    let ledger = AckLedger()
    private var receiver: Task<Void, Never>?

    static let replies = "soak/replies"
    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"
    static let sensor = "homegate/demo-home/kitchen/kitchen-sensor/temperature-sensor/current-temperature"

    private init(folder: URL, broker: Mosquitto, gateway: HomeGateProcess, client: Client, clientRun: Task<Void, any Error>) {
        self.folder = folder
        self.broker = broker
        self.gateway = gateway
        self.client = client
        self.clientRun = clientRun
    }

    static func start() async throws -> SoakRun {
        let folder = try TemporaryDirectory.make(prefix: "soak")
        let broker = try await Mosquitto.start(extraConfiguration: ["persistence true", "persistence_location \(folder.path)/", "autosave_interval 5"],
                                               directory: folder)
        // The demo home without its web page (port 8080 may be taken; the soak does not use it).
        let demo = try String(contentsOf: PackageRoot.url.appendingPathComponent("config/demo.yml"), encoding: .utf8)
        let config = folder.appendingPathComponent("demo.yml").path
        try demo.replacingOccurrences(of: "\nui:\n  port: 8080\n", with: "\n").write(toFile: config, atomically: true, encoding: .utf8)
        let gateway = try HomeGateProcess(["run", "--config", config,
                                           "--mqtt-url", broker.url.description, "--data-dir", folder.appendingPathComponent("data").path,
                                           "--log-level", "warning"])
        var configuration = TestClient.configuration(broker.url, id: "soak-load")
        configuration.cleanStart = false
        configuration.sessionExpiry = .seconds(3600)
        let client = try Client(configuration: configuration, logger: TestLogger.make("soak-load"))
        let clientRun = Task { try await client.run() }
        let run = SoakRun(folder: folder, broker: broker, gateway: gateway, client: client, clientRun: clientRun)
        try await run.waitUntilOnline()
        // QoS 2: the broker hands each acknowledgement over once, also across its restarts.
        try await client.subscribe([Subscription(TopicFilter(replies), qos: .exactlyOnce)])
        run.receive()
        Soak.log("gateway pid \(gateway.child.pid) online on the demo home; broker on \(broker.port), persistence in \(folder.path)")
        return run
    }

    private func waitUntilOnline() async throws {
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "soak-state"))
        try await watcher.subscribe("homegate/$state")
        _ = try await watcher.inbox.first(on: "homegate/$state", payload: "online", timeout: .seconds(30))
        await watcher.stop()
    }

    /// Counts every acknowledgement by its correlation data.
    private func receive() {
        let messages = client.messages
        let ledger = ledger
        receiver = Task {
            for await message in messages where message.topic.string == Self.replies {
                guard let data = message.properties.correlationData, let id = Int(String(decoding: data, as: UTF8.self)) else { continue }
                ledger.acknowledged(id, ok: message.payloadString.contains("\"ok\":true"))
            }
        }
    }

    /// Sends one command with a fresh correlation id; a client that cannot send now (the broker is
    /// restarting) is counted, not an error.
    private func command(_ topic: String, _ payload: String) {
        let id = ledger.nextID()
        var properties = Message.Properties()
        properties.responseTopic = try? TopicName(Self.replies)
        properties.correlationData = Array("\(id)".utf8)
        // Counted as sent before it is: the acknowledgement may come back before send returns.
        ledger.sent(id, topic: topic)
        do {
            try client.send(Message(topic: TopicName(topic), payload: Array(payload.utf8), qos: .exactlyOnce, properties: properties))
        } catch {
            ledger.notSent(id)
        }
    }

    private func request(_ path: String, _ body: String) {
        command("homegate/$request/\(path)", body)
    }

    func drive(_ options: Soak.Options) async throws -> SoakReport {
        let started = ContinuousClock.now
        let end = started + .seconds(options.minutes * 60)
        var samples: [SoakSample] = []
        var tick = 0
        let ticksPerSecond = max(options.rate, 1)
        var nextSample = started
        var nextRestart = started + .seconds(options.brokerRestartEvery)
        var restarts = 0
        var reachable = true
        var renamed = false
        while ContinuousClock.now < end {
            tick += 1
            command("\(Self.lamp)/set", "\(tick % 101)")
            let second = tick % ticksPerSecond == 0 ? tick / ticksPerSecond : nil
            if let second {
                if second % 2 == 0 { command("\(Self.sensor)/get", "") }
                if second % 5 == 0 {
                    request("simulator/update", #"{"accessory": "sim-thermostat", "characteristic": "current-temperature", "value": \#(18 + second % 7)}"#)
                }
                if second % 30 == 0 {
                    reachable.toggle()
                    request("simulator/reachability", #"{"accessory": "sim-tv-outlet", "reachable": \#(reachable)}"#)
                }
                if second % 60 == 0 {
                    renamed.toggle()
                    request("accessory/rename", #"{"accessory": "sim-coffee-machine", "newName": "\#(renamed ? "Espresso Machine" : "Coffee Machine")"}"#)
                }
            }
            let now = ContinuousClock.now
            if now >= nextSample {
                samples.append(sample(at: started.duration(to: now)))
                nextSample = now + .seconds(options.sampleEvery)
                if let last = samples.last { Soak.log(last.line) }
            }
            if now >= nextRestart, now + .seconds(30) < end {
                Soak.log("restarting the broker after command #\(ledger.counts().sent)")
                try await broker.restart()
                restarts += 1
                nextRestart = ContinuousClock.now + .seconds(options.brokerRestartEvery)
            }
            try await Task.sleep(until: started + .seconds(Double(tick) / Double(ticksPerSecond)), clock: .continuous)
        }
        // Every command sent has had time to be acknowledged.
        let settled = await ledger.waitUntilSettled(timeout: .seconds(60))
        samples.append(sample(at: started.duration(to: .now)))
        Soak.log("load done; acknowledgements \(settled ? "settled" : "NOT settled within 60 s: \(ledger.unacknowledged().prefix(20).joined(separator: ", "))")")
        return SoakReport(options: options, samples: samples, counts: ledger.counts(), brokerRestarts: restarts)
    }

    private func sample(at elapsed: Duration) -> SoakSample {
        let pid = gateway.child.pid
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return Double(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") ?? 0
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
        let window = ledger.takeLatencies()
        return SoakSample(seconds: Double(elapsed.wholeSeconds), residentMegabytes: field("VmRSS") / 1024, descriptors: descriptors,
                          threads: Int(field("Threads")), acknowledged: ledger.counts().acknowledged, latency: Latencies(window))
    }

    func stop() async throws {
        receiver?.cancel()
        await client.disconnect()
        _ = await clientRun.result
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit(timeout: .seconds(30))
        await broker.stop()
    }
}

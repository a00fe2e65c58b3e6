import Foundation
import MQTT
import Harness

/// `homegate-bench`: measures HomeGate against a baseline taken in the same run, and writes the
/// figures (JSON and a Markdown table) into BENCHMARKS.md. See `scripts/bench`.
///
/// Options: `--messages N` (round trips per series, default 5000), `--warm-up N` (default 500),
/// `--fan-out N` (messages per fan-out series, default 20000), `--sizes 100,1000,10000`,
/// `--scale-messages N` (round trips per home size, default 1000), `--hap-iterations N` (HAP
/// pair-verifies, reads and writes per controller, default 500), `--output FILE` (default
/// BENCHMARKS.md; `-` prints instead), `--cpu-sets N` (sets over which CPU time is read from
/// `/proc`, default 10000), `--many N` (HAP devices in the many-devices section, default 100),
/// `--many-rounds N` (sets per device there, one at a time, default 10), `--only
/// echo,set,cpu,fanout,scale,hap,coap,many,matter` (some sections; the set and CPU sections bring
/// the echo baseline along; `coap` is HAP over CoAP with `--hap-iterations`; `matter` is a set to
/// a real Matter device through the Matter Server against the server's own client, with
/// `--hap-iterations` sets, and needs root for its lab), `--quick` (small counts, for the test suite).
@main
enum Bench {
    struct Options {
        var messages = 5000
        var warmUp = 500
        var fanOut = 20_000
        var sizes = [100, 1000, 10_000]
        var scaleMessages = 1000
        var output = "BENCHMARKS.md"
        var hapIterations = 500
        var cpuSets = 10_000
        var manyDevices = 100
        var manyRounds = 10
        /// The sections to run; all when empty.
        var only: Set<Section> = []

        enum Section: String, CaseIterable {
            case echo, set, cpu, fanout, scale, hap, coap, many, matter
        }

        func runs(_ section: Section) -> Bool {
            only.isEmpty || only.contains(section) || (section == .echo && (only.contains(.set) || only.contains(.cpu)))
        }

        init(_ arguments: [String]) throws {
            var iterator = arguments.dropFirst().makeIterator()
            while let argument = iterator.next() {
                func value() throws -> String {
                    guard let value = iterator.next() else { throw FixtureError("\(argument) needs a value") }
                    return value
                }
                func number() throws -> Int {
                    let text = try value()
                    guard let number = Int(text), number > 0 else { throw FixtureError("\(argument) needs a positive whole number, got \(text)") }
                    return number
                }
                switch argument {
                case "--messages": messages = try number()
                case "--warm-up": warmUp = try number()
                case "--fan-out": fanOut = try number()
                case "--scale-messages": scaleMessages = try number()
                case "--sizes": sizes = try value().split(separator: ",").compactMap { Int($0) }
                case "--output": output = try value()
                case "--hap-iterations": hapIterations = try number()
                case "--cpu-sets": cpuSets = try number()
                case "--many": manyDevices = try number()
                case "--many-rounds": manyRounds = try number()
                case "--only":
                    for name in try value().split(separator: ",") {
                        guard let section = Section(rawValue: String(name)) else {
                            throw FixtureError("--only takes \(Section.allCases.map(\.rawValue).joined(separator: ",")), got \(name)")
                        }
                        only.insert(section)
                    }
                case "--quick":
                    messages = 50
                    warmUp = 10
                    fanOut = 200
                    sizes = [10]
                    scaleMessages = 20
                    hapIterations = 20
                    cpuSets = 100
                    manyDevices = 10
                    manyRounds = 2
                default: throw FixtureError("unknown option \(argument); see the comment at the top of Sources/homegate-bench/Bench.swift")
                }
            }
        }
    }

    static func main() async {
        do {
            let options = try Options(CommandLine.arguments)
            let results = try await run(options)
            try Report.write(results, options: options)
        } catch {
            FileHandle.standardError.write(Data("homegate-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: Options) async throws -> Results {
        var results = Results()
        if options.only == [.matter] {
            results.matter = try await MatterBench.run(iterations: options.hapIterations)
            return results
        }
        guard options.only != [.many] else {
            results.many = try await ManyBench.run(devices: options.manyDevices, rounds: options.manyRounds)
            return results
        }
        let broker = try await Mosquitto.start()
        if options.runs(.echo) {
            log("broker echo round trip, QoS 1, \(options.messages) messages")
            results.echo = try await Measure.echo(broker: broker, count: options.messages, warmUp: options.warmUp)
        }
        if options.runs(.set) || options.runs(.cpu) || options.runs(.fanout) {
            log("gateway: a home of 100 accessories")
            let home = try await ScaleRun.start(broker: broker, accessories: 100)
            if options.runs(.set) { try await measureSets(home, broker: broker, options: options, into: &results) }
            if options.runs(.cpu) { try await measureCPU(home, broker: broker, options: options, into: &results) }
            if options.runs(.fanout) { try await measureFanOut(home, broker: broker, options: options, into: &results) }
            try await home.stop()
        }
        if options.runs(.scale) {
            for size in options.sizes { results.scale.append(try await measureScale(size, broker: broker, options: options)) }
            // The largest home again with per-characteristic `$meta` (gateway.characteristic_meta:
            // true, the default before contract version 3): what that choice costs.
            if let largest = options.sizes.max() {
                results.scale.append(try await measureScale(largest, broker: broker, options: options, characteristicMeta: true))
            }
        }
        await broker.stop()
        if options.runs(.hap) { results.hap = try await HAPBench.run(iterations: options.hapIterations) }
        if options.runs(.coap) { results.coap = try await CoAPBench.run(iterations: options.hapIterations) }
        if options.runs(.many) { results.many = try await ManyBench.run(devices: options.manyDevices, rounds: options.manyRounds) }
        if options.runs(.matter) { results.matter = try await MatterBench.run(iterations: options.hapIterations) }
        return results
    }

    static func measureSets(_ home: ScaleRun, broker: Mosquitto, options: Options, into results: inout Results) async throws {
        _ = try await Measure.gatewayStatistics(broker: broker, base: home.base, reset: true)
        log("set round trip through the gateway, QoS 1, \(options.messages) sets")
        results.setRoundTrip = try await Measure.setRoundTrip(broker: broker, topic: home.setTopic, count: options.messages, warmUp: options.warmUp)
        results.gatewayOwnTime = try await Measure.gatewayStatistics(broker: broker, base: home.base, reset: false).compactMapValues { $0 as? Double }
    }

    static func measureCPU(_ home: ScaleRun, broker: Mosquitto, options: Options, into results: inout Results) async throws {
        guard let brokerPid = broker.pid else { throw FixtureError("the broker is not running") }
        log("CPU time per set, gateway and broker, over \(options.cpuSets) sets")
        results.cpu = try await Measure.cpuPerSet(gateway: home.gateway.child.pid, broker: brokerPid, brokerURL: broker,
                                                  topic: home.setTopic, count: options.cpuSets)
    }

    static func measureFanOut(_ home: ScaleRun, broker: Mosquitto, options: Options, into results: inout Results) async throws {
        for qos in [QoS.atMostOnce, .atLeastOnce] {
            log("fan-out at QoS \(qos.rawValue), \(options.fanOut) messages")
            let plain = try await Measure.plainFanOut(broker: broker, count: options.fanOut, qos: qos)
            let gateway = try await Measure.gatewayFanOut(broker: broker, base: home.base, accessory: home.firstAccessory,
                                                          valueTopic: home.valueTopic, count: options.fanOut, qos: qos)
            results.fanOut["qos\(qos.rawValue)"] = FanOut(plainPerSecond: plain.rounded(), gatewayPerSecond: gateway.rounded())
        }
    }

    static func measureScale(_ size: Int, broker: Mosquitto, options: Options, characteristicMeta: Bool = false) async throws -> Scale {
        log("a plain client retaining \(size * 5) messages")
        let plain = try await Measure.plainRetained(broker: broker, count: size * 5)
        log("a home of \(size) accessories\(characteristicMeta ? ", with per-characteristic $meta" : "")")
        let run = try await ScaleRun.start(broker: broker, accessories: size, characteristicMeta: characteristicMeta)
        let roundTrip = try await Measure.setRoundTrip(broker: broker, topic: run.setTopic, count: options.scaleMessages,
                                                       warmUp: min(options.warmUp, options.scaleMessages))
        let memory = run.residentMegabytes()
        try await run.stop()
        return Scale(accessories: size, characteristicMeta: characteristicMeta, characteristics: size * 5, readySeconds: run.readySeconds, plainRetainedSeconds: plain,
                     residentMegabytes: memory, setRoundTrip: roundTrip)
    }

    static func log(_ text: String) {
        FileHandle.standardError.write(Data("homegate-bench: \(text)\n".utf8))
    }
}

struct FanOut: Codable {
    let plainPerSecond: Double
    let gatewayPerSecond: Double
    var ratio: Double { gatewayPerSecond / max(plainPerSecond, 1) }
}

struct Scale: Codable {
    let accessories: Int
    /// Whether each characteristic had its `$meta` retained (the default).
    let characteristicMeta: Bool
    let characteristics: Int
    /// From the gateway's start to every value published and retained (seen by a subscriber watching
    /// from before the start; then checked, untimed, with a fresh subscriber).
    let readySeconds: Double
    /// A plain client publishing the same number of retained messages (QoS 1, as the gateway
    /// does) until a fresh subscriber reads them all back, measured the same way.
    let plainRetainedSeconds: Double
    let residentMegabytes: Double
    let setRoundTrip: Latencies
    var readyRatio: Double { readySeconds / max(plainRetainedSeconds, 0.001) }
}

/// CPU time (user + system, from `/proc/<pid>/stat`) per set, for the gateway and the broker
/// over the same sets.
struct CPUPerSet: Codable {
    /// One process's share of a set.
    struct Share: Codable {
        let userMicroseconds: Double
        let systemMicroseconds: Double
        /// Voluntary and involuntary, over all its threads.
        let contextSwitches: Double
        var microseconds: Double { userMicroseconds + systemMicroseconds }
    }

    let sets: Int
    let gateway: Share
    let broker: Share
    var ratio: Double { gateway.microseconds / max(broker.microseconds, 0.001) }
}

struct Results: Codable {
    var echo = Latencies([])
    var setRoundTrip = Latencies([])
    var gatewayOwnTime: [String: Double] = [:]
    var fanOut: [String: FanOut] = [:]
    var scale: [Scale] = []
    var hap: HAPBench.Figures?
    /// HAP over CoAP: ours and aiohomekit's CoAP controller against coap_peer.py.
    var coap: HAPBench.Figures?
    var cpu: CPUPerSet?
    var many: ManyBench.Figures?
    var matter: MatterBench.Figures?
}

/// A generated home of `accessories` lightbulbs (5 characteristics each) run by the real gateway.
struct ScaleRun {
    let gateway: HomeGateProcess
    let base: String
    let readySeconds: Double
    let folder: URL
    var firstAccessory: String { "bench-0" }
    var setTopic: String { "\(base)/bench-home/room-0/lamp-0/lightbulb/brightness/set" }
    var valueTopic: String { "\(base)/bench-home/room-0/lamp-0/lightbulb/brightness" }

    static func configuration(accessories: Int, base: String, characteristicMeta: Bool = false) -> String {
        let rooms = max(1, accessories / 50)
        let gateway = characteristicMeta ? "gateway:\n  characteristic_meta: true\n" : ""
        var text = "base_topic: \(base)\nlog_level: warning\n\(gateway)homes:\n  - name: Bench Home\n    rooms: [\((0..<rooms).map { "Room \($0)" }.joined(separator: ", "))]\n    accessories:\n"
        for index in 0..<accessories {
            text += """
                  - id: bench-\(index)
                    name: Lamp \(index)
                    room: Room \(index % rooms)
                    services:
                      - type: lightbulb
                        characteristics: {on: false, brightness: 50, hue: 10, saturation: 20, color-temperature: 300}

            """
        }
        return text
    }

    nonisolated(unsafe) private static var runs = 0

    static func start(broker: Mosquitto, accessories: Int, characteristicMeta: Bool = false) async throws -> ScaleRun {
        // A base of its own per run: a home measured twice in one run must not find its values retained.
        runs += 1
        let base = "bench\(accessories)-\(runs)"
        let folder = try TemporaryDirectory.make(prefix: "bench-\(accessories)")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try configuration(accessories: accessories, base: base, characteristicMeta: characteristicMeta).write(toFile: configFile, atomically: true, encoding: .utf8)
        let watcher = try await RetainedWatcher.start(broker: broker, base: base)
        let start = ContinuousClock.now
        let gateway = try HomeGateProcess(["run", "--config", configFile, "--mqtt-url", broker.url.description,
                                           "--data-dir", folder.appendingPathComponent("data").path, "--log-level", "info"])
        try await watcher.waitFor(accessories * 5)
        let ready = Measure.seconds(since: start)
        await watcher.stop()
        try await waitForRetained(accessories * 5, broker: broker, base: base)
        return ScaleRun(gateway: gateway, base: base, readySeconds: ready, folder: folder)
    }

    /// How many characteristic values a fresh subscriber finds retained under `base`.
    /// Checks (untimed) that a fresh subscriber finds at least `expected` values retained.
    static func waitForRetained(_ expected: Int, broker: Mosquitto, base: String) async throws {
        for _ in 0..<100 where try await retainedValueCount(broker: broker, base: base) >= expected { return }
        throw FixtureError("fewer than \(expected) values are retained under \(base)")
    }

    static func retainedValueCount(broker: Mosquitto, base: String) async throws -> Int {
        let client = try Client(configuration: TestClient.configuration(broker.url, id: "reader"), logger: TestLogger.make("reader"))
        let run = Task { try await client.run() }
        try await Measure.waitConnected(client)
        let marker = "probe/\(UUID().uuidString)"
        try await client.subscribe([Subscription(TopicFilter("\(base)/#")), Subscription(TopicFilter(marker))])
        try client.send(Message(topic: TopicName(marker), payload: "end"))
        var count = 0
        for await message in client.messages {
            if message.topic.string == marker { break }
            if message.retain, !message.topic.string.contains("$") { count += 1 }
        }
        await client.disconnect()
        _ = await run.result
        return count
    }

    /// The gateway's resident memory, from /proc.
    func residentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(gateway.child.pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return (kilobytes / 1024 * 10).rounded() / 10
    }

    func stop() async throws {
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit(timeout: .seconds(60))
    }
}

/// A subscriber to `<base>/#` (QoS 0, so it never slows the broker down) that counts the distinct
/// value topics (no `$` level) published with a payload: when it has seen them all, the broker
/// has taken and retained them all.
struct RetainedWatcher {
    let client: Client
    let run: Task<Void, any Error>

    static func start(broker: Mosquitto, base: String) async throws -> RetainedWatcher {
        let client = try Client(configuration: TestClient.configuration(broker.url, id: "watcher-\(base)"), logger: TestLogger.make("watcher"))
        let run = Task { try await client.run() }
        try await Measure.waitConnected(client)
        try await client.subscribe([Subscription(TopicFilter("\(base)/#"), qos: .atMostOnce, retainHandling: .doNotSend)])
        return RetainedWatcher(client: client, run: run)
    }

    func waitFor(_ count: Int) async throws {
        let seen = try await withDeadline(.seconds(300)) { () async -> Int in
            var topics = Set<String>()
            for await message in client.messages where !message.payload.isEmpty && !message.topic.string.contains("$") {
                topics.insert(message.topic.string)
                if topics.count >= count { break }
            }
            return topics.count
        }
        guard let seen, seen >= count else { throw FixtureError("saw \(seen ?? 0) of \(count) values published") }
    }

    func stop() async {
        await client.disconnect()
        _ = await run.result
    }
}

import Foundation
import Harness
import MQTT
import Timing

/// The many-devices section (issue 23): N HAP accessory servers in one Python process
/// (`many_peers.py`, HAP-python 5.0.0, each its own port, device id and pairings) paired with
/// the real gateway, which is then started again on them, against a fresh broker (so that
/// everything retained is the new process's): the time from its start until every device is
/// reachable (`$reachable` = `true`, seen by a subscriber from before the start), set -> acknowledgement one at a time across the devices, an event from
/// every device at once, and the gateway's threads and resident memory, against the same
/// gateway with no device in the same run (the memory per device is the difference over N).
enum ManyBench {
    struct Figures: Codable {
        let devices: Int
        /// From the gateway's start until a subscriber has seen every device reachable.
        let reachableSeconds: Double
        /// Sets, one at a time, each waiting for its acknowledgement, across all the devices.
        let setRoundTrip: Latencies
        /// From every device changing a value at once until a subscriber has every change.
        let eventsSeconds: Double
        /// The gateway with no HAP device (after start-up and a round trip through it).
        let baselineThreads: Int
        let baselineResidentMegabytes: Double
        /// The gateway once every device is reachable.
        let threads: Int
        let residentMegabytes: Double
        /// The same after the sets and the events.
        let threadsAfterSets: Int
        let residentMegabytesAfterSets: Double
        /// Per device: (resident after the sets - baseline) / devices, in MB.
        let residentMegabytesPerDevice: Double
    }

    static let base = "many"

    static func configuration() -> String {
        """
        base_topic: \(base)
        log_level: info
        homes:
          - name: Bench Home
            primary: true
            rooms: [Office]

        """
    }

    static func run(devices: Int, rounds: Int) async throws -> Figures {
        Bench.log("many devices: starting \(devices) HAP-python accessory servers in one process")
        let peers = try await ManyPeers.start(count: devices, timeout: .seconds(300))
        do {
            let figures = try await run(peers: peers, rounds: rounds)
            await peers.stop()
            return figures
        } catch {
            await peers.stop()
            throw error
        }
    }

    private static func run(peers: ManyPeers, rounds: Int) async throws -> Figures {
        let devices = peers.peers.count
        let folder = try TemporaryDirectory.make(prefix: "bench-many")
        let configFile = folder.appendingPathComponent("homegate.yml").path
        try configuration().write(toFile: configFile, atomically: true, encoding: .utf8)
        func arguments(_ broker: Mosquitto) -> [String] {
            ["run", "--config", configFile, "--mqtt-url", broker.url.description, "--data-dir", folder.appendingPathComponent("data").path]
        }

        // The baseline: the same gateway with no HAP device; it then pairs them all.
        Bench.log("many devices: the gateway with no device (baseline), then pairing \(devices) through accessory/pair")
        let pairingBroker = try await Mosquitto.start()
        let empty = try HomeGateProcess(arguments(pairingBroker))
        let baseline: ProcessStatus
        do {
            try await empty.waitForOutput(containing: "synchronised with the broker", timeout: .seconds(60))
            _ = try await Measure.gatewayStatistics(broker: pairingBroker, base: base, reset: false) // a round trip through it
            baseline = try ProcessStatus.read(empty.child.pid)
            try await peers.pairAll(broker: pairingBroker, base: base, room: "Office", timeout: .seconds(120))
            try await stop(empty)
        } catch {
            empty.signal(SIGKILL)
            await pairingBroker.stop()
            throw error
        }
        await pairingBroker.stop()

        let broker = try await Mosquitto.start()
        do {
            let figures = try await measure(peers: peers, broker: broker, arguments: arguments(broker), baseline: baseline, rounds: rounds)
            await broker.stop()
            return figures
        } catch {
            await broker.stop()
            throw error
        }
    }

    private static func measure(peers: ManyPeers, broker: Mosquitto, arguments: [String], baseline: ProcessStatus, rounds: Int) async throws -> Figures {
        let devices = peers.peers.count
        Bench.log("many devices: the gateway started on \(devices) paired devices, a fresh broker")
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "many-reachable"))
        try await watcher.subscribe("\(base)/+/+/+/$reachable")
        let start = ContinuousClock.now
        let gateway = try HomeGateProcess(arguments)
        do {
            let topics = try await watcher.inbox.wait(timeout: .seconds(300), for: "\(devices) devices reachable") { messages -> Set<String>? in
                let reachable = ManyPeers.reachable(in: messages, live: false)
                return reachable.count >= devices ? reachable : nil
            }
            let reachableSeconds = Measure.seconds(since: start)
            let reached = try ProcessStatus.read(gateway.child.pid)
            await watcher.stop()
            Bench.log("many devices: all \(devices) reachable after \(reachableSeconds) s; \(reached.threads) threads, \(reached.residentMegabytes) MB")

            Bench.log("many devices: \(rounds) rounds of one set per device, one at a time")
            let sets = try await setRoundTrips(broker: broker, accessories: topics.sorted(), rounds: rounds)
            Bench.log("many devices: every device changes its brightness at once")
            let events = try await eventsSeconds(peers: peers, broker: broker, accessories: topics)
            let settled = try ProcessStatus.read(gateway.child.pid)
            try await stop(gateway)
            return Figures(devices: devices, reachableSeconds: reachableSeconds, setRoundTrip: sets, eventsSeconds: events,
                           baselineThreads: baseline.threads, baselineResidentMegabytes: baseline.residentMegabytes,
                           threads: reached.threads, residentMegabytes: reached.residentMegabytes,
                           threadsAfterSets: settled.threads, residentMegabytesAfterSets: settled.residentMegabytes,
                           residentMegabytesPerDevice: (Double(settled.residentKilobytes - baseline.residentKilobytes) / 1024 / Double(max(devices, 1)) * 1000).rounded() / 1000)
        } catch {
            gateway.signal(SIGKILL)
            throw error
        }
    }

    /// `rounds` sets of each device's brightness, one at a time, each waiting for its acknowledgement.
    private static func setRoundTrips(broker: Mosquitto, accessories: [String], rounds: Int) async throws -> Latencies {
        let client = try Client(configuration: TestClient.configuration(broker.url, id: "many-setter"), logger: TestLogger.make("many-setter"))
        let run = Task { try await client.run() }
        try await Measure.waitConnected(client)
        try await client.subscribe([Subscription(TopicFilter("\(base)/+/+/+/lightbulb/brightness/set/result"))])
        let setTopics = try accessories.map { try TopicName("\($0)/lightbulb/brightness/set") }
        var replies = client.messages.makeAsyncIterator()
        var samples: [Duration] = []
        for round in 0..<rounds {
            for (index, topic) in setTopics.enumerated() {
                let start = ContinuousClock.now
                try client.send(Message(topic: topic, payload: Array("\(10 + (round * 7 + index) % 90)".utf8), qos: .atLeastOnce))
                guard let reply = await replies.next() else { throw FixtureError("no acknowledgement") }
                guard reply.topic.string == "\(topic.string)/result", reply.payloadString.contains("\"ok\":true") else {
                    throw FixtureError("a set failed: \(reply.topic.string) \(reply.payloadString)")
                }
                samples.append(start.duration(to: .now))
            }
        }
        await client.disconnect()
        _ = await run.result
        return Latencies(samples)
    }

    /// Seconds from asking every device to change its brightness until a subscriber has every change.
    private static func eventsSeconds(peers: ManyPeers, broker: Mosquitto, accessories: Set<String>) async throws -> Double {
        let watcher = try await TestClient.connect(TestClient.configuration(broker.url, id: "many-events"))
        try await watcher.subscribe("\(base)/+/+/+/lightbulb/brightness", qos: .atMostOnce)
        let expected = Set(accessories.map { "\($0)/lightbulb/brightness" })
        let start = ContinuousClock.now
        try await peers.set("Brightness", json: "7")
        _ = try await watcher.inbox.wait(timeout: .seconds(120), for: "an event from every device") { messages -> Bool? in
            let seen = Set(messages.filter { !$0.retain && $0.payloadString == "7" }.map(\.topic.string))
            return seen.isSuperset(of: expected) ? true : nil
        }
        let seconds = Measure.seconds(since: start)
        await watcher.stop()
        return seconds
    }

    private static func stop(_ gateway: HomeGateProcess) async throws {
        gateway.signal(SIGTERM)
        _ = try await gateway.waitForExit(timeout: .seconds(60))
    }
}

import Foundation
import MQTT
import Harness
import Timing


/// The measurements; each uses its own clients against a broker the harness started.
enum Measure {
    /// Broker echo: client A publishes, client B echoes, A waits; QoS 1.
    static func echo(broker: Mosquitto, count: Int, warmUp: Int) async throws -> Latencies {
        let echoer = try Client(configuration: TestClient.configuration(broker.url, id: "echo"), logger: TestLogger.make("echo"))
        let echoRun = Task { try await echoer.run() }
        try await waitConnected(echoer)
        try await echoer.subscribe([Subscription(TopicFilter("bench/ping"))])
        let pong = try TopicName("bench/pong")
        let forwarding = Task {
            for await message in echoer.messages where message.topic.string == "bench/ping" {
                try? echoer.send(Message(topic: pong, payload: message.payload, qos: .atLeastOnce))
            }
        }
        let pinger = try Client(configuration: TestClient.configuration(broker.url, id: "ping"), logger: TestLogger.make("ping"))
        let run = Task { try await pinger.run() }
        try await waitConnected(pinger)
        try await pinger.subscribe([Subscription(TopicFilter("bench/pong"))])
        let ping = try TopicName("bench/ping")
        var replies = pinger.messages.makeAsyncIterator()
        var samples: [Duration] = []
        for index in 0..<(warmUp + count) {
            let start = ContinuousClock.now
            try pinger.send(Message(topic: ping, payload: Array("\(index)".utf8), qos: .atLeastOnce))
            guard await replies.next() != nil else { throw FixtureError("the echo stopped") }
            if index >= warmUp { samples.append(start.duration(to: .now)) }
        }
        forwarding.cancel()
        await pinger.disconnect()
        _ = await run.result
        await echoer.disconnect()
        _ = await echoRun.result
        return Latencies(samples)
    }

    /// Set -> acknowledgement through the gateway: one set at a time, QoS 1.
    static func setRoundTrip(broker: Mosquitto, topic: String, count: Int, warmUp: Int) async throws -> Latencies {
        let client = try Client(configuration: TestClient.configuration(broker.url, id: "setter"), logger: TestLogger.make("setter"))
        let run = Task { try await client.run() }
        try await waitConnected(client)
        try await client.subscribe([Subscription(TopicFilter("\(topic)/result"))])
        let set = try TopicName(topic)
        var replies = client.messages.makeAsyncIterator()
        var samples: [Duration] = []
        for index in 0..<(warmUp + count) {
            let start = ContinuousClock.now
            try client.send(Message(topic: set, payload: Array("\(index % 101)".utf8), qos: .atLeastOnce))
            guard let reply = await replies.next() else { throw FixtureError("no acknowledgement") }
            guard reply.payloadString.contains("\"ok\":true") else { throw FixtureError("a set failed: \(reply.payloadString)") }
            if index >= warmUp { samples.append(start.duration(to: .now)) }
        }
        await client.disconnect()
        _ = await run.result
        return Latencies(samples)
    }

    /// Messages per second a subscriber receives from a plain publisher sending `count` as fast
    /// as it can.
    static func plainFanOut(broker: Mosquitto, count: Int, qos: QoS) async throws -> Double {
        let subscriber = try await subscriberCounting(broker: broker, filter: "bench/fan/#", qos: qos)
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "fan-pub"))
        let topic = try TopicName("bench/fan/value")
        let start = ContinuousClock.now
        for index in 0..<count {
            try publisher.client.send(Message(topic: topic, payload: Array("\(index % 101)".utf8), qos: qos))
        }
        let rate = try await subscriber.rate(expecting: count, since: start)
        await publisher.stop()
        await subscriber.stop()
        return rate
    }

    /// Messages per second a subscriber receives while the simulator floods one characteristic
    /// and the gateway publishes every change.
    static func gatewayFanOut(broker: Mosquitto, base: String, accessory: String, valueTopic: String, count: Int, qos: QoS) async throws -> Double {
        let subscriber = try await subscriberCounting(broker: broker, filter: valueTopic, qos: qos, skipRetained: true)
        let requester = try await TestClient.connect(TestClient.configuration(broker.url, id: "flood"))
        let start = ContinuousClock.now
        try await requester.publish("\(base)/$request/simulator/flood", "{\"accessory\": \"\(accessory)\", \"characteristic\": \"brightness\", \"count\": \(count)}")
        let rate = try await subscriber.rate(expecting: count, since: start)
        await requester.stop()
        await subscriber.stop()
        return rate
    }

    /// The gateway's own time per command, as it reports it.
    static func gatewayStatistics(broker: Mosquitto, base: String, reset: Bool) async throws -> [String: Any] {
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "stats"))
        try await client.subscribe("\(base)/$response/gateway/statistics")
        try await client.publish("\(base)/$request/gateway/statistics", reset ? "{\"reset\": true}" : "{}")
        let answer = try await client.inbox.first(on: "\(base)/$response/gateway/statistics")
        await client.stop()
        guard let object = try JSONSerialization.jsonObject(with: Data(answer.payload)) as? [String: Any] else {
            throw FixtureError("the statistics answer is not a JSON object: \(answer.payloadString)")
        }
        return object["data"] as? [String: Any] ?? [:]
    }

    /// Seconds since `start`, to the millisecond.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let seconds = start.duration(to: .now).secondsValue
        return (seconds * 1000).rounded() / 1000
    }

    /// The baseline for start-up: a plain client publishes `count` retained messages at QoS 1 as
    /// fast as it can; seconds until a watching subscriber has seen them all (the same check as
    /// the gateway's start-up figure), then checked (untimed) with a fresh subscriber.
    static func plainRetained(broker: Mosquitto, count: Int) async throws -> Double {
        let base = "plain\(count)"
        let watcher = try await RetainedWatcher.start(broker: broker, base: base)
        let publisher = try await TestClient.connect(TestClient.configuration(broker.url, id: "retainer"))
        let topics = try (0..<count).map { try TopicName("\(base)/a\($0 / 5)/c\($0 % 5)") }
        let start = ContinuousClock.now
        for (index, topic) in topics.enumerated() {
            try publisher.client.send(Message(topic: topic, payload: Array("\(index % 101)".utf8), qos: .atLeastOnce, retain: true))
        }
        try await watcher.waitFor(count)
        let seconds = seconds(since: start)
        await watcher.stop()
        try await ScaleRun.waitForRetained(count, broker: broker, base: base)
        for topic in topics { try publisher.client.send(Message(topic: topic, payload: [], qos: .atLeastOnce, retain: true)) }
        await publisher.stop()
        return seconds
    }

    /// CPU time per set of the gateway and the broker, read from `/proc/<pid>/stat` before and
    /// after `count` sets sent one at a time (each waits for its acknowledgement), with the
    /// context switches of all their threads.
    static func cpuPerSet(gateway: pid_t, broker: pid_t, brokerURL: Mosquitto, topic: String, count: Int) async throws -> CPUPerSet {
        _ = try await setRoundTrip(broker: brokerURL, topic: topic, count: min(count, 500), warmUp: 0)
        let gatewayBefore = try ProcessCPU.sample(of: gateway)
        let brokerBefore = try ProcessCPU.sample(of: broker)
        _ = try await setRoundTrip(broker: brokerURL, topic: topic, count: count, warmUp: 0)
        let gatewayUsed = try ProcessCPU.sample(of: gateway) - gatewayBefore
        let brokerUsed = try ProcessCPU.sample(of: broker) - brokerBefore
        return CPUPerSet(sets: count, gateway: gatewayUsed.perSet(count), broker: brokerUsed.perSet(count))
    }

    static func waitConnected(_ client: Client) async throws {
        let connected = try await withDeadline(.seconds(10)) {
            for await event in client.connectionEvents() { if case .connected = event { return true } }
            return false
        }
        guard connected == true else { throw FixtureError("the client did not connect") }
    }

    private static func subscriberCounting(broker: Mosquitto, filter: String, qos: QoS, skipRetained: Bool = false) async throws -> Counter {
        let client = try Client(configuration: TestClient.configuration(broker.url, id: "fan-sub"), logger: TestLogger.make("fan-sub"))
        let run = Task { try await client.run() }
        try await waitConnected(client)
        try await client.subscribe([Subscription(TopicFilter(filter), qos: qos, retainHandling: skipRetained ? .doNotSend : .sendOnSubscribe)])
        return Counter(client: client, run: run)
    }

    /// Counts what a subscriber receives.
    struct Counter {
        let client: Client
        let run: Task<Void, any Error>

        func rate(expecting count: Int, since start: ContinuousClock.Instant) async throws -> Double {
            var received = 0
            var last = start
            let done = try await withDeadline(.seconds(120)) { () async -> (Int, ContinuousClock.Instant) in
                var received = 0
                var last = start
                for await _ in client.messages {
                    received += 1
                    last = .now
                    if received == count { break }
                }
                return (received, last)
            }
            if let done { (received, last) = done }
            guard received == count else { throw FixtureError("the subscriber received \(received) of \(count) messages") }
            let seconds = start.duration(to: last).secondsValue
            return Double(count) / max(seconds, 1e-6)
        }

        func stop() async {
            await client.disconnect()
            _ = await run.result
        }
    }
}

/// A process's CPU time so far (user and system, from `/proc/<pid>/stat`) and the context
/// switches of all its threads (`/proc/<pid>/task/*/status`).
enum ProcessCPU {
    struct Sample {
        var userMicroseconds: Double = 0
        var systemMicroseconds: Double = 0
        var contextSwitches: Double = 0

        static func - (lhs: Sample, rhs: Sample) -> Sample {
            Sample(userMicroseconds: lhs.userMicroseconds - rhs.userMicroseconds, systemMicroseconds: lhs.systemMicroseconds - rhs.systemMicroseconds,
                   contextSwitches: lhs.contextSwitches - rhs.contextSwitches)
        }

        static func + (lhs: Sample, rhs: Sample) -> Sample {
            Sample(userMicroseconds: lhs.userMicroseconds + rhs.userMicroseconds, systemMicroseconds: lhs.systemMicroseconds + rhs.systemMicroseconds,
                   contextSwitches: lhs.contextSwitches + rhs.contextSwitches)
        }

        func perSet(_ count: Int) -> CPUPerSet.Share {
            func tenth(_ value: Double) -> Double { (value / Double(count) * 10).rounded() / 10 }
            return CPUPerSet.Share(userMicroseconds: tenth(userMicroseconds), systemMicroseconds: tenth(systemMicroseconds), contextSwitches: tenth(contextSwitches))
        }
    }

    static func sample(of pid: pid_t) throws -> Sample {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may hold spaces; the fields after it start past the last ')'.
        guard let close = text.lastIndex(of: ")") else { throw FixtureError("/proc/\(pid)/stat has no command field") }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 of the file (utime, stime) are the 12th and 13th after the command.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw FixtureError("/proc/\(pid)/stat: no utime/stime")
        }
        let tick = 1_000_000 / Double(sysconf(Int32(_SC_CLK_TCK)))
        return Sample(userMicroseconds: user * tick, systemMicroseconds: system * tick, contextSwitches: contextSwitches(of: pid))
    }

    private static func contextSwitches(of pid: pid_t) -> Double {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return threads.reduce(0) { total, thread in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)) ?? ""
            return total + status.split(separator: "\n").reduce(0) { sum, line in
                guard line.contains("ctxt_switches:") else { return sum }
                return sum + (Double(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0)
            }
        }
    }
}

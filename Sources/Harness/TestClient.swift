import Foundation
import Logging
import MQTT

/// An MQTT client for tests: running, connected, with everything it receives kept in an inbox.
public final class TestClient: Sendable {
    public let client: Client
    public let inbox: Inbox
    private let runTask: Task<Void, any Error>

    /// Connects with `configuration` and waits until the broker accepted the connection.
    public static func connect(_ configuration: Configuration, timeout: Duration = HangGuard.standard) async throws -> TestClient {
        let client = try Client(configuration: configuration, logger: TestLogger.make("test-client"))
        let events = client.connectionEvents()
        let runTask = Task { try await client.run() }
        let test = TestClient(client: client, runTask: runTask)
        let connected = try await withDeadline(timeout) {
            for await event in events {
                if case .connected = event { return true }
                if case .stopped = event { return false }
            }
            return false
        }
        guard connected == true else {
            await test.stop()
            let outcome = await runTask.result
            if case .failure(let error) = outcome { throw error }
            throw FixtureError("the client did not connect to \(configuration.url) within \(timeout)")
        }
        return test
    }

    /// A configuration for `url` with a unique client id and quick reconnects.
    public static func configuration(_ url: BrokerURL, id: String = "test") -> Configuration {
        Configuration(url: url, clientID: "\(id)-\(UUID().uuidString.prefix(8))", backoff: try! Backoff(initial: .milliseconds(50), maximum: .milliseconds(500))) // swiftlint:disable:this force_try
    }

    private init(client: Client, runTask: Task<Void, any Error>) {
        self.client = client
        self.runTask = runTask
        self.inbox = Inbox(client.messages)
    }

    /// Subscribes and waits for the broker's acknowledgement.
    public func subscribe(_ filter: String, qos: QoS = .atLeastOnce, retainAsPublished: Bool = false) async throws {
        try await client.subscribe([Subscription(TopicFilter(filter), qos: qos, retainAsPublished: retainAsPublished)])
    }

    /// Publishes a text payload.
    public func publish(_ topic: String, _ payload: String, qos: QoS = .atLeastOnce, retain: Bool = false, properties: Message.Properties = .init()) async throws {
        try await client.publish(Message(topic: TopicName(topic), payload: payload, qos: qos, retain: retain, properties: properties))
    }

    /// Disconnects and waits for the run to end.
    public func stop() async {
        await client.disconnect()
        _ = await runTask.result
    }

    /// How the run ended (after ``stop()`` or a fatal refusal).
    public func runResult() async -> Result<Void, any Error> {
        await runTask.result
    }
}

/// Everything a client received, in order, and ways to wait for messages.
public final class Inbox: Sendable {
    private let recorder = Recorder<[Message]>([])
    private let consumer: Task<Void, Never>

    init(_ messages: Client.Messages) {
        let recorder = recorder
        consumer = Task {
            for await message in messages { recorder.update { $0.append(message) } }
        }
    }

    deinit { consumer.cancel() }

    /// All messages so far.
    public var all: [Message] { recorder.value }

    /// Waits for the first message (received at any time) that satisfies `predicate`.
    public func first(timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable (Message) -> Bool) async throws -> Message {
        try await recorder.wait(timeout: timeout, for: "a matching message") { $0.first(where: predicate) }
    }

    /// Waits for a message on `topic`, optionally with `payload`.
    public func first(on topic: String, payload: String? = nil, timeout: Duration = HangGuard.standard) async throws -> Message {
        try await first(timeout: timeout) { $0.topic.string == topic && (payload == nil || $0.payloadString == payload) }
    }

    /// Waits until `extract` finds what it looks for in all the messages so far.
    public func wait<T: Sendable>(timeout: Duration = HangGuard.standard, for what: String, until extract: @escaping @Sendable ([Message]) -> T?) async throws -> T {
        try await recorder.wait(timeout: timeout, for: what, until: extract)
    }

    /// Waits until at least `count` messages satisfy `predicate`; returns them all.
    public func collect(_ count: Int, timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable (Message) -> Bool) async throws -> [Message] {
        try await recorder.wait(timeout: timeout, for: "\(count) matching messages") { messages in
            let matches = messages.filter(predicate)
            return matches.count >= count ? matches : nil
        }
    }
}

/// A value that changes over time, and waiting until it satisfies a condition: woken by each
/// change, never by polling.
public final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    private var version = 0
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]

    public init(_ value: Value) { stored = value }

    public var value: Value { lock.withLock { stored } }

    /// Changes the value and wakes every waiter.
    public func update(_ body: (inout Value) -> Void) {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            body(&stored)
            version += 1
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Waits until `extract` returns a result for the current value, at most `timeout`.
    public func wait<T: Sendable>(timeout: Duration, for what: String, until extract: @escaping @Sendable (Value) -> T?) async throws -> T {
        let result = try await withDeadline(timeout) { () async -> T? in
            while !Task.isCancelled {
                let (current, seen) = self.lock.withLock { (self.stored, self.version) }
                if let result = extract(current) { return result }
                await self.change(after: seen)
            }
            return nil
        }
        if let result = result ?? nil { return result }
        throw FixtureError("waited \(timeout) for \(what); have: \(String(describing: value).prefix(2000))")
    }

    /// Returns once the value has changed since `seen` (at once if it already has), or on cancellation.
    private func change(after seen: Int) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = lock.withLock { () -> Bool in
                    if version != seen || Task.isCancelled { return true }
                    waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// Runs `body`, giving up after `timeout` (nil then).
public func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Loggers for tests: quiet unless HOMEGATE_TEST_LOG is set (to a level such as `debug`).
public enum TestLogger {
    public static func make(_ label: String) -> Logger {
        var logger = Logger(label: label) { label in StreamLogHandler.standardError(label: label) }
        let level = ProcessInfo.processInfo.environment["HOMEGATE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:))
        logger.logLevel = level ?? .critical
        return logger
    }
}

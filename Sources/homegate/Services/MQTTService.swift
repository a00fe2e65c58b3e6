import Logging
import MQTT
import ServiceLifecycle
import Timing

/// The broker connection as a service: connects and reconnects (``MQTT/Client/run()``), publishes
/// `<base>/$state` = `online` after every connect once the engine has subscribed (`ready`), and
/// on graceful shutdown, which reaches it last, publishes `offline` itself and disconnects cleanly. A broker that refuses the gateway for good
/// ends it with the client's error.
struct MQTTService: Service, CustomStringConvertible {
    /// The name service-lifecycle logs it by.
    var description: String { "MQTT client" }

    let client: MQTT.Client
    let baseTopic: TopicName
    let logger: Logger
    /// Returns once a command sent to the broker reaches the engine: the first `online` waits for it.
    let ready: @Sendable () async -> Void
    private let announcer: OnlineAnnouncer

    init(client: MQTT.Client, baseTopic: TopicName, logger: Logger, ready: @escaping @Sendable () async -> Void) {
        self.client = client
        self.baseTopic = baseTopic
        self.logger = logger
        self.ready = ready
        self.announcer = OnlineAnnouncer(client: client, topic: Self.stateTopic(baseTopic), logger: logger)
    }

    /// How long a graceful shutdown waits for the broker to take the `offline` message.
    static let offlineDeadline = Duration.seconds(3)

    /// The retained `offline` state, used as the will and on a clean stop.
    static func offlineMessage(baseTopic: TopicName) -> Message {
        Message(topic: stateTopic(baseTopic), payload: "offline", qos: .atLeastOnce, retain: true)
    }

    static func stateTopic(_ baseTopic: TopicName) -> TopicName {
        // `$state` is a plain level and the base topic leaves room for it (checked when loaded).
        try! baseTopic.appending("$state") // swiftlint:disable:this force_try
    }

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await announceOnlineAfterEveryConnect() }
            group.addTask {
                // Returns at graceful shutdown: then the clean stop; cancelled: the client is gone already.
                guard (try? await gracefulShutdown()) != nil else { return }
                await stopCleanly()
            }
            // Returns after stopCleanly() disconnected; throws if the broker refuses us for good.
            defer { group.cancelAll() }
            try await client.run()
        }
    }

    private func announceOnlineAfterEveryConnect() async {
        await ready()
        // The stream starts with `.connected` when the client is connected already.
        for await event in client.connectionEvents() {
            guard case .connected = event else { continue }
            await announcer.announceOnline()
        }
    }

    /// Publishes `offline`, waiting at most ``offlineDeadline`` for the broker, then disconnects.
    private func stopCleanly() async {
        logger.info("shutting down")
        await announcer.stopAnnouncing()
        guard client.isConnected else {
            // Not connected: the broker published the will when the connection dropped.
            await client.disconnect(sendingWill: true)
            return
        }
        let offline = Self.offlineMessage(baseTopic: baseTopic)
        let published = await withDeadline(ContinuousClock.now + Self.offlineDeadline, on: ContinuousClock()) { [client] in
            (try? await client.publish(offline)) != nil
        } ?? false
        if !published {
            logger.warning("the broker did not take \(offline.topic) = offline in time; asking it to publish the will instead")
        }
        await client.disconnect(sendingWill: !published)
    }
}

/// Publishes `online` after each connect, and never again once shutdown began: `online` cannot
/// overtake the `offline` of a shutdown.
///
/// `Client.publish` hands the message to libmosquitto on the caller's executor before it first
/// suspends, so every `online` handed over here comes before ``stopAnnouncing()`` returns, and
/// therefore before the `offline` published after it.
actor OnlineAnnouncer {
    private let client: MQTT.Client
    private let online: Message
    private let logger: Logger
    private var stopping = false

    init(client: MQTT.Client, topic: TopicName, logger: Logger) {
        self.client = client
        self.online = Message(topic: topic, payload: "online", qos: .atLeastOnce, retain: true)
        self.logger = logger
    }

    func announceOnline() async {
        guard !stopping else { return }
        do {
            try await client.publish(online)
            logger.info("published \(online.topic) = online")
        } catch {
            logger.warning("could not publish \(online.topic) = online: \(error)")
        }
    }

    func stopAnnouncing() {
        stopping = true
    }
}

import Accessories
import Foundation
import Gateway
import HAPDriver
import HomeGateConfig
import HomeModel
import HomeStore
import Logging
import MQTT
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The running gateway: the broker connection, the engine, the simulator, and the gateway's
/// state.
///
/// `<base>/$state` is `online` (retained) after every connect; the broker's Last Will sets it to
/// `offline` if the gateway dies, and a graceful shutdown (SIGINT, SIGTERM) publishes `offline`
/// itself before disconnecting cleanly. SIGHUP reloads the configuration file and the pairings.
struct GatewayService: ServiceLifecycle.Service {
    let client: MQTT.Client
    let engine: Gateway
    let simulator: Simulator
    let hapDriver: HAPDriver
    let drivers: DriverSet
    let baseTopic: TopicName
    let reloader: Reloader
    let metricsServer: MetricsServer?
    let logger: Logger
    private let announcer: OnlineAnnouncer

    init(client: MQTT.Client, engine: Gateway, simulator: Simulator, hapDriver: HAPDriver, drivers: DriverSet, baseTopic: TopicName,
         reloader: Reloader, metricsServer: MetricsServer?, logger: Logger) {
        self.client = client
        self.engine = engine
        self.simulator = simulator
        self.hapDriver = hapDriver
        self.drivers = drivers
        self.baseTopic = baseTopic
        self.reloader = reloader
        self.metricsServer = metricsServer
        self.logger = logger
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
            group.addTask { try await engine.run() }
            group.addTask { try? await simulator.run() }
            group.addTask { await hapDriver.run() }
            group.addTask { await drivers.run() }
            group.addTask { await reloadOnHangUp() }
            if let metricsServer {
                group.addTask {
                    do {
                        try await metricsServer.run()
                    } catch {
                        logger.error("the metrics endpoint stopped: \(error)")
                    }
                }
            }
            group.addTask {
                do {
                    try await gracefulShutdown()
                } catch {
                    return // cancelled: the client has stopped already
                }
                await stopCleanly()
            }
            // Returns after stopCleanly() disconnected; throws if the broker refuses us for good.
            // Either way everything above is done with or cancelled.
            defer { group.cancelAll() }
            try await client.run()
        }
    }

    private func announceOnlineAfterEveryConnect() async {
        for await event in client.connectionEvents() {
            guard case .connected = event else { continue }
            await announcer.announceOnline()
        }
    }

    private func reloadOnHangUp() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            logger.info("SIGHUP: reloading the configuration")
            guard let (homes, configured) = reloader.reload() else { continue }
            let leftOut = await engine.reload(homes: homes)
            reloader.recordApplied(configured, leavingOut: leftOut)
            // New pairings connect (their accessories join when they answer); removed ones leave.
            if let pairings = reloader.pairedDevices() { hapDriver.replaceDevices(pairings) }
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
        let published = await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await client.publish(offline)) != nil }
            group.addTask {
                try? await Task.sleep(for: Self.offlineDeadline)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
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

/// What the metrics endpoint answers: `/metrics` (Prometheus text), `/health` (200 while the
/// broker connection is up, else 503).
enum MetricsEndpoint {
    static func respond(to path: String, engine: Gateway?) async -> (status: Int, contentType: String, body: String) {
        guard let engine else { return (503, "text/plain; charset=utf-8", "starting\n") }
        switch path {
        case "/metrics":
            return (200, "text/plain; version=0.0.4; charset=utf-8", await engine.metricsText())
        case "/health":
            return await engine.isConnectedToBroker
                ? (200, "text/plain; charset=utf-8", "ok\n")
                : (503, "text/plain; charset=utf-8", "not connected to the broker\n")
        default:
            return (404, "text/plain; charset=utf-8", "not found; try /metrics or /health\n")
        }
    }
}

/// The engine, once it exists (the metrics endpoint is opened before it).
final class EngineReference: Sendable {
    private let stored = Mutex<Gateway?>(nil)

    var engine: Gateway? { stored.withLock { $0 } }

    func set(_ engine: Gateway) {
        stored.withLock { $0 = engine }
    }
}

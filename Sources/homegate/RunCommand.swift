import Accessories
import ArgumentParser
import Foundation
import Gateway
import HAP
import HAPDriver
import HomeGateConfig
import HomeModel
import HomeStore
import Logging
import Matter
import MatterDriver
import MQTT
import Metrics
import Prometheus
import ServiceLifecycle
import UnixSignals
import WebServer
import WebUI
import Wire

/// `homegate run`: connects to the broker and serves until SIGINT or SIGTERM.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gateway: connect to the broker and serve until SIGINT or SIGTERM."
    )

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    @Option(name: .customLong("mqtt-url"), help: "The broker, mqtt://host[:port] or mqtts://host[:port]; overrides mqtt.url.")
    var mqttURL: String?

    @Option(name: .customLong("data-dir"), help: "Where the gateway keeps its state; overrides data_dir.")
    var dataDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical; overrides log_level.")
    var logLevel: String?

    func validate() throws {
        if let mqttURL {
            do {
                _ = try BrokerURL(parsing: mqttURL)
            } catch {
                throw ValidationError("--mqtt-url: \(error.reason)")
            }
        }
        if let logLevel, Logger.Level(rawValue: logLevel.lowercased()) == nil {
            throw ValidationError("--log-level: expected one of \(ConfigFile.logLevelNames.joined(separator: ", ")), got \"\(logLevel)\"")
        }
    }

    func run() async throws {
        let (group, logger, maintenance, lock) = try await assemble()
        defer { withExtendedLifetime(lock) {} } // held until the gateway has stopped
        do {
            try await group.run()
        } catch let error as ClientError where error.isConnectionRefusal {
            await maintenance?.discardStaged()
            printError(error.description)
            throw error.isAuthenticationFailure ? HomeGateExit.notAuthorized : HomeGateExit.refused
        } catch {
            await maintenance?.discardStaged()
            throw error
        }
        // A backup restored from the page: in place now that every part stopped, then the
        // same binary with the same arguments.
        if let maintenance, await maintenance.finishRestore() != nil {
            GatewayMaintenance.execAgain(logger: logger)
            throw HomeGateExit.ioError
        }
        logger.info("HomeGate stopped")
    }

    /// Reads the configuration and the store and makes every part, ready to run. (Its own
    /// function, so the configuration file's model is let go once the parts are made.)
    private func assemble() async throws -> (ServiceLifecycle.ServiceGroup, Logger, GatewayMaintenance?, DataDirectoryLock) {
        let started = ContinuousClock.now
        var file = try loadConfiguration()
        let logger = LogSetup.bootstrap(level: file.logLevel)
        logger.debug("configuration read in \(started.duration(to: .now)), \(Gateway.residentMemory)")
        try prepareDataDirectory(file.dataDirectory, logger: logger)
        let lock = try lockDataDirectory(file.dataDirectory)
        file.mqtt.will = MQTTService.offlineMessage(baseTopic: file.baseTopic)
        let client: MQTT.Client
        do {
            client = try MQTT.Client(configuration: file.mqtt, logger: logger)
        } catch {
            printError("mqtt: \(error.message)")
            throw HomeGateExit.configuration
        }
        // The HTTP port is checked before anything is stored: a port in use stops the start
        // without recording the configuration as applied.
        for (section, host, port) in [("metrics", file.metrics?.host, file.metrics?.port), ("ui", file.ui?.host, file.ui?.port)] {
            guard let host, let port else { continue }
            do {
                try PortProbe.checkFree(host: host, port: port)
            } catch {
                printError("\(section): \(error)")
                throw HomeGateExit.configuration
            }
        }
        let maintenance = file.ui == nil ? nil
            : GatewayMaintenance(dataDirectory: file.dataDirectory, configurationFile: URL(fileURLWithPath: config).standardizedFileURL.path, logger: logger)
        let webPage = try makeWebPage(file, maintenance: maintenance, logger: logger)
        let store: HomeStore
        let homes: [Home]
        let storedLayout: LayoutDigest?
        let reloader: Reloader
        let configurationToRecord: [Home]?
        do {
            store = try HomeStore(directory: file.dataDirectory)
            reloader = Reloader(configPath: config, overrides: overrides, store: store, logger: logger)
            (homes, storedLayout, configurationToRecord) = try reloader.initialLayout(file)
        } catch {
            printError("\(error)")
            throw HomeGateExit.configuration
        }
        logger.debug("layout merged with the store after \(started.duration(to: .now)), \(Gateway.residentMemory)")
        logger.info("HomeGate starting: broker \(file.mqtt.url), base topic \(file.baseTopic), data in \(file.dataDirectory)")
        let simulator = Simulator(devices: file.simulatorDevices, seed: file.simulatorSeed ?? .random(in: 0...UInt64.max))
        let hapDriver: HAPDriver
        let controller: ControllerIdentity
        do {
            controller = try PairingStore(store: store, file: file).controllerIdentity()
            var hapSettings = HAPDriver.Configuration()
            hapSettings.browseInterval = file.hap.browseInterval
            hapSettings.alwaysBrowsing = file.hap.alwaysBrowsing
            hapSettings.availability = file.availability
            hapDriver = HAPDriver(controller: controller, devices: PairingStore.devices(try store.pairings()), configuration: hapSettings,
                                  logger: logger) { [logger] moved in
                PairingStore.storeAddress(of: moved, in: store, logger: logger)
            }
        } catch {
            printError("\(error)")
            throw HomeGateExit.configuration
        }
        let matterDriver = file.matter.map { settings in
            MatterDriver(configuration: .init(server: Matter.Client.Configuration(url: settings.url)), logger: logger)
        }
        let drivers = DriverSet([simulator, hapDriver] + (matterDriver.map { [$0] } ?? []))
        let browser = AccessoryBrowser(hap: hapDriver, matter: matterDriver, logger: logger)
        let registry = PrometheusCollectorRegistry()
        let metricsFactory = DescribedMetricsFactory(registry: registry, descriptions: Gateway.metricDescriptions)
        var engineConfiguration = Gateway.Configuration(baseTopic: file.baseTopic, writeTimeout: file.engine.writeTimeout,
                                                 queueLimit: file.engine.queueLimit, pollInterval: file.engine.pollInterval,
                                                 output: file.engine.output.engineOutput,
                                                 homeAssistantPrefix: file.homeAssistant.enabled ? file.homeAssistant.prefix : nil,
                                                 missedTriggerGrace: file.engine.missedTriggerGrace, metricsFactory: metricsFactory)
        engineConfiguration.characteristicMeta = file.engine.characteristicMeta
        engineConfiguration.snapshotInterval = file.engine.snapshotInterval
        engineConfiguration.healthInterval = file.engine.healthInterval
        engineConfiguration.lastSeenInterval = file.engine.lastSeenInterval
        engineConfiguration.processFigures = { ProcessMetrics.healthFigures() }
        engineConfiguration.options = file.options
        engineConfiguration.withheld = webPage?.withheld
        engineConfiguration.history = file.history.enabled
            ? Gateway.History(retention: .seconds(file.history.days * 86_400), maxPoints: file.history.maxPoints) : nil
        let engine = Gateway(
            configuration: engineConfiguration,
            bus: client, driver: drivers, simulator: simulator,
            pairing: GatewayPairing(store: store, controller: controller, driver: hapDriver, matter: matterDriver, browser: browser, logger: logger), store: store, homes: homes,
            storedLayout: storedLayout, logger: logger
        )
        if let configurationToRecord {
            let digest = file.sourceDigest
            await engine.storeAfterFirstSync("record the configuration as applied") { store throws(StoreError) in
                try store.saveLastAppliedConfiguration(configurationToRecord, digest: digest)
            }
        }
        // In the order they start; a graceful shutdown stops them in the reverse order, so the
        // broker connection goes last and publishes `offline` after everything else stopped.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: MQTTService(client: client, baseTopic: file.baseTopic, logger: logger, ready: { await engine.waitUntilSubscribed() })),
            .init(service: PartService("simulator", logger: logger) { try await simulator.run() }),
            .init(service: PartService("HAP devices", logger: logger) { await hapDriver.run() }),
        ]
        if let settings = file.matter, settings.managed {
            let server = ManagedMatterServer(command: settings.command, port: settings.port, storage: file.dataDirectory + "/matter", logger: logger)
            services.append(.init(service: PartService("managed Matter Server", logger: logger) { try await server.run() }))
        }
        if let matterDriver {
            services.append(.init(service: PartService("Matter devices", logger: logger) { await matterDriver.run() }))
        }
        services.append(.init(service: PartService("accessory browser", logger: logger) { await browser.run() }))
        services += [
            .init(service: PartService("engine", logger: logger) { try await engine.run() }),
        ]
        if let settings = file.metrics {
            let connectionMetrics = BrokerConnectionMetrics(client: client, registry: registry)
            BuildInfoMetric.record(in: registry)
            let endpoints = WebServer.Endpoints(metrics: {
                connectionMetrics.update()
                return registry.emitToBuffer() + ProcessMetrics.exposition()
            }, health: { await engine.isConnectedToBroker })
            let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
            services.append(.init(service: WebServer(configuration: .init(host: settings.host, port: settings.port), endpoints: endpoints,
                                                     logger: logger) { port in
                logger.info("metrics on http://\(host):\(port)/metrics, health on /health")
            }))
        }
        if let webPage {
            services.append(.init(service: PartService("web page's broker connection", logger: logger) { try await webPage.feed.run() }))
            services.append(.init(service: webPage.server))
        }
        if let maintenance {
            services.append(.init(service: RestartService(maintenance: maintenance, logger: logger), successTerminationBehavior: .gracefullyShutdownGroup))
        }
        // SIGHUP is trapped now, before any part starts: one sent the moment `$state` says
        // `online` waits for the reloader instead of being ignored.
        let hangUps = await UnixSignalsSequence(trapping: .sighup)
        let applied = file.homes
        services.append(.init(service: PartService("configuration reloader", logger: logger) {
            await reloader.reloadOnHangUp(hangUps, applied: applied, engine: engine, simulator: simulator, hapDriver: hapDriver)
        }))
        // A part that fails shuts the group down gracefully too, never by cancelling it: the web
        // servers then drain their connections (cancelling one while it holds a connection it
        // accepted but has not served yet traps in NIO: apple/swift-nio#3481), and the broker
        // connection still goes last. The part's error is what the group throws in the end.
        for index in services.indices { services[index].failureTerminationBehavior = .gracefullyShutdownGroup }
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(15)
        return (ServiceLifecycle.ServiceGroup(configuration: configuration), logger, maintenance, lock)
    }

    /// The web page (`ui:`), if configured: its server and the broker connection that feeds it,
    /// which uses the gateway's account under the client id `<client id>-ui`.
    private func makeWebPage(_ file: ConfigFile, maintenance: GatewayMaintenance?, logger: Logger) throws -> (server: WebUI, feed: LiveFeed, withheld: WithheldMessages)? {
        guard let settings = file.ui else { return nil }
        var mqtt = file.mqtt
        mqtt.clientID += "-ui"
        mqtt.will = nil
        mqtt.cleanStart = true
        let feed: LiveFeed
        let server: WebUI
        // What the options hold back from the broker reaches the page through the feed.
        let withheld = WithheldMessages()
        do {
            feed = LiveFeed(client: try MQTT.Client(configuration: mqtt, logger: logger),
                            configuration: .init(baseTopic: file.baseTopic, withheld: withheld), logger: logger)
            let configuration = WebUI.Configuration(
                host: settings.host, port: settings.port,
                signIn: settings.usersFile.flatMap { users in settings.passwordFile.map { (users, $0) } },
                tls: settings.tls.map { ($0.certificateFile, $0.keyFile) }, sessionTimeout: settings.sessionTimeout,
                maintenance: maintenance?.forWebPage
            )
            let scheme = settings.tls == nil ? "http" : "https"
            let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
            let access = settings.usersFile == nil ? "no sign-in: everyone who reaches it is an admin" : "sign-in with the users file"
            server = try WebUI(configuration: configuration, feed: feed, baseTopic: file.baseTopic, logger: logger) { port in
                logger.info("web page on \(scheme)://\(host):\(port)/ (\(access))")
            }
        } catch let error as WebUI.StartError {
            printError(error.description)
            throw HomeGateExit.configuration
        } catch {
            printError("ui: \(error)")
            throw HomeGateExit.configuration
        }
        return (server, feed, withheld)
    }

    /// The command-line overrides (checked in ``validate()``).
    private var overrides: ConfigFile.Overrides {
        ConfigFile.Overrides(
            mqttURL: mqttURL.flatMap { try? BrokerURL(parsing: $0) },
            dataDirectory: dataDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
            logLevel: logLevel.flatMap { Logger.Level(rawValue: $0.lowercased()) }
        )
    }

    /// The configuration file with the command-line overrides applied.
    private func loadConfiguration() throws -> ConfigFile {
        try loadConfigFileOrExit(config, overrides: overrides)
    }

    /// Creates the data directory with mode 0700 if it does not exist.
    /// Takes the data directory's lock, or says who holds it: exit 75 when another gateway runs
    /// on it, 78 when the lock file cannot be made.
    private func lockDataDirectory(_ path: String) throws -> DataDirectoryLock {
        do {
            return try DataDirectoryLock.acquire(path)
        } catch {
            printError(error.description)
            throw error.isHeld ? HomeGateExit.dataDirectoryInUse : HomeGateExit.configuration
        }
    }

    private func prepareDataDirectory(_ path: String, logger: Logger) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                printError("data directory \(path) exists and is not a directory")
                throw HomeGateExit.configuration
            }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            logger.info("created the data directory \(path) (mode 0700)")
        } catch {
            printError("cannot create the data directory \(path): \(error.localizedDescription)")
            throw HomeGateExit.configuration
        }
    }
}

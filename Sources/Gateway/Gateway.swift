import Accessories
import CoreMetrics
import Foundation
import HomeModel
import HomeStore
import Logging
import MQTT
import Timing
import Wire

/// The engine: maps the home tree onto MQTT and back, as `docs/mqtt-api.md` describes.
///
/// It publishes every value, each accessory's `$meta` and `$reachable`, and `$layout`, retained;
/// turns `.../set` and `.../get` into device writes and reads acknowledged only when the device
/// answered; follows device events; keeps the retained topics under the base exactly those of the
/// tree (clearing stale ones, republishing what a broker lost); serves the simulator controls.
///
/// The data path reads forward: ``InboundCodec`` turns each message into an ``Inbound``
/// (`Inbound/`); what a set, a shortcut or a request names is read against the ``HomeTree``
/// (`Layout/HomeTree.swift` and its `HomeTree+*.swift` beside the code that uses them); commands
/// are run by the ``CommandMachine``, whose actions (device calls, values, acknowledgements) are
/// carried out in `Commands/Gateway+Commands.swift`; device events in
/// `Gateway+DeviceEvents.swift`; what the tree retains (``RetainedTree``) and its hygiene
/// (``RetainedMachine``) in `Retained/`, carried out in `Gateway+Retained.swift`; `$layout`,
/// `$meta` and `$events` in `Layout/`; `$request/...` in `Requests/` and `Management/`;
/// shortcuts and action sets in `Commands/`; timer triggers in `Triggers/`; the accessory
/// browser in `Browser/`; the history of values in `History/`; the options per accessory
/// (retain, QoS, debounce, throttle, exclude, disabled, Home Assistant's names) in `Options/`;
/// Adaptive Lighting in `AdaptiveLighting/`. The actor keeps the state and carries out what
/// these value types decide.
public actor Gateway {
    /// The engine's settings.
    public struct Configuration: Sendable {
        public var baseTopic: TopicName
        /// How long a device may take to confirm a write or answer a read.
        public var writeTimeout: Duration
        /// How many writes and reads may wait per characteristic before -70403 (busy) answers.
        public var queueLimit: Int
        /// How often characteristics that cannot send events are read.
        public var pollInterval: Duration
        /// At most one `$layout` per this interval while changes keep coming.
        public var layoutInterval: Duration
        /// Values as one topic per characteristic, one JSON object per service, or both.
        public var output: Output
        /// Home Assistant's discovery prefix (`homeassistant`); nil: no discovery.
        public var homeAssistantPrefix: String?
        /// How long after its date a timer trigger the gateway could not fire on time (it was
        /// down, the machine slept) still fires, late; older ones are skipped. Zero: never late.
        public var missedTriggerGrace: Duration
        /// The clock the trigger scheduler sleeps on (tests inject their own).
        public var clock: any Clock<Duration>
        /// The wall-clock time trigger dates are compared with.
        public var now: @Sendable () -> Date
        /// The calendar `day` and `week` recurrences count in; its time zone is the gateway's.
        public var calendar: Calendar
        /// Where the engine's metrics go (``EngineMetrics``); the default records nothing.
        public var metricsFactory: any MetricsFactory
        /// Whether each characteristic also has `<characteristic>/$meta` retained, beside the
        /// `services` of its accessory's `$meta` (one more retained message per characteristic:
        /// at 10,000 accessories 50,000; off by default since contract version 3).
        public var characteristicMeta = false
        /// How often every reachable camera's snapshot is taken and published on its
        /// `$snapshot` topic; zero: only when asked (`$request/accessory/snapshot`).
        public var snapshotInterval: Duration = .zero
        /// Each characteristic's values over time, kept in the store and served on
        /// `$request/history/get`; nil: off (nothing recorded, what was kept is deleted).
        public var history: History? = History()
        /// How often `<base>/$health` is published (retained); zero: never.
        public var healthInterval: Duration = .seconds(600)
        /// How often at most an accessory's `$last-seen` is published again.
        public var lastSeenInterval: Duration = .seconds(60)
        /// The process's uptime, memory and CPU time for `$health`, read as `/metrics` reads
        /// them (the executable gives its reader; the default knows none).
        public var processFigures: @Sendable () -> ProcessFigures = { ProcessFigures() }
        /// How each accessory's values are published (the configuration's `options:`; what
        /// `$request/accessory/options` stores lies over it).
        public var options = OptionsTable()
        /// Where the values the options hold back from the broker go (the web page); nil: nowhere.
        public var withheld: WithheldMessages?

        public init(baseTopic: TopicName, writeTimeout: Duration = .seconds(10), queueLimit: Int = 1000,
                    pollInterval: Duration = .seconds(30), layoutInterval: Duration = .seconds(1),
                    output: Output = .values, homeAssistantPrefix: String? = nil,
                    missedTriggerGrace: Duration = .seconds(300), clock: any Clock<Duration> = ContinuousClock(),
                    now: @escaping @Sendable () -> Date = { Date() }, calendar: Calendar = TriggerSchedule.calendar(in: .current),
                    metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance) {
            self.baseTopic = baseTopic
            self.writeTimeout = writeTimeout
            self.queueLimit = queueLimit
            self.pollInterval = pollInterval
            self.layoutInterval = layoutInterval
            self.output = output
            self.homeAssistantPrefix = homeAssistantPrefix
            self.missedTriggerGrace = missedTriggerGrace
            self.clock = clock
            self.now = now
            self.calendar = calendar
            self.metricsFactory = metricsFactory
        }
    }

    /// What is published for values.
    public enum Output: Sendable {
        /// One retained topic per characteristic (the default).
        case values
        /// One retained JSON object per service (`{"on": true, "brightness": 40}`).
        case json
        /// Both.
        case both

        var perCharacteristic: Bool { self != .json }
        var perService: Bool { self != .values }
    }

    let configuration: Configuration
    /// The bus's event loop: the engine runs on the MQTT client's network thread.
    let executor: EventLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let codec: InboundCodec
    let clock: EngineClock
    /// The device work of the engine: device calls, requests that wait for devices, trigger fires.
    let work = DeviceWork()
    let bus: any MessageBus
    let driver: any AccessoryDriver
    let simulator: Simulator?
    /// Pairing with HomeKit devices for `$request/accessory/pair` and `unpair`; nil: not offered.
    let pairing: (any PairingService)?
    let store: HomeStore?
    /// The engine's writes to the store, in order, beside the message loop.
    let storeWriter: StoreWriter
    /// Whether the engine's subscriptions are in place (``waitUntilSubscribed()``).
    private var isSubscribed = false
    /// Rung once, when the subscriptions are in place (``waitUntilSubscribed()``).
    private let subscribed = Alarm()
    let logger: Logger
    let base: String

    /// The homes, with the devices' structure, values and reachability, their topics and where
    /// each accessory is (``HomeTree``).
    var tree: HomeTree
    /// The layout as last stored (so an unchanged layout is not written again).
    var savedLayout: LayoutDigest?
    /// What the gateway asserts, retained, the ledger of it and the synchronisation with the
    /// broker (``RetainedMachine``; its actions are carried out in `Gateway+Retained.swift`).
    var retained: RetainedMachine
    /// The accessory browser's accessories (`<base>/$browser/<device id>`: ``BrowserEntries``).
    var browser: BrowserEntries
    /// Every write and read under way or waiting, and who hears how each went.
    var machine: CommandMachine
    var recipients: [CommandMachine.Ticket: Recipient] = [:]
    /// Wakes the deadline loop (``expireCommandsOnTime()``) when an earlier deadline appears.
    let commandDeadlines = DeadlineAlarm()
    /// The gateway's own time per command (`$request/gateway/statistics`).
    var timings = CommandTimings()
    /// What `$health` reports (and `/metrics` counts alike).
    var health = HealthCounters()
    /// When each accessory was last heard from (`$last-seen`).
    var lastSeen: LastSeen
    /// The retained `$last-seen` messages the broker held at the connection, until the
    /// synchronisation ends (``rememberLastSeenFromBroker()``).
    var brokerLastSeen: [String: [UInt8]] = [:]
    /// The engine's metrics.
    let metrics: EngineMetrics
    /// Whether the broker connection is up (for the metrics and `/health`).
    var connected = false
    /// Connections to the broker so far.
    var connections = 0
    /// The options `$request/accessory/options` stored, per accessory.
    var storedOptions: [AccessoryID: AccessoryOptions] = [:]
    /// What the options make of the tree (``PublishPolicy``), worked out again at every reindex.
    var policy = PublishPolicy()
    /// The debounced and throttled values held (``PublishPacer``), and the wake-up of the loop
    /// that publishes them when due (``releasePacedValues()``).
    var pacer = PublishPacer()
    let pacerDeadlines = DeadlineAlarm()
    /// The bulbs that follow Adaptive Lighting and their renewals (`AdaptiveLighting/`), and
    /// the wake-up of the renewal loop.
    var adaptiveLighting: AdaptiveLightingSchedule
    let renewalDeadlines = DeadlineAlarm()
    /// Wakes the trigger scheduler when the layout changed (`Gateway+Triggers.swift`).
    let triggerAlarm = Alarm()
    /// When ``run()`` began, and when the synchronisation under way began (the debug log's timings).
    var started = ContinuousClock.now
    var synchronisationBegan = ContinuousClock.now

    /// - Parameters:
    ///   - homes: the layout (from ``LayoutMerge``); accessories the driver knows get its
    ///     structure, values and reachability, the others are shown unreachable.
    ///   - simulator: the simulator, when the driver is one, for the `$request/simulator/...` controls.
    ///   - storedLayout: what the store holds now, if the caller read it (saves writing rows that
    ///     nothing changed).
    public init(configuration: Configuration, bus: any MessageBus, driver: any AccessoryDriver, simulator: Simulator? = nil,
                pairing: (any PairingService)? = nil, store: HomeStore?, homes: [Home], storedLayout: LayoutDigest? = nil, logger: Logger) {
        self.pairing = pairing
        self.savedLayout = storedLayout
        self.configuration = configuration
        self.codec = InboundCodec(base: configuration.baseTopic.string, homeAssistantStatus: configuration.homeAssistantPrefix.map { "\($0)/status" })
        self.clock = EngineClock(configuration.clock)
        self.metrics = EngineMetrics(factory: configuration.metricsFactory)
        self.lastSeen = LastSeen(interval: configuration.lastSeenInterval)
        self.machine = CommandMachine(configuration: .init(timeout: configuration.writeTimeout, queueLimit: configuration.queueLimit))
        self.bus = bus
        self.executor = bus.executor
        self.driver = driver
        self.simulator = simulator
        self.store = store
        self.storeWriter = StoreWriter(store: store, logger: logger, historyLimit: configuration.history?.maxPoints ?? 0)
        self.logger = logger
        self.base = configuration.baseTopic.string
        // The topics are laid out once the devices' structure is known (``adoptDeviceStructure()``).
        self.tree = HomeTree(base: configuration.baseTopic.string, homes: homes)
        self.retained = RetainedMachine(base: configuration.baseTopic.string, ledger: (try? store?.retainedTopics()) ?? [])
        self.browser = BrowserEntries(base: configuration.baseTopic.string)
        self.storedOptions = StoredAtStart.options(store, logger: logger)
        self.adaptiveLighting = AdaptiveLightingSchedule(wanted: StoredAtStart.adaptiveLighting(store, logger: logger))
    }

    /// Serves until cancelled: device structure first, then MQTT, device events, the command
    /// deadlines, polling, the layout publisher and the trigger scheduler, with the device work
    /// they start, all in one task group.
    public func run() async throws {
        started = .now
        try await adoptDeviceStructure()
        logger.debug("start: devices' structure adopted after \(started.duration(to: .now)), \(Self.residentMemory)")
        // The bulbs a person left Adaptive Lighting on for get a new day's curve.
        for id in Set(adaptiveLighting.wanted.map(\.accessoryID)) where tree.accessory(id)?.accessory.isReachable == true { resumeAdaptiveLighting(of: id) }
        // Each message and connection change is handled on the MQTT client's network thread as
        // it happens: the engine runs there, so it takes them synchronously, in order (a
        // connection before its messages), and nothing waits in between.
        bus.deliver(to: Client.Consumer(message: { [weak self] message in
            self?.assumeIsolated { $0.handle(message) }
        }, connection: { [weak self] event in
            self?.assumeIsolated { $0.connectionChanged(event) }
        }))
        defer { bus.deliver(to: nil) }
        try await bus.subscribe(subscriptions)
        logger.debug("start: subscribed after \(started.duration(to: .now))")
        // A connection made before the subscriptions synchronises now that they are in place
        // (later ones as they come, in ``connectionChanged(_:)``). The client reported it to the
        // consumer first (``Client/deliver(to:)``, on this thread), so it is noted already.
        if bus.isConnected { beginSync() }
        isSubscribed = true
        subscribed.ring()
        if configuration.history == nil { storeWriter.write("delete the history (history is off)") { store throws(StoreError) in try store.deleteHistory() } }
        defer { storeWriter.drain() } // what was asked to be stored is stored, even on the way out
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.storeWriter.run() }
            group.addTask { await self.work.run() }
            if let pairing {
                let updates = pairing.browserUpdates
                group.addTask { await self.followBrowser(updates) }
            }
            for stream in driver.eventStreams {
                group.addTask { await self.followDeviceEvents(stream) }
            }
            group.addTask { try await self.expireCommandsOnTime() }
            group.addTask { try await self.publishLayoutWhenChanged() }
            group.addTask { try await self.poll() }
            group.addTask { try await self.runTriggers() }
            if let history = configuration.history, store != nil {
                group.addTask { try await self.pruneHistoryPeriodically(history) }
            }
            if configuration.snapshotInterval > .zero {
                group.addTask { try await self.refreshSnapshots() } // a child that returns would end the engine
            }
            if configuration.healthInterval > .zero {
                group.addTask { try await self.publishHealthPeriodically() }
            }
            group.addTask { try await self.publishLastSeenWhenDue() }
            group.addTask { try await self.releasePacedValues() }
            group.addTask { try await self.renewAdaptiveLighting() }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Returns once the engine has subscribed to its topics: from then on a command sent to the
    /// broker reaches it, so `<base>/$state` = `online` waits for this (a command sent on seeing
    /// `online` at the first start would otherwise find no subscription and be lost).
    /// Cancelling the waiting task ends the wait too.
    public nonisolated func waitUntilSubscribed() async {
        await subscribed.wait(unlessRungAfter: Alarm.initialGeneration)
    }

    /// Writes `write` to the store once the first synchronisation was handed to the broker (the
    /// configuration as applied, say: needed by the next start, not by this one's publishing).
    public func storeAfterFirstSync(_ what: String, _ write: @escaping @Sendable (HomeStore) throws(StoreError) -> Void) {
        carry(retained.storeAfterFirstSynchronisation(what, write))
    }

    /// The subscriptions: everything under the base (never our own messages back, retain flags
    /// as published, so a retained set can be told; QoS 1, and the client hands a message the
    /// broker re-sends after a reconnect on only once, so no command runs twice), and the
    /// synchronisation marker.
    var subscriptions: [Subscription] {
        var subscriptions = [
            Subscription(try! TopicFilter("\(base)/#"), qos: .atLeastOnce, noLocal: true, retainAsPublished: true), // swiftlint:disable:this force_try
            Subscription(try! TopicFilter(TopicGrammar.topic(base, .sync, "+")), qos: .atLeastOnce), // swiftlint:disable:this force_try
        ]
        // Home Assistant announces its restarts; the discovery configs are then published again.
        if let prefix = configuration.homeAssistantPrefix, let status = try? TopicFilter("\(prefix)/status") {
            subscriptions.append(Subscription(status, qos: .atLeastOnce))
        }
        return subscriptions
    }

    /// The broker connection came or went (on the client's network thread, before any message of
    /// a new connection). The client has made the subscriptions again by then: the broker sends
    /// every retained message after this.
    private func connectionChanged(_ event: ConnectionEvent) {
        switch event {
        case .connected:
            retained.connectionOpened()
            connections += 1
            metrics.recordConnection(true, reconnect: connections > 1)
            connected = true
            logger.debug("connection \(connections): connected \(started.duration(to: .now)) after the engine started")
            if isSubscribed { beginSync() } // else once subscribed, in ``run()``
        case .disconnected:
            connected = false
            metrics.recordConnection(false, reconnect: false)
        case .reconnecting, .stopped:
            break
        }
    }

    private func followDeviceEvents(_ stream: AsyncStream<AccessoryEvent>) async {
        for await event in stream {
            handle(event)
        }
    }

    /// Takes the devices' structure, values and reachability into the layout; places the
    /// accessories the layout does not have yet.
    func adoptDeviceStructure() async throws {
        let devices = try await driver.accessories()
        let before = tree.homes
        tree.takeStructure(of: devices)
        // A device's accessories the home does not have yet (a new pairing) are placed; the
        // first synchronisation publishes them. A simulated accessory the home does not have was
        // removed over MQTT and stays removed.
        let known = Set(tree.locations.keys)
        for device in devices where !known.contains(device.id) && driver.placement(of: device.id) != nil { place(device) }
        reindex()
        for warning in PublishPolicy.optionsNamingNothing(table: configuration.options, stored: storedOptions, tree: tree) { logger.warning("\(warning)") }
        for device in devices where device.isReachable { heard(from: device.id) }
        // The history gets the values that differ from those the store last knew.
        recordChangedValues(of: devices.map(\.id), comparedWith: before)
        layoutDidChange(saving: true)
    }

    /// Rebuilds the topic map and the accessory index after the layout changed.
    func reindex() {
        tree.reindex()
        policy = PublishPolicy(table: configuration.options, stored: storedOptions, homes: tree.homes, map: tree.map)
        recordAccessoryCounts()
    }

    /// The accessory gauges, from the tree.
    func recordAccessoryCounts() {
        let counts = tree.accessoryCounts
        metrics.recordAccessories(counts.all, reachable: counts.reachable)
    }

    /// Whether the broker connection is up.
    public var isConnectedToBroker: Bool { connected }

    /// Hands a message to the broker in order; a failure is logged (the next sync repairs it).
    func send(_ topic: TopicName, _ payload: [UInt8], retain: Bool, qos: QoS = .atLeastOnce, properties: Message.Properties = .init()) {
        do {
            try bus.send(Message(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties))
            recordHealth(.messageSent)
        } catch {
            logger.debug("not published \(topic): \(error)")
        }
    }

    /// Sends to a topic the engine built from checked parts (the base, the tree's segments).
    func send(_ topic: String, _ payload: [UInt8], retain: Bool, qos: QoS = .atLeastOnce, properties: Message.Properties = .init()) {
        send(TopicName(trusted: topic), payload, retain: retain, qos: qos, properties: properties)
    }
}

extension Gateway {
    /// Every metric the engine makes, with its help text (and the timer's buckets), for the
    /// metrics factory: Prometheus needs a family's HELP line and a histogram's buckets when
    /// the metric is made, and swift-metrics passes only a name.
    public static let metricDescriptions: [MetricDescription] = [
        EngineMetrics.commands, EngineMetrics.acknowledgements, EngineMetrics.acknowledgementTime, EngineMetrics.reconnects,
        EngineMetrics.connected, EngineMetrics.accessories, EngineMetrics.reachable, EngineMetrics.queueDepth,
        EngineMetrics.messagesSent, EngineMetrics.accessoryEvents, EngineMetrics.accessoryFailedWrites,
        EngineMetrics.accessoryReachabilityChanges,
    ]
}

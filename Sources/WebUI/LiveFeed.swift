import Foundation
import Logging
import MQTT
import Wire

/// What the web page sees of the broker: its own MQTT connection (the gateway's account, client id
/// `<gateway's>-ui`) subscribed to `<base>/#`. It keeps a copy of every retained message under the
/// base (the page's first picture) and hands every message to each open page as it arrives;
/// it publishes the pages' sets and requests, once ``WebUI`` has checked them.
///
/// Each page's queue holds at most ``Configuration/queueLimit`` frames; a page that falls that
/// far behind is disconnected (it reconnects and starts again from a fresh picture) rather than
/// let the gateway's memory grow. A lost broker connection disconnects every page the same way,
/// since what was retained may have changed meanwhile.
public actor LiveFeed {
    /// The feed's settings.
    public struct Configuration: Sendable {
        /// The gateway's base topic.
        public var baseTopic: TopicName
        /// Frames that may wait for one page before it is disconnected.
        public var queueLimit: Int
        /// What the engine's options hold back from the broker, for the pages; nil: none.
        public var withheld: WithheldMessages?

        public init(baseTopic: TopicName, queueLimit: Int = 100_000, withheld: WithheldMessages? = nil) {
            self.baseTopic = baseTopic
            self.queueLimit = queueLimit
            self.withheld = withheld
        }
    }

    /// Why a page's stream ended.
    public enum Ending: Sendable, Equatable {
        /// The page fell ``Configuration/queueLimit`` frames behind.
        case tooSlow
        /// The broker connection was lost.
        case brokerLost
        /// The session signed out or expired.
        case signedOut
        /// The gateway shuts down.
        case stopped
    }

    /// One open page.
    private struct Page {
        var session: String
        var sink: AsyncStream<String>.Continuation
    }

    private let client: MQTT.Client
    private let configuration: Configuration
    private let logger: Logger
    private let filter: TopicFilter
    /// The retained messages under the base by topic, as text.
    private var retained: [String: String] = [:]
    /// What the engine holds back from the broker (a throttled value, an excluded
    /// characteristic, a disabled accessory, a value not retained), by topic, as text: part of
    /// every page's picture until the broker carries the topic itself.
    private var withheld: [String: String] = [:]
    private var pages: [UUID: Page] = [:]
    private var endings: [UUID: Ending] = [:]
    private(set) var isConnected = false

    public init(client: MQTT.Client, configuration: Configuration, logger: Logger) {
        self.client = client
        self.configuration = configuration
        self.logger = logger
        // The base topic is checked when the configuration is loaded; `#` below it is a filter.
        filter = try! TopicFilter(configuration.baseTopic.string + "/#") // swiftlint:disable:this force_try
    }

    /// Connects, subscribes, and feeds the pages until cancelled.
    public func run() async throws {
        defer { endAll(.stopped) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.followConnection() }
            group.addTask { await self.consumeMessages() }
            if let stream = self.configuration.withheld?.messages {
                group.addTask { for await message in stream { await self.receiveWithheld(message) } }
            }
            // Subscribed once: the client makes the subscription again after every reconnect.
            group.addTask { try await self.client.subscribe([Subscription(self.filter, qos: .atLeastOnce, retainAsPublished: true)]) }
            // Returns when cancelled, after a clean disconnect; throws if the broker refuses us for good.
            try await client.run()
            group.cancelAll()
        }
    }

    /// Publishes a page's command (QoS 1, not retained) and returns once the broker has it.
    public func publish(topic: TopicName, payload: [UInt8]) async throws {
        try await client.publish(Message(topic: topic, payload: payload, qos: .atLeastOnce))
    }

    /// Opens a page for `session`: its first frames (the broker connection's state, the retained
    /// picture, then `synced`) and the stream of what follows, in order, with nothing missed
    /// between the two. Returns nil while the broker connection is down.
    func open(session: String) -> (id: UUID, first: [String], stream: AsyncStream<String>)? {
        guard isConnected else { return nil }
        let id = UUID()
        let (stream, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(configuration.queueLimit))
        pages[id] = Page(session: session, sink: sink)
        var first = [Frame.broker(connected: true)]
        first.reserveCapacity(retained.count + withheld.count + 2)
        let picture = withheld.isEmpty ? retained : retained.merging(withheld) { _, held in held }
        for (topic, payload) in picture.sorted(by: { $0.key < $1.key }) {
            first.append(Frame.message(topic: topic, payload: payload, retained: true))
        }
        first.append(Frame.synced)
        return (id, first, stream)
    }

    /// Forgets a page whose socket closed; returns why the feed ended it, if it did.
    @discardableResult
    func close(_ id: UUID) -> Ending? {
        pages.removeValue(forKey: id)?.sink.finish()
        return endings.removeValue(forKey: id)
    }

    /// Ends every page of a session that signed out.
    func endSession(_ session: String) {
        for (id, page) in pages where page.session == session { end(id, .signedOut) }
    }

    /// How many pages are open.
    var pageCount: Int { pages.count }

    private func followConnection() async {
        for await event in client.connectionEvents() {
            switch event {
            case .connected:
                isConnected = true
                logger.info("web page: connected to the broker")
            case .disconnected, .stopped:
                if isConnected {
                    isConnected = false
                    // What was retained may change before the next connection brings it again.
                    retained.removeAll(keepingCapacity: true)
                    broadcast(Frame.broker(connected: false))
                    endAll(.brokerLost)
                }
            case .reconnecting:
                break
            }
        }
    }

    private func consumeMessages() async {
        for await message in client.messages {
            receive(message)
        }
    }

    private func receive(_ message: Message) {
        let topic = message.topic.string
        let payload = Self.pageText(of: message)
        // The broker carries it now (a held value released, options changed); the broker
        // clearing a topic the engine withholds leaves the engine's value.
        if !withheld.isEmpty, !payload.isEmpty { withheld.removeValue(forKey: topic) }
        if message.retain {
            if payload.isEmpty { retained.removeValue(forKey: topic) } else { retained[topic] = payload }
        }
        if payload.isEmpty, let held = withheld[topic] {
            broadcast(Frame.message(topic: topic, payload: held, retained: true)) // the page keeps the engine's value
            return
        }
        broadcast(Frame.message(topic: topic, payload: payload, retained: message.retain))
    }

    /// A message the engine withheld: kept for new pages, shown to the open ones (as retained:
    /// it is state, not a one-off).
    private func receiveWithheld(_ message: WithheldMessages.Message) {
        let payload = String(decoding: message.payload, as: UTF8.self)
        if payload.isEmpty { withheld.removeValue(forKey: message.topic) } else { withheld[message.topic] = payload }
        broadcast(Frame.message(topic: message.topic, payload: payload, retained: true))
    }

    /// A message's payload as the page gets it: text as it is; a camera's `$snapshot` (raw JPEG
    /// bytes) as a `data:image/jpeg;base64,...` URL an `<img>` shows as it is.
    static func pageText(of message: Message) -> String {
        guard message.topic.string.hasSuffix("/" + TopicGrammar.Attribute.snapshot.rawValue), !message.payload.isEmpty else { return message.payloadString }
        return "data:image/jpeg;base64," + Data(message.payload).base64EncodedString()
    }

    private func broadcast(_ frame: String) {
        for (id, page) in pages {
            if case .dropped = page.sink.yield(frame) { end(id, .tooSlow) }
        }
    }

    private func end(_ id: UUID, _ ending: Ending) {
        guard let page = pages.removeValue(forKey: id) else { return }
        endings[id] = ending
        page.sink.finish()
    }

    private func endAll(_ ending: Ending) {
        for id in Array(pages.keys) { end(id, ending) }
    }
}

/// The JSON text frames the server sends a page (docs/web.md), written by the one JSON writer.
enum Frame {
    static func message(topic: String, payload: String, retained: Bool) -> String {
        JSON.object(["type": "message", "topic": .string(topic), "payload": .string(payload), "retained": .bool(retained)]).text
    }

    static func broker(connected: Bool) -> String {
        JSON.object(["type": "broker", "connected": .bool(connected)]).text
    }

    static let synced = JSON.object(["type": "synced"]).text
}

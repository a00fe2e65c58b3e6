import HomeStore
import Wire

/// The retained topics the gateway asserts and its synchronisation with the broker, as a value:
/// `mutating` calls take what happened (a connection, a retained message from the broker, the
/// marker's return, a payload the tree now has, a layout change) and return what to do (send the
/// marker, publish, clear, keep the store's ledger, store what waited for the first
/// synchronisation). It does no I/O and reads no clock, so tests drive it step by step; the
/// engine carries out its actions (`Gateway+Retained.swift`).
///
/// The rules (section 6 of `docs/mqtt-api.md`):
/// - Every (re)connect begins a synchronisation: the broker sends every retained message under
///   the base (the subscription is restored before the connection is reported), then the
///   gateway's marker on `<base>/$sync/<marker>` comes back behind them.
/// - Retained messages under the base are recorded as they come (their digest), always: they
///   arrive before the connection is reported. A retained command runs once and is cleared; while
///   a synchronisation is under way a second copy (same topic and payload) is a replay, not run.
/// - When the marker returns, the engine offers everything the tree asserts, one message at a
///   time (``offer(_:_:)``): what the broker lacks or holds differently is published. Then
///   (``endSynchronisation()``) every topic the broker holds under the base or the ledger
///   remembers, and the tree does not assert, is cleared — except `<base>/$state`.
/// - Between synchronisations a payload is published only when it differs from the one asserted
///   (``assert(_:_:)``); the ledger follows every topic published and cleared.
///
/// What is asserted is kept as a digest per topic (``PayloadDigest``), never the payload.
struct RetainedMachine: Sendable {
    /// What the engine does, in order.
    enum Action: Hashable, Sendable {
        /// Send the synchronisation marker (`sync`, not retained) on this topic.
        case sendMarker(topic: String)
        /// Publish this payload, retained.
        case publish(String, [UInt8])
        /// Clear this retained topic (an empty retained message).
        case clear(String)
        /// Record these topics in the store's ledger of published retained topics.
        case record(Set<String>)
        /// Forget these topics in the store's ledger.
        case forget(Set<String>)
        /// A synchronisation ended: how many topics the tree asserts, how many of them were
        /// published (the broker lacked them or held them differently), how many were cleared.
        case synchronised(asserted: Int, published: Int, cleared: Int)
        /// Carry out a store write that waited for the first synchronisation.
        case store(DeferredWrite)
        /// The first synchronisation was handed to the broker (the start's burst is over).
        case firstSynchronisationDone
    }

    /// What to do with a retained message under the base, once it is recorded.
    enum Arrival: Equatable, Sendable {
        /// Nothing more: not a command (a value, `$meta`, a stray message).
        case recorded
        /// A retained command: clear it (so it never fires again), then run it.
        case clearThenRun
        /// A retained command not to run: the engine's own clearing (empty), or a second copy
        /// during a synchronisation.
        case skip
    }

    /// A store write the caller wants done once the first synchronisation was handed to the
    /// broker (the configuration as applied: needed by the next start, not by this one).
    struct DeferredWrite: Hashable, Sendable {
        /// Its place in the order of deferral (what makes two writes different).
        let number: Int
        /// What it does, in words (for the log).
        let what: String
        let write: @Sendable (HomeStore) throws(StoreError) -> Void

        static func == (lhs: DeferredWrite, rhs: DeferredWrite) -> Bool { lhs.number == rhs.number }
        func hash(into hasher: inout Hasher) { hasher.combine(number) }
    }

    /// The base topic: under it everything but `$state` is the gateway's.
    let base: String
    /// `<base>/$state`, which the MQTT connection publishes (`online`, `offline`), never the engine.
    private let stateTopic: String
    /// What the gateway asserts, retained: topic -> digest of the payload.
    private var asserted: [String: PayloadDigest] = [:]
    /// Topics the ledger holds that are not asserted (left from an earlier run, or `$state`):
    /// the ledger is ``asserted``'s topics and these, so no topic is kept twice.
    private var ledgerLeftovers: Set<String>
    /// Retained messages under the base as the broker sent them since the last synchronisation.
    private var seen: [String: PayloadDigest] = [:]
    /// The marker the synchronisation under way waits for.
    private var awaitedMarker: String?
    /// Retained commands run during this synchronisation (topic and payload).
    private var executedRetainedCommands: Set<String> = []
    /// From a connection's start until its synchronisation ended: second copies are skipped.
    private var replayWindowOpen = false
    /// The synchronisation being ended: the marker came back, the tree's messages are offered.
    private var ending: Ending?
    /// Whether the layout changed since it was last asserted.
    private var layoutPending = false
    private(set) var hasSynchronised = false
    private var waitingForFirstSynchronisation: [DeferredWrite] = []
    private var deferredCount = 0

    /// The broker's copy and the tree's, while a synchronisation ends.
    private struct Ending {
        let seen: [String: PayloadDigest]
        var asserted: [String: PayloadDigest] = [:]
        var published = 0
    }

    /// - Parameters:
    ///   - base: the base topic.
    ///   - ledger: the topics the store's ledger holds (published by an earlier run, not cleared).
    init(base: String, ledger: Set<String>) {
        self.base = base
        self.stateTopic = TopicGrammar.topic(base, .state)
        self.ledgerLeftovers = ledger
    }

    // MARK: The connection and the broker's retained messages

    /// The broker accepted a connection (the engine hears of it before any of its messages, a
    /// kept session's queued ones too: ``MQTT/Client/deliver(to:)``): from now until its
    /// synchronisation ends, a retained command that arrives twice runs once. (The engine may
    /// begin the synchronisation only later, once it has subscribed.) A new connection forgets
    /// what ran on the one before.
    mutating func connectionOpened() {
        executedRetainedCommands.removeAll()
        replayWindowOpen = true
    }

    /// The broker connection is (again) up and the engine subscribed: a synchronisation begins;
    /// the marker goes out.
    mutating func connected(marker: String) -> [Action] {
        if !replayWindowOpen { connectionOpened() }
        awaitedMarker = marker
        return [.sendMarker(topic: TopicGrammar.topic(base, .sync, marker))]
    }

    /// Whether a synchronisation is under way (its marker has not come back).
    var isSynchronising: Bool { awaitedMarker != nil }

    /// A retained message under the base arrived: it is recorded (an empty one: the broker holds
    /// nothing there); for a command, whether to run it.
    mutating func retainedArrived(topic: String, payload: [UInt8], isCommand: Bool) -> Arrival {
        seen[topic] = payload.isEmpty ? nil : PayloadDigest(payload)
        guard isCommand else { return .recorded }
        if payload.isEmpty || isReplay(topic: topic, payload: payload) { return .skip }
        return .clearThenRun
    }

    /// A second copy of a retained command run during this synchronisation: one sent while the
    /// gateway was away can arrive twice (queued in the kept session, then again as retained).
    /// After the synchronisation every retained command runs.
    private mutating func isReplay(topic: String, payload: [UInt8]) -> Bool {
        guard replayWindowOpen else { return false }
        return !executedRetainedCommands.insert(topic + "\u{0}" + String(decoding: payload, as: UTF8.self)).inserted
    }

    // MARK: The end of a synchronisation

    /// A marker came back. When it is the one awaited, every retained message the broker holds
    /// was seen: the synchronisation ends. Returns true then; the engine offers everything the
    /// tree asserts (``offer(_:_:)``), then calls ``endSynchronisation()``.
    mutating func markerReturned(_ marker: String) -> Bool {
        guard let awaitedMarker, marker == awaitedMarker else { return false }
        self.awaitedMarker = nil
        replayWindowOpen = false
        executedRetainedCommands.removeAll()
        ending = Ending(seen: seen)
        seen.removeAll()
        return true
    }

    /// While a synchronisation ends (between ``markerReturned(_:)`` and
    /// ``endSynchronisation()``; at other times nothing is offered, false): the tree asserts
    /// `payload` on `topic`, each topic offered once. Returns whether to publish it: the broker
    /// lacks it or holds something else.
    mutating func offer(_ topic: String, _ payload: [UInt8]) -> Bool {
        guard ending != nil else { return false }
        let digest = PayloadDigest(payload)
        ending?.asserted[topic] = digest
        guard ending?.seen[topic] != digest else { return false }
        ending?.published += 1
        return true
    }

    /// Everything was offered: clears what the broker or the ledger holds and the tree does not
    /// assert (outside the base, only what the ledger recorded: Home Assistant's configs), keeps
    /// the ledger, and on the first synchronisation releases the writes that waited for it.
    mutating func endSynchronisation() -> [Action] {
        guard let ending else { return [] }
        self.ending = nil
        let ledger = ledgerLeftovers.union(asserted.keys)
        let strays = ending.seen.keys.filter { !isOwnTopic($0) && ending.asserted[$0] == nil }
        let forgotten = ledger.filter { (!isOwnTopic($0) || !isUnderBase($0)) && ending.asserted[$0] == nil }
        let stale = forgotten.union(strays)
        var actions = stale.map(Action.clear)
        asserted = ending.asserted
        ledgerLeftovers = ledger.filter { asserted[$0] == nil && !stale.contains($0) }
        layoutPending = false // `$layout` was just asserted with the rest
        actions += ledgerChanges(added: Set(asserted.keys).subtracting(ledger), removed: stale.intersection(ledger))
        actions.append(.synchronised(asserted: asserted.count, published: ending.published, cleared: stale.count))
        if !hasSynchronised {
            hasSynchronised = true
            actions += waitingForFirstSynchronisation.map(Action.store)
            waitingForFirstSynchronisation.removeAll()
            actions.append(.firstSynchronisationDone)
        }
        return actions
    }

    // MARK: Changes between synchronisations

    /// The tree now asserts `payload` on `topic` (a value, a reachability, a browser entry):
    /// published when it differs from what is asserted, and recorded in the ledger.
    mutating func assert(_ topic: String, _ payload: [UInt8]) -> [Action] {
        let digest = PayloadDigest(payload)
        guard asserted[topic] != digest else { return [] }
        let wasInLedger = asserted.updateValue(digest, forKey: topic) != nil || ledgerLeftovers.remove(topic) != nil
        return wasInLedger ? [.publish(topic, payload)] : [.publish(topic, payload), .record([topic])]
    }

    /// The tree no longer asserts `topic`: cleared and forgotten, if it was asserted.
    mutating func withdraw(_ topic: String) -> [Action] {
        guard asserted.removeValue(forKey: topic) != nil else { return [] }
        return [.clear(topic), .forget([topic])]
    }

    /// After the layout changed (a rename, a move, a removal): the tree asserts exactly
    /// `desired` now. What changed is published first, in `desired`'s order (an accessory's
    /// `$reachable` and values before its Home Assistant discovery config, so that Home Assistant
    /// finds the moved availability and state retained when the config sends it there, and never
    /// shows the entity unavailable), then the old topics are cleared.
    mutating func reassert(_ desired: [(topic: String, payload: [UInt8])]) -> [Action] {
        let ledger = ledgerLeftovers.union(asserted.keys)
        var actions: [Action] = []
        var next: [String: PayloadDigest] = [:]
        next.reserveCapacity(desired.count)
        for (topic, payload) in desired {
            let digest = PayloadDigest(payload)
            next[topic] = digest
            if asserted[topic] != digest { actions.append(.publish(topic, payload)) }
        }
        let stale = Set(asserted.keys.filter { next[$0] == nil })
        actions += stale.map(Action.clear)
        asserted = next
        ledgerLeftovers = ledger.filter { asserted[$0] == nil && !stale.contains($0) }
        return actions + ledgerChanges(added: Set(next.keys).subtracting(ledger), removed: stale.intersection(ledger))
    }

    // MARK: `$layout`

    /// The structure changed: `$layout` is asserted again at the next ``takeLayoutChange()``
    /// (or with the rest at a synchronisation).
    mutating func layoutChanged() {
        layoutPending = true
    }

    /// Whether `$layout` is to be asserted again now: it changed, and no synchronisation is
    /// under way (that one asserts it). Taking it clears the change.
    mutating func takeLayoutChange() -> Bool {
        guard layoutPending, !isSynchronising else { return false }
        layoutPending = false
        return true
    }

    /// `$layout` is now `messages`: they are asserted in their order (each part before what names
    /// it), then the parts no longer there are cleared.
    mutating func assertLayout(_ messages: [(topic: String, payload: [UInt8])]) -> [Action] {
        let current = Set(messages.map(\.topic))
        let prefix = TopicGrammar.topic(base, .layout)
        var actions: [Action] = []
        for (topic, payload) in messages { actions += assert(topic, payload) }
        // Cleared after the new index and home parts that no longer name them.
        for topic in asserted.keys.filter({ $0.hasPrefix(prefix) && !current.contains($0) }) {
            asserted[topic] = nil
            actions += [.clear(topic), .forget([topic])]
        }
        return actions
    }

    // MARK: The first synchronisation

    /// A store write to do once the first synchronisation was handed to the broker: at once
    /// (returned) when it was, else held until ``endSynchronisation()`` returns it.
    mutating func storeAfterFirstSynchronisation(_ what: String, _ write: @escaping @Sendable (HomeStore) throws(StoreError) -> Void) -> [Action] {
        deferredCount += 1
        let deferred = DeferredWrite(number: deferredCount, what: what, write: write)
        guard hasSynchronised else {
            waitingForFirstSynchronisation.append(deferred)
            return []
        }
        return [.store(deferred)]
    }

    // MARK: Topics

    /// How many topics are asserted.
    var assertedCount: Int { asserted.count }

    /// Whether the tree asserts `topic` now.
    func isAsserted(_ topic: String) -> Bool { asserted[topic] != nil }

    /// The topics the ledger holds (asserted, and left from before).
    var ledger: Set<String> { ledgerLeftovers.union(asserted.keys) }

    /// Whether the engine leaves `topic` alone in its hygiene: `$state`, and anything outside
    /// the base unless the ledger recorded it.
    func isOwnTopic(_ topic: String) -> Bool {
        !isUnderBase(topic) || topic == stateTopic
    }

    private func isUnderBase(_ topic: String) -> Bool {
        topic.hasPrefix(base + "/")
    }

    /// The ledger's records and removals for topics added to and removed from it.
    private func ledgerChanges(added: Set<String>, removed: Set<String>) -> [Action] {
        (added.isEmpty ? [] : [.record(added)]) + (removed.isEmpty ? [] : [.forget(removed)])
    }
}

/// A retained payload as the engine remembers it: a hash of its bytes, enough to tell whether a
/// new payload differs (the layout's parts alone are megabytes at 10,000 accessories).
struct PayloadDigest: Hashable, Sendable {
    let hash: Int
    let count: Int

    init(_ payload: [UInt8]) {
        var hasher = Hasher()
        payload.withUnsafeBytes { hasher.combine(bytes: $0) }
        hash = hasher.finalize()
        count = payload.count
    }
}

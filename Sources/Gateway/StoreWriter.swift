import Dispatch
import HomeModel
import HomeStore
import Logging
import Synchronization
import Timing

/// The engine's writes to its store, in the order they were asked for, on a queue of their own:
/// the engine goes on publishing while the layout and the ledger of retained topics are written
/// (at the start of a home of 10,000 accessories, that is a second it would otherwise wait).
///
/// ``run()`` writes as writes arrive; ``flush()`` waits until everything asked for so far is
/// written (a timer trigger's fire is stored before its action sets run); ``drain()`` writes
/// what is left when the engine stops. A failed write is logged; after a failed layout write the
/// next one writes the whole layout, so the store never keeps half of a change.
///
/// Values for the history (``recordHistory(_:)``) wait in a list of their own and are written
/// together, in one transaction, once the oldest has waited ``historyDelay`` or
/// ``historyBatch`` have gathered (or with the next other write, a history request's read, the
/// engine's stop): recording costs the engine an append, and a set costs the store nothing (one
/// transaction per set doubled the gateway's CPU time per set; BENCHMARKS.md). When the store
/// falls behind by ``maximumPendingPoints``, further points are dropped (and counted in the log)
/// rather than held in memory.
final class StoreWriter: Sendable {
    private struct State {
        var pending: [(number: Int, what: String, write: @Sendable (HomeStore) throws(StoreError) -> Void)] = []
        var pendingHistory: [HistoryPoint] = []
        /// When the oldest pending history point was recorded.
        var historySince: ContinuousClock.Instant?
        /// History points dropped since the last batch (the store fell behind).
        var droppedHistory = 0
        /// Whether the last history write failed (its failure is logged once, not per batch).
        var historyFailing = false
        var asked = 0
        var written = 0
        var layoutFailed = false
        /// The most recent failed writes, by number, with what the log said (the last 100).
        var failures: [(number: Int, message: String)] = []
        var waiters: [(number: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let store: HomeStore?
    private let logger: Logger
    private let state = Mutex(State())
    private let arrivals = Alarm()
    private let queue = DispatchQueue(label: "homegate.store")
    /// The most points a characteristic's history keeps.
    private let historyLimit: Int
    /// The most history points waiting to be written.
    static let maximumPendingPoints = 100_000
    /// How long a history point may wait to be written with those after it.
    static let historyDelay: Duration = .seconds(1)
    /// How many waiting history points are written at once without waiting longer.
    static let historyBatch = 1_000

    init(store: HomeStore?, logger: Logger, historyLimit: Int) {
        self.store = store
        self.logger = logger
        self.historyLimit = historyLimit
    }

    /// Whether there is a store to write to.
    var hasStore: Bool { store != nil }

    /// Asks for a write; `what` names it in the log if it fails.
    func write(_ what: String, _ write: @escaping @Sendable (HomeStore) throws(StoreError) -> Void) {
        guard store != nil else { return }
        state.withLock { state in
            state.asked += 1
            state.pending.append((state.asked, what, write))
        }
        arrivals.ring()
    }

    /// Asks for `point` to be added to its characteristic's history, within ``historyDelay``.
    /// The writer is woken only by the first point of a batch (to time it) and by a full batch.
    func recordHistory(_ point: HistoryPoint) {
        guard store != nil else { return }
        let wake = state.withLock { state -> Bool in
            guard state.pendingHistory.count < Self.maximumPendingPoints else {
                state.droppedHistory += 1
                return false
            }
            state.pendingHistory.append(point)
            if state.historySince == nil {
                state.historySince = .now
                return true
            }
            return state.pendingHistory.count == Self.historyBatch
        }
        if wake { arrivals.ring() }
    }

    /// Runs `body` on the store's queue once everything asked for before this call is written;
    /// nil when there is no store.
    func read<T: Sendable>(_ body: @escaping @Sendable (HomeStore) throws(StoreError) -> T) async throws(StoreError) -> T? {
        guard let store else { return nil }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, StoreError>, Never>) in
            queue.async {
                self.perform(self.takePending())
                continuation.resume(returning: Result<T, StoreError>(catching: { () throws(StoreError) -> T in try body(store) }))
            }
        }
        return try result.get()
    }

    /// Asks for the layout `homes` to be written where the store holds the layout `previous` describes.
    func saveLayout(_ homes: [Home], previous: LayoutDigest?) {
        write("save the layout") { store throws(StoreError) in
            let whole = self.state.withLock { $0.layoutFailed }
            do throws(StoreError) {
                try store.saveHomes(homes, previous: whole ? nil : previous)
                self.state.withLock { $0.layoutFailed = false }
            } catch {
                self.state.withLock { $0.layoutFailed = true }
                throw error
            }
        }
    }

    /// Writes until cancelled; history points wait until they are due (``historyDue``).
    func run() async {
        while !Task.isCancelled {
            let generation = arrivals.generation
            if await writePending() { continue }
            if let due = state.withLock({ $0.historySince.map { $0 + Self.historyDelay } }) {
                try? await arrivals.sleep(until: due, on: ContinuousClock(), unlessRungAfter: generation)
            } else {
                await arrivals.wait(unlessRungAfter: generation)
            }
        }
    }

    /// How many writes were asked for so far: a mark for ``failure(after:)``.
    var asked: Int { state.withLock { $0.asked } }

    /// The first write asked for after `mark` that failed, in words, if one did.
    func failure(after mark: Int) -> String? {
        state.withLock { state in state.failures.first { $0.number > mark }?.message }
    }

    /// Waits until every write asked for before this call is done.
    func flush() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.written >= state.asked { return true }
                state.waiters.append((state.asked, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Writes what is left, now (the engine is stopping).
    func drain() {
        queue.sync { perform(takePending()) }
    }

    /// Writes the pending batch on the store's queue; false when there was nothing to write.
    /// The batch is taken on the queue, so batches are written in the order they were asked for.
    /// History points go with it when other writes do, or when they are due.
    private func writePending() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            queue.async {
                let batch = self.takePending(history: .whenDue)
                self.perform(batch)
                continuation.resume(returning: !batch.isEmpty)
            }
        }
    }

    /// What was asked for and not yet written: the writes, the history points, and the number
    /// of the last of them.
    private struct Batch {
        var writes: [(number: Int, what: String, write: @Sendable (HomeStore) throws(StoreError) -> Void)]
        var history: [HistoryPoint]
        var dropped: Int
        var upTo: Int

        var isEmpty: Bool { writes.isEmpty && history.isEmpty && dropped == 0 }
    }

    /// Whether a batch takes the waiting history points.
    private enum HistoryTaking {
        case always
        /// With other writes, or once the oldest waited ``historyDelay`` or a batch is full.
        case whenDue
    }

    private func takePending(history taking: HistoryTaking = .always) -> Batch {
        state.withLock { state in
            let due = taking == .always || !state.pending.isEmpty || state.pendingHistory.count >= Self.historyBatch
                || state.historySince.map { $0 + Self.historyDelay <= .now } ?? false
            let batch = Batch(writes: state.pending, history: due ? state.pendingHistory : [], dropped: state.droppedHistory, upTo: state.asked)
            state.pending.removeAll()
            state.droppedHistory = 0
            if due {
                state.pendingHistory.removeAll(keepingCapacity: true)
                state.historySince = nil
            }
            return batch
        }
    }

    private func perform(_ batch: Batch) {
        guard let store, !batch.isEmpty else { return }
        let started = ContinuousClock.now
        defer {
            // A big write (a whole layout) leaves its encoding's memory freed but held by malloc.
            if started.duration(to: .now) > .milliseconds(100) { Memory.returnFreedMemory() }
        }
        for item in batch.writes {
            do {
                try item.write(store)
            } catch {
                logger.error("could not \(item.what): \(error)")
                state.withLock { state in
                    state.failures.append((item.number, "could not \(item.what): \(error)"))
                    if state.failures.count > 100 { state.failures.removeFirst() }
                }
            }
        }
        writeHistory(batch.history, dropped: batch.dropped, to: store)
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.written = max(state.written, batch.upTo)
            let ready = state.waiters.filter { $0.number <= state.written }.map(\.continuation)
            state.waiters.removeAll { $0.number <= state.written }
            return ready
        }
        for waiter in woken { waiter.resume() }
    }

    /// Writes the history points in one transaction. A failure is logged when it starts and
    /// when it ends, not for every batch (a full disk would otherwise fill the log).
    private func writeHistory(_ points: [HistoryPoint], dropped: Int, to store: HomeStore) {
        if dropped > 0 { logger.warning("history: \(dropped) values not recorded: the store fell behind") }
        guard !points.isEmpty else { return }
        do {
            try store.recordHistory(points, maxPoints: historyLimit)
            if state.withLock({ state in defer { state.historyFailing = false }; return state.historyFailing }) {
                logger.notice("history: recorded again")
            }
        } catch {
            if !state.withLock({ state in defer { state.historyFailing = true }; return state.historyFailing }) {
                logger.error("could not record the history (values are left out until the store takes them again): \(error)")
            }
        }
    }
}

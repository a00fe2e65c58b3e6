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
final class StoreWriter: Sendable {
    private struct State {
        var pending: [(number: Int, what: String, write: @Sendable (HomeStore) throws(StoreError) -> Void)] = []
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

    init(store: HomeStore?, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Asks for a write; `what` names it in the log if it fails.
    func write(_ what: String, _ write: @escaping @Sendable (HomeStore) throws(StoreError) -> Void) {
        guard store != nil else { return }
        state.withLock { state in
            state.asked += 1
            state.pending.append((state.asked, what, write))
        }
        arrivals.ring()
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

    /// Writes until cancelled.
    func run() async {
        while !Task.isCancelled {
            let generation = arrivals.generation
            if !(await writePending()) {
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
        let batch = takePending()
        guard !batch.isEmpty else { return }
        queue.sync { perform(batch) }
    }

    /// Writes the pending batch on the store's queue; false when there was nothing to write.
    private func writePending() async -> Bool {
        let batch = takePending()
        guard !batch.isEmpty else { return false }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.perform(batch)
                continuation.resume()
            }
        }
        return true
    }

    private func takePending() -> [(number: Int, what: String, write: @Sendable (HomeStore) throws(StoreError) -> Void)] {
        state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
    }

    private func perform(_ batch: [(number: Int, what: String, write: @Sendable (HomeStore) throws(StoreError) -> Void)]) {
        guard let store else { return }
        let started = ContinuousClock.now
        defer {
            // A big write (a whole layout) leaves its encoding's memory freed but held by malloc.
            if started.duration(to: .now) > .milliseconds(100) { Memory.returnFreedMemory() }
        }
        for item in batch {
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
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.written = batch.last?.number ?? state.written
            let ready = state.waiters.filter { $0.number <= state.written }.map(\.continuation)
            state.waiters.removeAll { $0.number <= state.written }
            return ready
        }
        for waiter in woken { waiter.resume() }
    }
}

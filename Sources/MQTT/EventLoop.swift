import Foundation
import Synchronization

/// The thread a ``Client`` runs its network on, and a serial executor for the actors that choose
/// to run there (the gateway's engine): one thread, one loop.
///
/// Each turn of the loop runs the jobs enqueued so far, then reads from the broker, runs the jobs
/// that reading started (the engine handling what arrived), and writes what they published. So a
/// set a device answers at once is read, handled, answered and written in one turn, on one thread,
/// and everything one turn publishes leaves in one `mosquitto_loop_write`.
///
/// The thread starts with the first job or the client's ``Client/run()``, and serves jobs until
/// the client is gone; between connections (and before and after the run) it only serves jobs.
public final class EventLoop: SerialExecutor, Sendable {
    /// The client's wake-up primitive: a job enqueued signals it too.
    let networkWait: NetworkWait
    private let jobs = Mutex<[Work]>([])
    private let control = Mutex(Control())
    private let threadID = Atomic<UInt>(0)
    private let name: String

    /// A task's job, or a closure of the client's own (``execute(_:)``).
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Control {
        var started = false
        var shuttingDown = false
        /// The client's network body, handed over by ``Client/run()``.
        var networkBody: (@Sendable () -> Void)?
    }

    /// A loop of its own, serving only jobs (an engine with an in-memory bus in tests); a
    /// ``Client`` makes the one its network runs on.
    /// - Parameter name: the thread's name.
    public init(name: String) throws(ConfigurationError) {
        self.name = name
        networkWait = try NetworkWait()
    }

    // MARK: SerialExecutor

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(.job(job)) }
        wakeUnlessCurrent()
    }

    /// Runs `work` on the loop's thread, in order with the jobs: the client's own changes to
    /// what libmosquitto holds (subscriptions) happen there, never beside the callbacks; an
    /// in-memory bus hands its messages to an engine that runs here the same way.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(.closure(work)) }
        wakeUnlessCurrent()
    }

    /// From another thread: start the loop if need be and wake it. On the loop's own thread there
    /// is nothing to do: it runs the jobs before it waits again.
    private func wakeUnlessCurrent() {
        guard !isCurrent else { return }
        startIfNeeded()
        networkWait.signal()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isCurrent, "expected to run on the MQTT event loop \(name)")
    }

    /// Whether the caller runs on this loop's thread.
    public var isCurrent: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_self(), pthread_t(id)) != 0
    }

    // MARK: The loop

    /// Hands the client's network body to the thread (starting it if need be).
    func runNetwork(_ body: @escaping @Sendable () -> Void) {
        control.withLock { $0.networkBody = body }
        startIfNeeded()
        networkWait.signal()
    }

    /// Lets the thread end once no job waits (the client is going away).
    func shutDown() {
        control.withLock { $0.shuttingDown = true }
        networkWait.signal()
    }

    /// Runs the jobs that wait, then waits as ``NetworkWait/wait(socket:reading:writing:timeout:)``
    /// does (not at all while more jobs wait), then runs the jobs enqueued meanwhile.
    /// - Parameter writing: asked after the first jobs ran (they may have published).
    func wait(socket: Int32?, reading: Bool, writing: () -> Bool, timeout: Duration) -> NetworkWait.Readiness {
        let pending = runJobs()
        let ready = networkWait.wait(socket: socket, reading: reading, writing: writing(), timeout: pending ? .zero : timeout)
        runJobs()
        return ready
    }

    /// Runs the jobs enqueued so far (not those they enqueue); true if more are waiting then.
    @discardableResult
    func runJobs() -> Bool {
        var batch: [Work] = []
        jobs.withLock { swap(&$0, &batch) }
        guard !batch.isEmpty else { return false }
        let executor = asUnownedSerialExecutor()
        for work in batch {
            switch work {
            case .job(let job): job.runSynchronously(on: executor)
            case .closure(let closure): closure()
            }
        }
        batch.removeAll(keepingCapacity: true)
        return jobs.withLock { queue in
            if queue.isEmpty { swap(&queue, &batch) } // keep the grown storage for the next burst
            return !queue.isEmpty
        }
    }

    private func startIfNeeded() {
        let start = control.withLock { control -> Bool in
            defer { control.started = true }
            return !control.started
        }
        guard start else { return }
        let thread = Thread { [self] in serve() }
        thread.name = name
        thread.start()
    }

    /// The thread's body: the client's network while it runs, jobs otherwise.
    private func serve() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        while true {
            let (body, done) = control.withLock { control in
                defer { control.networkBody = nil }
                return (control.networkBody, control.shuttingDown)
            }
            if let body {
                body()
                continue
            }
            if done && !runJobs() && jobs.withLock({ $0.isEmpty }) { return }
            _ = wait(socket: nil, reading: false, writing: { false }, timeout: .seconds(1))
        }
    }
}

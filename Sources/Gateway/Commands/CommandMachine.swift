import HomeModel
import Wire

/// Every write and read the engine carries out, from arrival to its one acknowledgement, as a
/// value: `mutating` calls take what happened (a command arrived, the device answered, time
/// passed) and return what to do (start a device call, apply a value, acknowledge). It reads no
/// clock of its own (``Instant`` is the engine clock's time, passed in) and does no I/O, so
/// tests drive it step by step.
///
/// The rules (section 3 of `docs/mqtt-api.md`):
/// - Commands on one characteristic run one after the other in arrival order; different
///   characteristics run concurrently. A command of several characteristics (a service-level
///   write) waits until it is first in line on each of them, and runs as one device call.
/// - At most ``Configuration/queueLimit`` commands wait per characteristic besides the one under
///   way; one more is refused with -70403 at once.
/// - A device call not answered by its deadline is acknowledged -70408 and the next command of
///   the characteristic starts. A write confirmed late, within ``Configuration/lateWindow`` more,
///   still updates the value (unless a later write to the characteristic was confirmed first);
///   a late read is dropped. Either way there is no second acknowledgement.
/// - A command of several independent writes (an action set, a group or zone shortcut) runs each
///   write in its characteristic's line and is acknowledged once, when the last has an outcome.
struct CommandMachine: Sendable {
    /// The engine clock's time: how long since the engine started.
    typealias Instant = Duration

    struct Configuration: Sendable {
        /// How long a device may take to confirm a write or answer a read.
        var timeout: Duration
        /// How long after its deadline a write's confirmation still updates the value; after it
        /// the device call is cancelled.
        var lateWindow: Duration
        /// Commands that may wait per characteristic besides the one under way.
        var queueLimit: Int

        init(timeout: Duration = .seconds(10), lateWindow: Duration = .seconds(60), queueLimit: Int = 1000) {
            self.timeout = timeout
            self.lateWindow = lateWindow
            self.queueLimit = queueLimit
        }
    }

    /// One command: it gets exactly one ``Action/acknowledge(_:_:)``.
    struct Ticket: Hashable, Sendable, CustomStringConvertible {
        let number: UInt64
        var description: String { "#\(number)" }
    }

    /// One device call.
    struct JobID: Hashable, Comparable, Sendable {
        let number: UInt64
        static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.number < rhs.number }
    }

    /// What a command does to one characteristic.
    enum Operation: Hashable, Sendable {
        case write(Value)
        case read
    }

    /// One characteristic's part of a command.
    struct Item: Hashable, Sendable {
        let reference: CharacteristicReference
        let operation: Operation

        init(_ reference: CharacteristicReference, _ operation: Operation) {
            self.reference = reference
            self.operation = operation
        }
    }

    /// A command, as the machine runs it.
    enum Command: Hashable, Sendable {
        /// A set or a get of one characteristic.
        case single(Item)
        /// Writes of several characteristics in one device call (a service-level set).
        case together([Item])
        /// Writes of several characteristics, each in its own line (an action set, a shortcut).
        case each([Item])
    }

    /// A device call the engine makes.
    struct Job: Hashable, Sendable {
        let id: JobID
        let ticket: Ticket
        /// One item, or several written in one call.
        let items: [Item]
        /// When the command is acknowledged -70408 if the device has not answered.
        let deadline: Instant
        /// When the call is abandoned (a read: at its deadline; a write: after the late window).
        let abandonAt: Instant

        var isRead: Bool { items.first?.operation == .read }
    }

    /// How one characteristic's part of a command went.
    enum Outcome: Hashable, Sendable {
        /// The device confirmed the write.
        case written(Value)
        /// The device answered the read.
        case read(Value)
        /// The device (or the machine: -70403) refused it.
        case failed(StatusError)
        /// No answer by the deadline.
        case timedOut(Operation)

        var status: HAPStatus {
            switch self {
            case .written, .read: .success
            case .failed(let error): error.status
            case .timedOut: .timedOut
            }
        }
    }

    /// What the engine does next, in order.
    enum Action: Hashable, Sendable {
        /// Call the device. Its answer goes to ``complete(_:with:now:)``.
        case start(Job)
        /// A value the device confirmed or reported: into the tree and onto its topic.
        case apply(CharacteristicReference, Value)
        /// The command is done: one acknowledgement with each item's outcome, in the command's order.
        case acknowledge(Ticket, [Result])
        /// Stop the device call: its answer would change nothing any more (a read past its
        /// deadline, a write past its late window or superseded by a later confirmed write).
        case abandon(JobID)
    }

    /// One item of a command and how it went.
    struct Result: Hashable, Sendable {
        let item: Item
        let outcome: Outcome
    }

    /// What the device answered for a job: per characteristic, the value (a read's, or the
    /// written one) or the refusal.
    typealias Answer = [CharacteristicReference: Swift.Result<Value, StatusError>]

    private struct RunningJob {
        var job: Job
        var started: Bool
    }

    private struct OpenTicket {
        let items: [Item]
        var outcomes: [Outcome?]
        var remaining: Int

        init(_ items: [Item]) {
            self.items = items
            outcomes = Array(repeating: nil, count: items.count)
            remaining = items.count
        }
    }

    private let configuration: Configuration
    private var nextTicket: UInt64 = 0
    private var nextJob: UInt64 = 0
    /// Per characteristic: the jobs in line, the one under way first.
    private var lines: [CharacteristicReference: [JobID]] = [:]
    /// Jobs waiting or under way (not yet past their deadline).
    private var jobs: [JobID: RunningJob] = [:]
    /// Writes past their deadline whose confirmation may still come.
    private var late: [JobID: Job] = [:]
    private var tickets: [Ticket: OpenTicket] = [:]
    /// Started jobs and late writes in the order they started: with one timeout for all, their
    /// deadlines come in this order too, so the earliest is always near the front.
    private var started = FIFO<JobID>()
    private var lateOrder = FIFO<JobID>()

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: Events

    /// A command arrived. Returns its ticket and what to do now: start the calls that are first
    /// in line, or acknowledge at once (-70403 when a line is full).
    mutating func submit(_ command: Command, now: Instant) -> (Ticket, [Action]) {
        nextTicket += 1
        let ticket = Ticket(number: nextTicket)
        var actions: [Action] = []
        switch command {
        case .single(let item):
            tickets[ticket] = OpenTicket([item])
            enqueue([item], ticket: ticket, now: now, into: &actions)
        case .together(let items):
            tickets[ticket] = OpenTicket(items)
            if items.isEmpty { finish(ticket, into: &actions) } else { enqueue(items, ticket: ticket, now: now, into: &actions) }
        case .each(let items):
            tickets[ticket] = OpenTicket(items)
            if items.isEmpty { finish(ticket, into: &actions) }
            for item in items { enqueue([item], ticket: ticket, now: now, into: &actions) }
        }
        return (ticket, actions)
    }

    /// The device answered job `id` (in time or late). Items the answer leaves out count as
    /// -70402 (the device said nothing about them).
    mutating func complete(_ id: JobID, with answer: Answer, now: Instant) -> [Action] {
        var actions: [Action] = []
        if let running = jobs.removeValue(forKey: id) {
            let job = running.job
            supersedeLateWrites(before: job, into: &actions)
            for item in job.items {
                let outcome = Self.outcome(of: item, in: answer)
                switch outcome {
                case .written(let value), .read(let value): actions.append(.apply(item.reference, value))
                default: break
                }
                record(outcome, for: item, ticket: job.ticket, into: &actions)
            }
            leaveLines(job, now: now, into: &actions)
        } else if let job = late.removeValue(forKey: id), !job.isRead {
            // Confirmed after its deadline: the value follows the device, without an acknowledgement.
            for item in job.items {
                if case .written(let value) = Self.outcome(of: item, in: answer) { actions.append(.apply(item.reference, value)) }
            }
        }
        return actions
    }

    /// Time passed: every command past its deadline is acknowledged -70408 and its line moves
    /// on; late writes past their late window are forgotten.
    mutating func expire(now: Instant) -> [Action] {
        var actions: [Action] = []
        while let id = started.first {
            guard let running = jobs[id] else {
                started.removeFirst() // answered in time
                continue
            }
            let job = running.job
            guard job.deadline <= now else { break }
            started.removeFirst()
            jobs[id] = nil
            if !job.isRead, job.abandonAt > now {
                late[id] = job
                lateOrder.append(id)
            } else {
                actions.append(.abandon(id))
            }
            for item in job.items { record(.timedOut(item.operation), for: item, ticket: job.ticket, into: &actions) }
            leaveLines(job, now: now, into: &actions)
        }
        while let id = lateOrder.first {
            guard let job = late[id] else {
                lateOrder.removeFirst() // confirmed late, or superseded
                continue
            }
            guard job.abandonAt <= now else { break }
            lateOrder.removeFirst()
            late[id] = nil
            actions.append(.abandon(id))
        }
        return actions
    }

    // MARK: Looking

    /// The earliest moment ``expire(now:)`` has something to do; nil when nothing is under way.
    mutating func nextDeadline() -> Instant? {
        while let id = started.first, jobs[id] == nil { started.removeFirst() }
        while let id = lateOrder.first, late[id] == nil { lateOrder.removeFirst() }
        let running = started.first.flatMap { jobs[$0]?.job.deadline }
        let abandon = lateOrder.first.flatMap { late[$0]?.abandonAt }
        switch (running, abandon) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }

    /// Commands waiting for a device (not the ones under way).
    var waitingCount: Int {
        jobs.values.reduce(0) { $0 + ($1.started ? 0 : 1) }
    }

    /// Whether nothing waits or runs for `reference` (so a write may be carried out at once).
    func isIdle(_ reference: CharacteristicReference) -> Bool {
        lines[reference] == nil
    }

    // MARK: Lines

    private mutating func enqueue(_ items: [Item], ticket: Ticket, now: Instant, into actions: inout [Action]) {
        if items.contains(where: { (lines[$0.reference]?.count ?? 0) > configuration.queueLimit }) {
            let error = StatusError(.busy, "\(configuration.queueLimit) commands are already waiting for this characteristic; try again later")
            for item in items { record(.failed(error), for: item, ticket: ticket, into: &actions) }
            return
        }
        nextJob += 1
        let id = JobID(number: nextJob)
        let job = Job(id: id, ticket: ticket, items: items, deadline: now, abandonAt: now)
        jobs[id] = RunningJob(job: job, started: false)
        for item in items { lines[item.reference, default: []].append(id) }
        startIfFirst(id, now: now, into: &actions)
    }

    /// Starts `id` if it is first in the line of every characteristic it touches.
    private mutating func startIfFirst(_ id: JobID, now: Instant, into actions: inout [Action]) {
        guard let running = jobs[id], !running.started else { return }
        let waiting = running.job
        guard waiting.items.allSatisfy({ lines[$0.reference]?.first == id }) else { return }
        let deadline = now + configuration.timeout
        let job = Job(id: id, ticket: waiting.ticket, items: waiting.items, deadline: deadline,
                      abandonAt: waiting.isRead ? deadline : deadline + configuration.lateWindow)
        jobs[id] = RunningJob(job: job, started: true)
        started.append(id)
        actions.append(.start(job))
    }

    /// `job` is done with its lines (answered or timed out): the next in each line may start.
    private mutating func leaveLines(_ job: Job, now: Instant, into actions: inout [Action]) {
        var next: [JobID] = []
        for item in job.items {
            guard let index = lines.index(forKey: item.reference) else { continue }
            lines.values[index].removeAll { $0 == job.id } // in place: no copy of the line
            if let first = lines.values[index].first {
                next.append(first)
            } else {
                lines.remove(at: index)
            }
        }
        guard !next.isEmpty else { return }
        for id in Set(next).sorted() { startIfFirst(id, now: now, into: &actions) }
    }

    /// A confirmed write makes earlier writes to the same characteristic that are still late
    /// irrelevant: their confirmation must not overwrite the newer value.
    private mutating func supersedeLateWrites(before job: Job, into actions: inout [Action]) {
        guard !late.isEmpty else { return }
        let references = Set(job.items.map(\.reference))
        for (id, lateJob) in late where id < job.id && lateJob.items.contains(where: { references.contains($0.reference) }) {
            late[id] = nil
            actions.append(.abandon(id))
        }
    }

    // MARK: Tickets

    private mutating func record(_ outcome: Outcome, for item: Item, ticket: Ticket, into actions: inout [Action]) {
        guard let slot = tickets.index(forKey: ticket) else { return }
        let open = tickets.values[slot]
        guard let index = open.items.indices.first(where: { open.items[$0] == item && open.outcomes[$0] == nil }) else { return }
        // Changed in place: a copy taken out and written back would copy the outcomes too.
        tickets.values[slot].outcomes[index] = outcome
        tickets.values[slot].remaining -= 1
        if tickets.values[slot].remaining <= 0 { finish(ticket, into: &actions) }
    }

    private mutating func finish(_ ticket: Ticket, into actions: inout [Action]) {
        guard let open = tickets.removeValue(forKey: ticket) else { return }
        let results = zip(open.items, open.outcomes).compactMap { item, outcome in outcome.map { Result(item: item, outcome: $0) } }
        actions.append(.acknowledge(ticket, results))
    }

    private static func outcome(of item: Item, in answer: Answer) -> Outcome {
        switch answer[item.reference] {
        case .success(let value)?:
            if case .write(let written) = item.operation { return .written(written) }
            return .read(value)
        case .failure(let error)?:
            return .failed(error)
        case nil:
            return .failed(StatusError(.communicationFailure, "the device did not answer for this characteristic"))
        }
    }
}

/// A first-in, first-out list: appends at the back, removals at the front in O(1) (amortised).
struct FIFO<Element: Sendable>: Sendable {
    private var elements: [Element] = []
    private var head = 0

    var first: Element? { head < elements.count ? elements[head] : nil }
    var count: Int { elements.count - head }

    mutating func append(_ element: Element) {
        elements.append(element)
    }

    mutating func removeFirst() {
        head += 1
        if head > 64, head * 2 > elements.count {
            elements.removeFirst(head)
            head = 0
        }
    }
}

@testable import Gateway
import HomeModel
import Testing
import Wire

/// The command state machine on its own: every rule of contract section 3, step by step, with
/// time as a number.
@Suite("CommandMachine")
struct CommandMachineTests {
    typealias Machine = CommandMachine
    static let lamp = AccessoryID("lamp")
    static let on = CharacteristicReference(accessoryID: lamp, iid: 9)
    static let brightness = CharacteristicReference(accessoryID: lamp, iid: 10)
    static let hue = CharacteristicReference(accessoryID: lamp, iid: 11)

    static func machine(timeout: Duration = .seconds(10), queueLimit: Int = 1000) -> Machine {
        Machine(configuration: .init(timeout: timeout, queueLimit: queueLimit))
    }

    static func write(_ reference: CharacteristicReference, _ value: Value) -> Machine.Item {
        Machine.Item(reference, .write(value))
    }

    /// The jobs `actions` start, in order.
    static func started(_ actions: [Machine.Action]) -> [Machine.Job] {
        actions.compactMap { if case .start(let job) = $0 { job } else { nil } }
    }

    /// The acknowledgements in `actions`.
    static func acknowledged(_ actions: [Machine.Action]) -> [(Machine.Ticket, [Machine.Result])] {
        actions.compactMap { if case .acknowledge(let ticket, let results) = $0 { (ticket, results) } else { nil } }
    }

    static func ok(_ value: Value, for reference: CharacteristicReference) -> Machine.Answer {
        [reference: .success(value)]
    }

    @Test("a write starts at once; the confirmation applies the value, then acknowledges it once")
    func writeThenAcknowledge() throws {
        var machine = Self.machine()
        let (ticket, actions) = machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero)
        let job = try #require(Self.started(actions).first)
        #expect(actions.count == 1 && job.deadline == .seconds(10) && job.items == [Self.write(Self.on, .bool(true))])
        #expect(machine.nextDeadline() == .seconds(10))
        let done = machine.complete(job.id, with: Self.ok(.bool(true), for: Self.on), now: .milliseconds(3))
        #expect(done == [.apply(Self.on, .bool(true)), .acknowledge(ticket, [.init(item: Self.write(Self.on, .bool(true)), outcome: .written(.bool(true)))])])
        #expect(machine.nextDeadline() == nil && machine.isIdle(Self.on))
        #expect(machine.complete(job.id, with: Self.ok(.bool(true), for: Self.on), now: .milliseconds(4)).isEmpty, "a second answer changes nothing")
    }

    @Test("one characteristic: in arrival order, one at a time; others run beside it")
    func ordering() throws {
        var machine = Self.machine()
        let first = Self.started(machine.submit(.single(Self.write(Self.brightness, .int(10))), now: .zero).1)
        let second = machine.submit(.single(Self.write(Self.brightness, .int(20))), now: .zero)
        let third = machine.submit(.single(Machine.Item(Self.brightness, .read)), now: .zero)
        let other = Self.started(machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero).1)
        #expect(first.count == 1 && second.1.isEmpty && third.1.isEmpty && other.count == 1)
        #expect(machine.waitingCount == 2)
        let afterFirst = machine.complete(first[0].id, with: Self.ok(.int(10), for: Self.brightness), now: .seconds(1))
        let next = Self.started(afterFirst)
        #expect(next.count == 1 && next[0].items == [Self.write(Self.brightness, .int(20))] && next[0].deadline == .seconds(11))
        let afterSecond = machine.complete(next[0].id, with: Self.ok(.int(20), for: Self.brightness), now: .seconds(2))
        let read = try #require(Self.started(afterSecond).first)
        #expect(read.isRead && read.abandonAt == read.deadline)
        let answered = machine.complete(read.id, with: Self.ok(.int(21), for: Self.brightness), now: .seconds(2))
        #expect(answered == [.apply(Self.brightness, .int(21)), .acknowledge(third.0, [.init(item: Machine.Item(Self.brightness, .read), outcome: .read(.int(21)))])])
    }

    @Test("a full line refuses at once with -70403, and nothing reaches the device")
    func busy() {
        var machine = Self.machine(queueLimit: 2)
        _ = machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero) // under way
        _ = machine.submit(.single(Self.write(Self.on, .bool(false))), now: .zero)
        _ = machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero)
        let (ticket, refused) = machine.submit(.single(Self.write(Self.on, .bool(false))), now: .zero)
        #expect(Self.started(refused).isEmpty)
        let acknowledgement = Self.acknowledged(refused)
        #expect(acknowledgement.count == 1 && acknowledgement[0].0 == ticket)
        #expect(acknowledgement.first?.1.first?.outcome.status == .busy)
        #expect(machine.waitingCount == 2)
    }

    @Test("a write past its deadline: -70408 once, the line moves on, a late confirmation updates the value without a second acknowledgement")
    func timeoutThenLate() throws {
        var machine = Self.machine(timeout: .seconds(10))
        let (slowTicket, start) = machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero)
        let slow = try #require(Self.started(start).first)
        #expect(slow.abandonAt == .seconds(70), "the late window: a minute after the deadline")
        let (_, queued) = machine.submit(.single(Self.write(Self.hue, .float(5))), now: .seconds(1))
        #expect(Self.started(queued).count == 1, "another characteristic is not held up")
        let (behindTicket, behind) = machine.submit(.single(Self.write(Self.on, .bool(false))), now: .seconds(1))
        #expect(behind.isEmpty)
        #expect(machine.expire(now: .milliseconds(9999)).isEmpty, "not yet")
        let expired = machine.expire(now: .seconds(10))
        #expect(Self.acknowledged(expired).map(\.0) == [slowTicket])
        #expect(Self.acknowledged(expired).first?.1.first?.outcome == .timedOut(.write(.bool(true))))
        #expect(!expired.contains(.abandon(slow.id)), "its confirmation may still come")
        let next = try #require(Self.started(expired).first)
        #expect(next.ticket == behindTicket)
        // The slow device confirms after all: the value follows it, nothing is acknowledged.
        #expect(machine.complete(slow.id, with: Self.ok(.bool(true), for: Self.on), now: .seconds(12)) == [.apply(Self.on, .bool(true))])
        let finished = machine.complete(next.id, with: Self.ok(.bool(false), for: Self.on), now: .seconds(13))
        #expect(finished.count == 2 && Self.acknowledged(finished).map(\.0) == [behindTicket])
    }

    @Test("a late confirmation after a newer write was confirmed does not overwrite it; one after the late window is dropped; both calls are abandoned")
    func supersededAndAbandoned() throws {
        var machine = Self.machine(timeout: .seconds(10))
        let first = try #require(Self.started(machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero).1).first)
        _ = machine.submit(.single(Self.write(Self.on, .bool(false))), now: .zero)
        let second = try #require(Self.started(machine.expire(now: .seconds(10))).first)
        let confirmed = machine.complete(second.id, with: Self.ok(.bool(false), for: Self.on), now: .seconds(11))
        #expect(confirmed.first == .abandon(first.id), "the late write's call is stopped once a newer write is confirmed")
        #expect(machine.complete(first.id, with: Self.ok(.bool(true), for: Self.on), now: .seconds(12)).isEmpty, "superseded")

        let third = try #require(Self.started(machine.submit(.single(Self.write(Self.hue, .float(1))), now: .seconds(20)).1).first)
        #expect(!machine.expire(now: .seconds(30)).contains(.abandon(third.id)))
        #expect(machine.nextDeadline() == .seconds(90), "the late window")
        #expect(machine.expire(now: .seconds(90)) == [.abandon(third.id)])
        #expect(machine.nextDeadline() == nil)
        #expect(machine.complete(third.id, with: Self.ok(.float(1), for: Self.hue), now: .seconds(91)).isEmpty, "abandoned")
    }

    @Test("a read past its deadline is abandoned: its answer changes nothing")
    func readTimeout() throws {
        var machine = Self.machine(timeout: .seconds(2))
        let read = try #require(Self.started(machine.submit(.single(Machine.Item(Self.brightness, .read)), now: .zero).1).first)
        let expired = machine.expire(now: .seconds(2))
        #expect(Self.acknowledged(expired).first?.1.first?.outcome == .timedOut(.read))
        #expect(expired.contains(.abandon(read.id)), "the call is stopped at the deadline")
        #expect(machine.nextDeadline() == nil)
        #expect(machine.complete(read.id, with: Self.ok(.int(3), for: Self.brightness), now: .seconds(3)).isEmpty)
    }

    @Test("a device's refusal is acknowledged with its status and applies nothing")
    func refusal() throws {
        var machine = Self.machine()
        let (ticket, actions) = machine.submit(.single(Self.write(Self.on, .bool(true))), now: .zero)
        let job = try #require(Self.started(actions).first)
        let refusal = StatusError(.notAllowedInCurrentState, "not now")
        let done = machine.complete(job.id, with: [Self.on: .failure(refusal)], now: .seconds(1))
        #expect(done == [.acknowledge(ticket, [.init(item: Self.write(Self.on, .bool(true)), outcome: .failed(refusal))])])
    }

    @Test("several characteristics in one call: it waits until it is first in every line, and runs once")
    func together() throws {
        var machine = Self.machine()
        let before = try #require(Self.started(machine.submit(.single(Self.write(Self.hue, .float(1))), now: .zero).1).first)
        let items = [Self.write(Self.on, .bool(true)), Self.write(Self.hue, .float(30)), Self.write(Self.brightness, .int(50))]
        let (ticket, waiting) = machine.submit(.together(items), now: .zero)
        #expect(waiting.isEmpty, "hue is busy")
        let (_, after) = machine.submit(.single(Self.write(Self.on, .bool(false))), now: .zero)
        #expect(after.isEmpty, "in line behind the service write")
        let together = try #require(Self.started(machine.complete(before.id, with: Self.ok(.float(1), for: Self.hue), now: .seconds(1))).first)
        #expect(together.items == items)
        // The device answers two of three: the third counts as a communication failure.
        let answer: Machine.Answer = [Self.on: .success(.bool(true)), Self.hue: .failure(StatusError(.invalidValue, "no"))]
        let done = machine.complete(together.id, with: answer, now: .seconds(2))
        #expect(done.filter { if case .apply = $0 { true } else { false } } == [.apply(Self.on, .bool(true))])
        let acknowledgement = try #require(Self.acknowledged(done).first)
        #expect(acknowledgement.0 == ticket)
        #expect(acknowledgement.1.map(\.outcome.status) == [.success, .invalidValue, .communicationFailure])
        #expect(Self.started(done).count == 1, "the write queued behind it starts")
    }

    @Test("independent writes: each in its own line, one acknowledgement when the last is done, in the command's order")
    func each() throws {
        var machine = Self.machine(queueLimit: 0)
        let busy = try #require(Self.started(machine.submit(.single(Self.write(Self.hue, .float(1))), now: .zero).1).first)
        let items = [Self.write(Self.on, .bool(true)), Self.write(Self.hue, .float(2)), Self.write(Self.brightness, .int(3))]
        let (ticket, actions) = machine.submit(.each(items), now: .zero)
        let jobs = Self.started(actions)
        #expect(jobs.count == 2 && Self.acknowledged(actions).isEmpty, "hue's line is full: refused, the others run")
        #expect(machine.complete(jobs[1].id, with: Self.ok(.int(3), for: Self.brightness), now: .seconds(1)) == [.apply(Self.brightness, .int(3))])
        let last = machine.complete(jobs[0].id, with: Self.ok(.bool(true), for: Self.on), now: .seconds(1))
        let acknowledgement = try #require(Self.acknowledged(last).first)
        #expect(acknowledgement.0 == ticket && acknowledgement.1.map(\.item) == items)
        #expect(acknowledgement.1.map(\.outcome.status) == [.success, .busy, .success])
        _ = busy
        #expect(Self.acknowledged(machine.submit(.each([]), now: .zero).1).count == 1, "nothing to write: acknowledged at once")
    }
}

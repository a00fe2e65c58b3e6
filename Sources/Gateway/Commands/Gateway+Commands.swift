import Accessories
import Foundation
import HomeModel
import MQTT
import Timing
import Wire

/// Sets and gets, forward in one pass: the inbound command is resolved to a characteristic and
/// checked (``Characteristic/validateWrite(_:)``), handed to the ``CommandMachine``, and the
/// machine's actions are carried out here: device calls (at once when the device answers at once,
/// else as device work with a deadline), values applied to the tree and their retained topics,
/// and exactly one acknowledgement per command.
extension Gateway {
    /// Who hears how a command went.
    enum Recipient: Sendable {
        /// An MQTT command: acknowledged on its result topic and Response Topic.
        case reply(Reply, Acknowledgement)
        /// Work in the engine that waits for the outcome (identify, an action set run by a
        /// request or a trigger).
        case waiter(CheckedContinuation<[CommandMachine.Result], Never>)
        /// Nobody: a read to refresh a value.
        case nobody
    }

    /// The shape of an MQTT acknowledgement.
    enum Acknowledgement: Sendable {
        /// A set or a get: `{"ok": true, "value": ..., "ms": ...}` or the failure.
        case single
        /// Several writes: `{"ok": <all ok>, "results": [...]}` with these fields besides.
        case aggregated([String: JSON])
    }

    /// A set or a get arrived: read against the tree (``HomeTree/command(for:)``), then handed to
    /// the machine; a refusal is acknowledged at once and reaches no device.
    func handle(_ command: Inbound.Command, from message: Message) {
        metrics.recordCommand(command.verb)
        let reply = Reply(to: message, id: command.body.id)
        if let service = tree.adaptiveLightingService(of: command.path) {
            handleAdaptiveLighting(command, service: service, reply: reply)
            return
        }
        do {
            let (machineCommand, shape) = try tree.command(for: command)
            submit(machineCommand, to: .reply(reply, shape))
        } catch {
            acknowledge(reply, failure: error.status, error.message)
        }
    }

    // MARK: Running commands

    /// Hands a command to the machine and carries out what it says.
    func submit(_ command: CommandMachine.Command, to recipient: Recipient) {
        let (ticket, actions) = machine.submit(command, now: clock.elapsed)
        recipients[ticket] = recipient
        perform(actions)
    }

    /// Runs a command and waits for its outcomes.
    func outcomes(of command: CommandMachine.Command) async -> [CommandMachine.Result] {
        await withCheckedContinuation { continuation in
            submit(command, to: .waiter(continuation))
        }
    }

    /// Carries out the machine's actions in order; a device that answers at once adds the
    /// actions of its answer to the list.
    func perform(_ actions: [CommandMachine.Action]) {
        var pending = actions[...]
        while let action = pending.popFirst() {
            switch action {
            case .start(let job):
                if let answer = job.immediateAnswer(from: driver) {
                    recordFailures(of: job, answer)
                    pending.append(contentsOf: machine.complete(job.id, with: answer, now: clock.elapsed))
                } else {
                    call(job)
                }
            case .apply(let reference, let value):
                applyValue(value, to: reference)
            case .acknowledge(let ticket, let results):
                for bulb in adaptiveLighting.endByHand(results, in: tree) { adaptiveLightingChanged(bulb, ended: "its colour was set by hand") }
                deliver(results, of: ticket)
            case .abandon(let job):
                work.cancel(job)
            }
        }
        commandDeadlines.wake(for: machine.nextDeadline()) // the deadline loop sleeps until a later one
    }

    /// Calls the device as device work, cancelled when the machine abandons the job (at its
    /// `abandonAt`: ``expireCommandsOnTime()``); an answer after that changes nothing.
    private func call(_ job: CommandMachine.Job) {
        let driver = driver
        let executor = job.items.first.flatMap { driver.taskExecutor(for: $0.reference.accessoryID) }
        work.start(on: executor, for: job.id) { [weak self] in
            let answer = await job.run(on: driver)
            // Abandoned: the machine has let the job go, and a cancelled call's failure is no
            // refusal of the device's.
            guard !Task.isCancelled else { return }
            await self?.deviceAnswered(job, answer)
        }
    }

    private func deviceAnswered(_ job: CommandMachine.Job, _ answer: CommandMachine.Answer) {
        recordFailures(of: job, answer)
        perform(machine.complete(job.id, with: answer, now: clock.elapsed))
    }

    /// A device's refusals and failures, for `$health` and the metrics: a failed write counts,
    /// any failure is the accessory's last error.
    private func recordFailures(of job: CommandMachine.Job, _ answer: CommandMachine.Answer) {
        for item in job.items {
            guard case .failure(let error)? = answer[item.reference] else { continue }
            let message = "\(tree.name(of: item.reference)): \(error.message)"
            if case .write = item.operation {
                recordHealth(.failedWrite(item.reference.accessoryID, message))
            } else {
                recordHealth(.failedRead(item.reference.accessoryID, message))
            }
        }
    }

    // MARK: Deadlines

    /// Acknowledges commands past their deadline (-70408) as their deadlines come, on the engine's clock.
    func expireCommandsOnTime() async throws {
        while true {
            try await commandDeadlines.wait(commandDeadlines.sleep(until: machine.nextDeadline()), on: clock)
            perform(machine.expire(now: clock.elapsed))
        }
    }

    // MARK: Outcomes

    /// A command is done: its recipient hears how it went.
    private func deliver(_ results: [CommandMachine.Result], of ticket: CommandMachine.Ticket) {
        switch recipients.removeValue(forKey: ticket) {
        case .reply(let reply, .single)?:
            guard let result = results.first else { return }
            let (payload, status) = tree.acknowledgement(of: result, for: reply, timeout: configuration.writeTimeout)
            acknowledge(reply, payload: payload, status: status)
        case .reply(let reply, .aggregated(let extra))?:
            let (body, status) = tree.aggregatedAcknowledgement(results, extra: extra)
            acknowledge(reply, body, status: status)
        case .waiter(let continuation)?:
            continuation.resume(returning: results)
        case .nobody?, nil:
            break
        }
    }

    // MARK: Acknowledgements

    /// Sends an acknowledgement on the result topic and, when asked for, the response topic.
    func acknowledge(_ reply: Reply, _ body: [String: JSON], status: HAPStatus = .success) {
        acknowledge(reply, payload: reply.payload(body), status: status)
    }

    /// Sends an acknowledgement's payload (``Reply`` makes it, `id` and `retained` in it).
    func acknowledge(_ reply: Reply, payload: [UInt8], status: HAPStatus) {
        send(reply.resultTopic, payload, retain: false)
        if let responseTopic = reply.responseTopic {
            send(responseTopic, payload, retain: false, properties: .init(correlationData: reply.correlationData, contentType: "application/json"))
        }
        let duration = reply.received.duration(to: .now)
        timings.record(duration)
        metrics.recordAcknowledgement(status, after: duration)
    }

    /// A failed command's acknowledgement: `{"ok": false, "status", "error", "message"}`.
    func acknowledge(_ reply: Reply, failure status: HAPStatus, _ message: String) {
        acknowledge(reply, payload: reply.failurePayload(status, message), status: status)
    }

    // MARK: Values

    /// A value the device confirmed or reported: into the tree and onto its retained topic.
    func applyValue(_ value: Value, to reference: CharacteristicReference) {
        guard let taken = tree.takeValue(value, at: reference) else { return } // an accessory the home lacks
        heard(from: reference.accessoryID)
        guard let characteristic = taken.characteristic else { return }
        if adaptiveLighting.isAnyOn, characteristic.type == "active-transition-count", let bulb = adaptiveLighting.endByBulb(value, at: reference, in: tree) {
            adaptiveLightingChanged(bulb, ended: "the bulb ended it (its active transition count is 0)")
        }
        // The history keeps what changed (an event of a momentary characteristic is a change).
        if publishValue(value, of: characteristic, reference: reference, home: taken.home), taken.changed {
            recordHistory(value, of: reference)
        }
    }
}

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

    /// A set or a get arrived.
    func handle(_ command: Inbound.Command, from message: Message) {
        metrics.recordCommand(command.verb)
        let reply = Reply(to: message, id: command.body.id)
        if let service = adaptiveLightingService(of: command.path) {
            handleAdaptiveLighting(command, service: service, reply: reply)
            return
        }
        do {
            let resolved = tree.map.resolve(command.path) // once: a set's topic names a service or a characteristic
            if command.verb == .set, case .found(.service) = resolved {
                submit(.together(try serviceItems(command.body, path: command.path)), to: .reply(reply, .aggregated([:])))
                return
            }
            let item = try item(for: command, resolved: resolved)
            submit(.single(item), to: .reply(reply, .single))
        } catch {
            acknowledge(reply, failure: error.status, error.message)
        }
    }

    /// A service-level set (`{"on": true, "brightness": 50}` on `<service>/set`): every
    /// characteristic named by its segment and every value checked before anything is written
    /// (one refusal refuses the whole set), then written in one device call.
    private func serviceItems(_ body: Inbound.Body, path: [Substring]) throws(StatusError) -> [CommandMachine.Item] {
        guard case .object(let members) = body else {
            throw StatusError(.invalidValue, "a set on a service takes a JSON object of its characteristics and values: {\"on\": true, \"brightness\": 50}")
        }
        var items: [CommandMachine.Item] = []
        for (segment, raw) in members.sorted(by: { $0.key < $1.key }) where segment != "id" {
            let levels = path + [Substring(segment)]
            guard case .found(.characteristic(_, let reference)) = tree.map.resolve(levels) else {
                throw StatusError(.noSuchResource, tree.map.describeUnresolved(levels: levels, index: path.count, segment: segment, base: base))
            }
            guard let characteristic = tree.characteristic(reference) else {
                throw StatusError(.noSuchResource, "\(segment) is not a characteristic of \(path.joined(separator: "/"))")
            }
            let value = try CommandValue.read(.object(["value": raw]), for: characteristic)
            items.append(CommandMachine.Item(reference, .write(value)))
        }
        guard !items.isEmpty else {
            throw StatusError(.invalidValue, "the JSON object names no characteristic of \(path.joined(separator: "/")): {\"on\": true, \"brightness\": 50}")
        }
        return items
    }

    /// The characteristic a command names, and what to do with it, checked: a value that fails
    /// never reaches the device.
    private func item(for command: Inbound.Command, resolved: TopicMap.Resolution) throws(StatusError) -> CommandMachine.Item {
        let verb = command.verb.rawValue
        guard !command.path.isEmpty else {
            throw StatusError(.noSuchResource, "\(verb) needs a characteristic: \(base)/<home>/<room>/<accessory>/<service>/<characteristic>/\(verb)")
        }
        let reference: CharacteristicReference
        switch resolved {
        case .found(.characteristic(_, let found)):
            reference = found
        case .found:
            throw StatusError(.noSuchResource, "\(command.path.joined(separator: "/")) is not a characteristic; \(verb) takes <home>/<room>/<accessory>/<service>/<characteristic>/\(verb)")
        case .unresolved(let index, let segment):
            throw StatusError(.noSuchResource, tree.map.describeUnresolved(levels: command.path, index: index, segment: segment, base: base))
        }
        guard let characteristic = tree.characteristic(reference) else {
            throw StatusError(.noSuchResource, "\(command.path.joined(separator: "/")) is not a characteristic")
        }
        switch command.verb {
        case .set:
            return CommandMachine.Item(reference, .write(try CommandValue.read(command.body, for: characteristic)))
        case .get:
            try characteristic.validateRead()
            return CommandMachine.Item(reference, .read)
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
                if let answer = immediateAnswer(to: job) {
                    recordFailures(of: job, answer)
                    pending.append(contentsOf: machine.complete(job.id, with: answer, now: clock.elapsed))
                } else {
                    call(job)
                }
            case .apply(let reference, let value):
                applyValue(value, to: reference)
            case .acknowledge(let ticket, let results):
                endAdaptiveLightingOnManualWrites(results)
                deliver(results, of: ticket)
            case .abandon(let job):
                work.cancel(job)
            }
        }
        wakeCommandTimerIfNeeded()
    }

    /// The device's answer without a suspension, when it has one (a simulated accessory without
    /// latency); nil when the call takes time.
    private func immediateAnswer(to job: CommandMachine.Job) -> CommandMachine.Answer? {
        guard job.items.count == 1, let item = job.items.first else { return nil }
        switch item.operation {
        case .write(let value):
            return driver.writeNow(value, to: item.reference).map { [item.reference: $0.map { value }] }
        case .read:
            return driver.readNow(item.reference).map { [item.reference: $0] }
        }
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
            let generation = commandAlarm.generation
            let deadline = machine.nextDeadline()
            commandTimerDeadline = deadline
            try await commandAlarm.sleep(until: deadline.map(EngineClock.Instant.init), on: clock, unlessRungAfter: generation)
            commandTimerDeadline = nil
            perform(machine.expire(now: clock.elapsed))
        }
    }

    /// Wakes the deadline loop when the machine's next deadline is earlier than the one it sleeps for.
    private func wakeCommandTimerIfNeeded() {
        guard let next = machine.nextDeadline() else { return }
        if let sleepingUntil = commandTimerDeadline, sleepingUntil <= next { return }
        commandTimerDeadline = next
        commandAlarm.ring()
    }

    // MARK: Outcomes

    /// A command is done: its recipient hears how it went.
    private func deliver(_ results: [CommandMachine.Result], of ticket: CommandMachine.Ticket) {
        switch recipients.removeValue(forKey: ticket) {
        case .reply(let reply, .single)?:
            guard let result = results.first else { return }
            acknowledge(reply, result)
        case .reply(let reply, .aggregated(let extra))?:
            acknowledge(reply, aggregatedAcknowledgement(results, extra: extra), status: results.first { $0.outcome.status != .success }?.outcome.status ?? .success)
        case .waiter(let continuation)?:
            continuation.resume(returning: results)
        case .nobody?, nil:
            break
        }
    }

    /// A set's or get's acknowledgement.
    private func acknowledge(_ reply: Reply, _ result: CommandMachine.Result) {
        switch result.outcome {
        case .written(let value), .read(let value):
            let label = tree.label(of: value, at: result.item.reference)
            acknowledge(reply, payload: reply.successPayload(value, label: label, milliseconds: reply.millisecondsSinceReceived), status: .success)
        case .failed(let error):
            acknowledge(reply, failure: error.status, error.message)
        case .timedOut(.write):
            acknowledge(reply, failure: .timedOut, "\(tree.name(of: result.item.reference)) did not confirm the write within \(configuration.writeTimeout.inSeconds)")
        case .timedOut(.read):
            acknowledge(reply, failure: .timedOut, "\(tree.name(of: result.item.reference)) did not answer the read within \(configuration.writeTimeout.inSeconds)")
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
        acknowledge(reply, ["ok": false, "status": .int(status.rawValue), "error": .string(status.name), "message": .string(message)], status: status)
    }

    /// Each write's outcome as aggregated acknowledgements list it: `accessory`, `iid`, `topic`,
    /// `ok`, `status`, `message`.
    func results(_ results: [CommandMachine.Result]) -> [JSON] {
        results.map { result in
            let reference = result.item.reference
            let topic = tree.topic(of: reference)
            return .object([
                "accessory": .string(reference.accessoryID.rawValue), "iid": .int(reference.iid), "topic": .string(topic),
                "ok": .bool(result.outcome.status == .success), "status": .int(result.outcome.status.rawValue),
                "message": .string(result.outcome.failureMessage),
            ])
        }
    }

    /// The aggregated acknowledgement: `ok` only if every write succeeded.
    func aggregatedAcknowledgement(_ outcomes: [CommandMachine.Result], extra: [String: JSON] = [:]) -> [String: JSON] {
        var body = extra
        body["ok"] = .bool(outcomes.allSatisfy { $0.outcome.status == .success })
        body["results"] = .array(results(outcomes))
        return body
    }

    // MARK: Values

    /// A value the device confirmed or reported: into the tree and onto its retained topic.
    func applyValue(_ value: Value, to reference: CharacteristicReference) {
        guard tree.locations[reference.accessoryID] != nil else { return }
        heard(from: reference.accessoryID)
        guard let (characteristic, home, changed) = tree.takeValue(value, at: reference) else { return }
        if adaptiveLighting.isAnyOn, characteristic.type == "active-transition-count" { followActiveTransitionCount(value, of: reference) }
        // The history keeps what changed (an event of a momentary characteristic is a change).
        if publishValue(value, of: characteristic, reference: reference, home: home), changed {
            recordHistory(value, of: reference)
        }
    }
}

import HomeModel
import Wire

/// A set or a get read against the tree, the first step of `Gateway+Commands.swift`: the
/// characteristics the topic names, every value checked (``CommandValue/read(_:for:)``,
/// ``Characteristic/validateRead()``) before anything reaches a device.
extension HomeTree {
    /// What a set or a get on a characteristic or a service asks the ``CommandMachine`` to do,
    /// and the shape of its acknowledgement: one characteristic's (`single`) or a service-level
    /// set's (`aggregated`). A refusal names what is wrong; nothing is done then.
    func command(for command: Inbound.Command) throws(StatusError) -> (CommandMachine.Command, Gateway.Acknowledgement) {
        let resolved = map.resolve(command.path) // once: a set's topic names a service or a characteristic
        if command.verb == .set, case .found(.service) = resolved {
            return (.together(try serviceItems(command.body, path: command.path)), .aggregated([:]))
        }
        return (.single(try item(for: command, resolved: resolved)), .single)
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
            guard case .found(.characteristic(_, let reference)) = map.resolve(levels) else {
                throw StatusError(.noSuchResource, map.describeUnresolved(levels: levels, index: path.count, segment: segment, base: base))
            }
            guard let characteristic = characteristic(reference) else {
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
            throw StatusError(.noSuchResource, map.describeUnresolved(levels: command.path, index: index, segment: segment, base: base))
        }
        guard let characteristic = characteristic(reference) else {
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

    // MARK: Acknowledgements

    /// A set's or get's acknowledgement (``Reply`` adds `id` and `retained`), and its status:
    /// the value with its label and `ms`, or the failure in words (a timeout names the
    /// characteristic and `timeout`).
    func acknowledgement(of result: CommandMachine.Result, for reply: Reply, timeout: Duration) -> (payload: [UInt8], status: HAPStatus) {
        switch result.outcome {
        case .written(let value), .read(let value):
            let label = label(of: value, at: result.item.reference)
            return (reply.successPayload(value, label: label, milliseconds: reply.millisecondsSinceReceived), .success)
        case .failed(let error):
            return (reply.failurePayload(error.status, error.message), error.status)
        case .timedOut(.write):
            return (reply.failurePayload(.timedOut, "\(name(of: result.item.reference)) did not confirm the write within \(timeout.inSeconds)"), .timedOut)
        case .timedOut(.read):
            return (reply.failurePayload(.timedOut, "\(name(of: result.item.reference)) did not answer the read within \(timeout.inSeconds)"), .timedOut)
        }
    }

    /// Each write's outcome as aggregated acknowledgements list it: `accessory`, `iid`, `topic`,
    /// `ok`, `status`, `message`.
    func listed(_ results: [CommandMachine.Result]) -> [JSON] {
        results.map { result in
            let reference = result.item.reference
            return .object([
                "accessory": .string(reference.accessoryID.rawValue), "iid": .int(reference.iid), "topic": .string(topic(of: reference)),
                "ok": .bool(result.outcome.status == .success), "status": .int(result.outcome.status.rawValue),
                "message": .string(result.outcome.failureMessage),
            ])
        }
    }

    /// The aggregated acknowledgement, `extra` with `ok` (only if every write succeeded) and
    /// `results` (``listed(_:)``); its status is the first failure's.
    func aggregatedAcknowledgement(_ results: [CommandMachine.Result], extra: [String: JSON] = [:]) -> (body: [String: JSON], status: HAPStatus) {
        var body = extra
        body["ok"] = .bool(results.allSatisfy { $0.outcome.status == .success })
        body["results"] = .array(listed(results))
        return (body, results.first { $0.outcome.status != .success }?.outcome.status ?? .success)
    }
}

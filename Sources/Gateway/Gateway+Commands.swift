import Accessories
import Foundation
import HomeModel
import MQTT
import Synchronization
import Wire

/// `.../set` and `.../get`: validated, queued per characteristic in arrival order, carried out by
/// the driver with a timeout, acknowledged once, after the retained value was updated.
extension Gateway {
    enum CommandKind: Sendable {
        case set, get
    }

    /// One queued write or read.
    struct Command: Sendable {
        enum Action: Sendable {
            case write(Value)
            case read
        }

        let action: Action
        let reply: Reply
    }

    /// A set or get arrived on `levels` (after the base, without `set`/`get`).
    func handleCommand(_ kind: CommandKind, levels: [Substring], message: Message) {
        metrics.recordCommand(kind: kind == .set ? "set" : "get")
        let body = JSON.body(message.payload)
        let reply = Reply(to: message, id: body?["id"])
        if message.retain {
            // A retained command (mosquitto_pub -r) runs once; clear it so it never fires again.
            send(message.topic.string, [], retain: true)
        }
        guard !levels.isEmpty else {
            let verb = kind == .set ? "set" : "get"
            acknowledge(reply, failure: .noSuchResource, "\(verb) needs a characteristic: \(base)/<home>/<room>/<accessory>/<service>/<characteristic>/\(verb)")
            return
        }
        guard case .found(let target) = map.resolve(levels) else {
            if case .unresolved(let index, let segment) = map.resolve(levels) {
                acknowledge(reply, failure: .noSuchResource, describeUnresolved(levels: levels, index: index, segment: segment))
            }
            return
        }
        guard case .characteristic(_, let reference) = target, let (_, accessory) = accessory(reference.accessoryID),
              let (_, characteristic) = accessory.characteristic(reference.iid) else {
            acknowledge(reply, failure: .noSuchResource, "\(levels.joined(separator: "/")) is not a characteristic; \(kind == .set ? "set" : "get") takes <home>/<room>/<accessory>/<service>/<characteristic>/\(kind == .set ? "set" : "get")")
            return
        }
        do {
            let action = try kind == .set ? .write(parseValue(message.payload, body: body, for: characteristic)) : Command.Action.read
            if kind == .get { try characteristic.validateRead() }
            let command = Command(action: action, reply: reply)
            // Nothing waiting and a device that answers at once: done here, without a task.
            if case .write(let value) = action, queues[reference] == nil, !draining.contains(reference),
               let result = driver.writeNow(value, to: reference) {
                finishWrite(result, value: value, command: command, on: reference)
                return
            }
            enqueue(command, for: reference)
        } catch {
            acknowledge(reply, failure: error.status, error.message)
        }
    }

    /// The value of a set: `{"value": ..., "id": ...}` or a bare payload.
    private func parseValue(_ payload: [UInt8], body: [String: JSON]?, for characteristic: Characteristic) throws(StatusError) -> Value {
        guard characteristic.isWritable else { throw StatusError(.readOnly, "\(characteristic.displayName) is read-only") }
        let value: Value
        if let body {
            guard let raw = body["value"] else {
                throw StatusError(.invalidValue, "the JSON object has no \"value\"; send {\"value\": ..., \"id\": ...} or a bare value")
            }
            value = try Value.parse(json: raw, format: characteristic.format, name: characteristic.displayName)
        } else {
            value = try Value.parse(payload: String(decoding: payload, as: UTF8.self), format: characteristic.format, name: characteristic.displayName)
        }
        try characteristic.validate(value)
        return value
    }

    /// Queues a command; a full queue answers -70403.
    private func enqueue(_ command: Command, for reference: CharacteristicReference) {
        var queue = queues[reference] ?? []
        guard queue.count < configuration.queueLimit else {
            acknowledge(command.reply, failure: .busy, "\(configuration.queueLimit) commands are already waiting for this characteristic; try again later")
            return
        }
        queue.append(command)
        queues[reference] = queue
        guard !draining.contains(reference) else { return }
        draining.insert(reference)
        spawn { await self.drain(reference) }
    }

    /// Carries out a characteristic's commands one after the other.
    private func drain(_ reference: CharacteristicReference) async {
        while let command = queues[reference]?.first, !Task.isCancelled {
            queues[reference]?.removeFirst()
            await perform(command, on: reference)
        }
        queues[reference] = nil
        draining.remove(reference)
    }

    private func perform(_ command: Command, on reference: CharacteristicReference) async {
        switch command.action {
        case .write(let value):
            await performWrite(value, command: command, on: reference)
        case .read:
            await performRead(command, on: reference)
        }
    }

    private func performWrite(_ value: Value, command: Command, on reference: CharacteristicReference) async {
        let driver = driver
        let write = Task { await Self.write(value, to: reference, with: driver) }
        switch await outcome(of: write) {
        case .some(let result):
            finishWrite(result, value: value, command: command, on: reference)
        case nil:
            acknowledge(command.reply, failure: .timedOut, "\(name(of: reference)) did not confirm the write within \(seconds(configuration.writeTimeout))")
            // Should the device confirm after all, the retained value follows it (no second acknowledgement).
            Task {
                if case .success = await write.value { self.applyValue(value, to: reference) }
            }
        }
    }

    /// The device answered a write: the value into the tree and its topic, then the acknowledgement.
    private func finishWrite(_ result: Result<Void, StatusError>, value: Value, command: Command, on reference: CharacteristicReference) {
        switch result {
        case .success:
            applyValue(value, to: reference)
            acknowledge(command.reply, ["ok": true, "value": .value(value), "ms": .double(elapsed(since: command.reply.received))])
        case .failure(let error):
            acknowledge(command.reply, failure: error.status, error.message)
        }
    }

    private func performRead(_ command: Command, on reference: CharacteristicReference) async {
        let driver = driver
        let read = Task { await Self.read(reference, with: driver) }
        switch await outcome(of: read) {
        case .success(let value):
            applyValue(value, to: reference)
            acknowledge(command.reply, ["ok": true, "value": .value(value), "ms": .double(elapsed(since: command.reply.received))])
        case .failure(let error):
            acknowledge(command.reply, failure: error.status, error.message)
        case nil:
            read.cancel()
            acknowledge(command.reply, failure: .timedOut, "\(name(of: reference)) did not answer the read within \(seconds(configuration.writeTimeout))")
        }
    }

    private static func write(_ value: Value, to reference: CharacteristicReference, with driver: any AccessoryDriver) async -> Result<Void, StatusError> {
        do {
            try await driver.write(value, to: reference)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    private static func read(_ reference: CharacteristicReference, with driver: any AccessoryDriver) async -> Result<Value, StatusError> {
        do {
            return .success(try await driver.read(reference))
        } catch {
            return .failure(error)
        }
    }

    /// The task's result, or nil if it took longer than the write timeout (the task goes on).
    private func outcome<T: Sendable>(of task: Task<Result<T, StatusError>, Never>) async -> Result<T, StatusError>? {
        let timeout = configuration.writeTimeout
        let first = FirstOf<Result<T, StatusError>?>()
        return await withCheckedContinuation { continuation in
            first.start(continuation)
            let timer = Task {
                try? await Task.sleep(for: timeout)
                first.offer(nil)
            }
            Task {
                first.offer(await task.value)
                timer.cancel()
            }
        }
    }

    /// A value the device confirmed or reported: into the tree and onto its retained topic.
    func applyValue(_ value: Value, to reference: CharacteristicReference) {
        guard let location = locations[reference.accessoryID] else { return }
        let accessory = homes[location.home].accessories[location.accessory]
        guard let (_, characteristic) = accessory.characteristic(reference.iid) else { return }
        if !characteristic.isMomentary, characteristic.value != value {
            homes[location.home].accessories[location.accessory].setValue(value, iid: reference.iid)
            layoutChanged = true // $layout carries values too
        }
        publishValue(value, of: characteristic, reference: reference, home: homes[location.home].id)
    }

    func name(of reference: CharacteristicReference) -> String {
        guard let (_, accessory) = accessory(reference.accessoryID), let (_, characteristic) = accessory.characteristic(reference.iid) else {
            return reference.description
        }
        return "\(accessory.name) (\(characteristic.displayName))"
    }

    private func elapsed(since start: ContinuousClock.Instant) -> Double {
        let duration = start.duration(to: .now)
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (milliseconds * 10).rounded() / 10
    }

    func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// Resumes a continuation with the first value offered; later offers are ignored.
final class FirstOf<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, done: Bool)>((nil, false))

    func start(_ continuation: CheckedContinuation<T, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func offer(_ value: T) {
        let continuation = state.withLock { state -> CheckedContinuation<T, Never>? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
    }
}

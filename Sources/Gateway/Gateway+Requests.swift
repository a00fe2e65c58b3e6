import Accessories
import Foundation
import HomeModel
import MQTT
import Wire

/// `<base>/$request/<object>/<verb>`: answered on `<base>/$response/<object>/<verb>` and on the
/// request's Response Topic, echoing `transaction` and the Correlation Data. The home's own
/// requests are in `Management/`, `history/get` in `History/`; the simulator's controls and the
/// gateway's statistics are here; anything else is answered `unknown-request`.
extension Gateway {
    /// A request's failure: its code (`not-found`, `invalid-request`, ...) and message.
    struct RequestError: Error {
        let code: String
        let message: String
        /// The device's HAP status, for `device-error` and `timeout`.
        var status: HAPStatus?

        init(code: String, message: String, status: HAPStatus? = nil) {
            self.code = code
            self.message = message
            self.status = status
        }

        static func invalid(_ message: String) -> RequestError { RequestError(code: "invalid-request", message: message) }
        static func notFound(_ message: String) -> RequestError { RequestError(code: "not-found", message: message) }
    }

    func handle(_ request: Inbound.Request, from message: Message) {
        let responseTopic = "\(base)/$response/\(request.path)"
        let transaction = request.body?["transaction"].flatMap { $0.isScalar ? $0 : nil }
        let replyTopic = message.properties.responseTopic
        let correlationData = message.properties.correlationData
        let respond = { @Sendable (gateway: isolated Gateway, answer: [String: JSON]) in
            var answer = answer
            if let transaction { answer["transaction"] = transaction }
            let payload = JSON.object(answer).encoded()
            gateway.send(responseTopic, payload, retain: false)
            if let replyTopic {
                gateway.send(replyTopic, payload, retain: false, properties: .init(correlationData: correlationData, contentType: "application/json"))
            }
        }
        guard let body = request.body else {
            respond(self, ["ok": false, "error": "invalid-request", "message": "the body must be a JSON object"])
            return
        }
        if request.object == "gateway", request.verb == "statistics" {
            let summary = timings.summary
            if body["reset"] == true { timings.reset() }
            respond(self, ["ok": true, "data": .object(summary)])
            return
        }
        let answer: @Sendable (isolated Gateway) async throws -> [String: JSON]
        if !request.verb.isEmpty, ManagementRequest.objects.contains(request.object) {
            answer = { gateway in try await gateway.managementRequest(object: request.object, verb: request.verb, body: body) }
        } else if !request.verb.isEmpty, request.object == "history" {
            answer = { gateway in try await gateway.historyRequest(request.verb, body: body) }
        } else if !request.verb.isEmpty, request.object == "simulator", let simulator {
            answer = { gateway in try await gateway.simulatorRequest(request.verb, body: body, simulator: simulator) }
        } else {
            respond(self, ["ok": false, "error": "unknown-request", "message": .string("unknown request \"\(request.path)\"")])
            return
        }
        // Requests may wait for devices: they run as device work, and answer when done.
        work.start { [weak self] in
            guard let self else { return }
            await self.answer(with: answer, respond: respond)
        }
    }

    /// Runs a request and answers it: `{"ok": true, "data": ...}` (once what it changed is
    /// stored) or its error.
    private func answer(with request: @Sendable (isolated Gateway) async throws -> [String: JSON],
                        respond: @Sendable (isolated Gateway, [String: JSON]) -> Void) async {
        do {
            let mark = storeWriter.asked
            let data = try await request(self)
            // A change is answered once it is in the store: an acknowledged change survives a
            // crash or a power cut right after. One the store could not take (a full disk) is
            // in effect, but said so: it is lost at the next start unless a later write stores it.
            await storeWriter.flush()
            if let failure = storeWriter.failure(after: mark) {
                respond(self, ["ok": false, "error": "store-failed", "data": .object(data),
                               "message": .string("the change is in effect but not stored, so a restart would undo it: \(failure)")])
                return
            }
            respond(self, ["ok": true, "data": .object(data)])
        } catch let error as RequestError {
            var answer: [String: JSON] = ["ok": false, "error": .string(error.code), "message": .string(error.message)]
            if let status = error.status { answer["status"] = .int(status.rawValue) }
            respond(self, answer)
        } catch {
            respond(self, ["ok": false, "error": "invalid-request", "message": .string("\(error)")])
        }
    }

    private func simulatorRequest(_ verb: String, body: [String: JSON], simulator: Simulator) async throws -> [String: JSON] {
        guard ["update", "reachability", "behaviour", "flood"].contains(verb) else {
            throw RequestError(code: "unknown-request", message: "unknown simulator request \"\(verb)\"; known: update, reachability, behaviour, flood")
        }
        let id = AccessoryID(try string(body, "accessory"))
        guard let (_, accessory) = accessory(id) else { throw RequestError.notFound("no accessory \"\(id)\"") }
        switch verb {
        case "update":
            let (reference, characteristic) = try characteristic(in: accessory, body: body)
            guard let raw = body["value"] else { throw RequestError.invalid("\"value\" is required") }
            let value: Value
            do {
                value = try Value.parse(json: raw, format: characteristic.format, name: characteristic.displayName)
                try characteristic.validate(value)
            } catch {
                throw RequestError.invalid(error.message)
            }
            try await device { try await simulator.update(reference, to: value) }
            // Published before the answer, so whoever reads the answer finds the value retained.
            if characteristic.supportsEvents, await simulator.isReachable(id) { applyValue(value, to: reference) }
            return ["accessory": .string(id.rawValue), "iid": .int(reference.iid), "value": .value(value)]
        case "reachability":
            guard case .bool(let reachable)? = body["reachable"] else { throw RequestError.invalid("\"reachable\" must be true or false") }
            try await device { try await simulator.setReachable(id, reachable) }
            // Applied before the answer (the device events that follow change nothing more).
            for affected in [id] + homes.flatMap(\.accessories).filter({ $0.bridgeID == id }).map(\.id) {
                setReachable(affected, await simulator.isReachable(affected))
            }
            return ["accessory": .string(id.rawValue), "reachable": .bool(reachable)]
        case "flood":
            let (reference, characteristic) = try characteristic(in: accessory, body: body)
            guard let count = body["count"]?.int.flatMap({ Int(exactly: $0) }), (1...10_000_000).contains(count) else {
                throw RequestError.invalid("\"count\" must be a whole number from 1 to 10000000")
            }
            guard characteristic.format.isNumeric, let lower = characteristic.minValue, let upper = characteristic.maxValue else {
                throw RequestError.invalid("flood needs a numeric characteristic with a minimum and a maximum")
            }
            try await device { try await simulator.flood(reference, count: count, range: lower...upper) }
            return ["accessory": .string(id.rawValue), "iid": .int(reference.iid), "count": .int(count)]
        case "behaviour":
            var latency: Duration?
            if let milliseconds = body["latency_ms"] {
                guard let number = milliseconds.double, number >= 0 else { throw RequestError.invalid("\"latency_ms\" must be a number of milliseconds") }
                latency = .milliseconds(Int64(number))
            }
            var failStatus: HAPStatus?
            var clear = false
            if let status = body["fail_status"] {
                if status == .null {
                    clear = true
                } else if let code = status.int, let hap = HAPStatus(rawValue: Int(code)), hap != .success {
                    failStatus = hap
                } else {
                    throw RequestError.invalid("\"fail_status\" must be a HAP status from -70401 to -70412, or null")
                }
            }
            try await device { try await simulator.setBehaviour(id, latency: latency, failStatus: failStatus, clearFailure: clear) }
            return ["accessory": .string(id.rawValue)]
        default:
            throw RequestError(code: "unknown-request", message: "unknown simulator request \"\(verb)\"; known: update, reachability, behaviour, flood")
        }
    }

    /// The characteristic a request names: `iid`, or `characteristic` (type name) with an optional `service`.
    private func characteristic(in accessory: Accessory, body: [String: JSON]) throws -> (CharacteristicReference, Characteristic) {
        if let iid = body["iid"]?.int.flatMap({ Int(exactly: $0) }) {
            guard let (_, characteristic) = accessory.characteristic(iid) else { throw RequestError.notFound("\(accessory.name) has no characteristic with iid \(iid)") }
            return (CharacteristicReference(accessoryID: accessory.id, iid: iid), characteristic)
        }
        let type = try string(body, "characteristic")
        let service = body["service"]
        let candidates = accessory.visibleServices.filter { candidate in
            switch service {
            case .int(let iid)?: return candidate.iid == iid
            case .string(let name)?: return candidate.type == name || candidate.name == name
            default: return true
            }
        }
        guard let characteristic = candidates.lazy.compactMap({ $0.characteristic(ofType: type) }).first else {
            throw RequestError.notFound("\(accessory.name) has no characteristic \"\(type)\"")
        }
        return (CharacteristicReference(accessoryID: accessory.id, iid: characteristic.iid), characteristic)
    }

    private func string(_ body: [String: JSON], _ key: String) throws -> String {
        guard let value = body[key]?.string, !value.isEmpty else { throw RequestError.invalid("\"\(key)\" is required") }
        return value
    }

    private func device(_ operation: () async throws -> Void) async throws {
        do {
            try await operation()
        } catch let error as StatusError {
            throw error.status == .noSuchResource ? RequestError.notFound(error.message) : RequestError.invalid(error.message)
        }
    }
}

import Accessories
import Foundation
import HomeModel
import MQTT
import Wire

/// `<base>/$request/<object>/<verb>`, the one router: parsed into a ``GatewayRequest``, carried
/// out by the file of its kind (the home's own requests in `Management/`, `history/get` in
/// `History/`, the simulator's controls in `Simulator/`; the gateway's statistics here), and
/// answered on `<base>/$response/<object>/<verb>` and on the request's Response Topic, echoing
/// `transaction` and the Correlation Data; anything else is answered `unknown-request`.
extension Gateway {
    /// Parses a request, answers what needs no device at once (`gateway/statistics`, a request
    /// that does not parse), and runs the rest as device work: it may wait for devices and
    /// answers when done.
    func handle(_ request: Inbound.Request, from message: Message) {
        let respond = responder(for: request, replyTo: message)
        guard let body = request.body else {
            respond(self, ["ok": false, "error": "invalid-request", "message": "the body must be a JSON object"])
            return
        }
        if request.object == "simulator", simulator == nil {
            respond(self, RequestError.answer(for: GatewayRequest.unknown(request.path)))
            return
        }
        let parsed: GatewayRequest
        do {
            parsed = try GatewayRequest(object: request.object, verb: request.verb, body: body)
        } catch {
            respond(self, RequestError.answer(for: error))
            return
        }
        switch parsed {
        case .statistics(let reset):
            respond(self, ["ok": true, "data": .object(statistics(reset: reset))])
        default:
            work.start { [weak self] in
                guard let self else { return }
                await self.answer(with: { gateway in try await gateway.carryOut(parsed) }, respond: respond)
            }
        }
    }

    /// Carries out a parsed request: each kind in the file named for it.
    private func carryOut(_ request: GatewayRequest) async throws -> [String: JSON] {
        switch request {
        case .management(let management): try await managementRequest(management)
        case .history(let history): try await historyRequest(history)
        case .simulator(let control): try await simulatorRequest(control)
        case .statistics(let reset): statistics(reset: reset)
        }
    }

    /// `gateway/statistics`: the sets' timings, reset after when asked.
    private func statistics(reset: Bool) -> [String: JSON] {
        defer { if reset { timings.reset() } }
        return timings.summary
    }

    /// How a request is answered: on `<base>/$response/<object>/<verb>` and on its Response
    /// Topic (with its Correlation Data), echoing its `transaction`.
    private func responder(for request: Inbound.Request, replyTo message: Message) -> @Sendable (isolated Gateway, [String: JSON]) -> Void {
        let responseTopic = TopicGrammar.topic(base, .response, request.path)
        let transaction = request.body?["transaction"].flatMap { $0.isScalar ? $0 : nil }
        let replyTopic = message.properties.responseTopic
        let correlationData = message.properties.correlationData
        return { @Sendable (gateway: isolated Gateway, answer: [String: JSON]) in
            var answer = answer
            if let transaction { answer["transaction"] = transaction }
            let payload = JSON.object(answer).encoded()
            gateway.send(responseTopic, payload, retain: false)
            if let replyTopic {
                gateway.send(replyTopic, payload, retain: false, properties: .init(correlationData: correlationData, contentType: "application/json"))
            }
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
        } catch {
            respond(self, RequestError.answer(for: error))
        }
    }
}

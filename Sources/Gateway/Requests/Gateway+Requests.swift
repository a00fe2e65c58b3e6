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
        let reply = RequestReply(to: request, message: message, base: base)
        guard let body = request.body else {
            respond(reply, ["ok": false, "error": "invalid-request", "message": "the body must be a JSON object"])
            return
        }
        if request.object == "simulator", simulator == nil {
            respond(reply, RequestError.answer(for: GatewayRequest.unknown(request.path)))
            return
        }
        let parsed: GatewayRequest
        do {
            parsed = try GatewayRequest(object: request.object, verb: request.verb, body: body)
        } catch {
            respond(reply, RequestError.answer(for: error))
            return
        }
        if case .statistics(let reset) = parsed {
            respond(reply, ["ok": true, "data": .object(timings.summary)])
            if reset { timings.reset() }
            return
        }
        work.start { [weak self] in
            await self?.answer(parsed, reply: reply)
        }
    }

    /// Carries out a parsed request (each kind in the file named for it) and answers it:
    /// `{"ok": true, "data": ...}` once what it changed is stored, or its error.
    private func answer(_ request: GatewayRequest, reply: RequestReply) async {
        do {
            let mark = storeWriter.asked
            let data: [String: JSON] = switch request {
            case .management(let management): try await managementRequest(management)
            case .history(let history): try await historyRequest(history)
            case .simulator(let control): try await simulatorRequest(control)
            case .statistics: timings.summary // answered at once by handle(_:from:)
            }
            // A change is answered once it is in the store: an acknowledged change survives a
            // crash or a power cut right after. One the store could not take (a full disk) is
            // in effect, but said so: it is lost at the next start unless a later write stores it.
            await storeWriter.flush()
            if let failure = storeWriter.failure(after: mark) {
                respond(reply, ["ok": false, "error": "store-failed", "data": .object(data),
                                "message": .string("the change is in effect but not stored, so a restart would undo it: \(failure)")])
                return
            }
            respond(reply, ["ok": true, "data": .object(data)])
        } catch {
            respond(reply, RequestError.answer(for: error))
        }
    }

    /// Sends a request's answer on `$response` and on its Response Topic (``RequestReply``).
    private func respond(_ reply: RequestReply, _ answer: [String: JSON]) {
        let payload = reply.payload(answer)
        send(reply.responseTopic, payload, retain: false)
        if let replyTopic = reply.replyTopic {
            send(replyTopic, payload, retain: false, properties: .init(correlationData: reply.correlationData, contentType: "application/json"))
        }
    }
}

import NIOCore
import Wire

extension CoAPSession: PairingsManaging {
    /// Pairs with a HAP-over-CoAP accessory using its setup code: pair-setup M1-M6 on
    /// `POST /1`, plaintext, on a socket of its own.
    /// - Returns: the accessory's pairing id and long-term public key, to store.
    /// - Throws: ``HAPError`` as ``Client/pairSetup(code:controller:)`` does.
    public static func pairSetup(host: String, port: Int, code: String, controller: ControllerIdentity,
                                 group: any EventLoopGroup = Client.eventLoopGroup) async throws(HAPError) -> AccessoryPairing {
        let endpoint = try await CoAPEndpoint.open(host: host, port: port, group: group) { _ in nil }
        defer { endpoint.close() }
        return try await CoAPPairingChannel(endpoint: endpoint).performPairSetup(code: code, controller: controller, timeout: .seconds(30))
    }

    /// Asks an accessory that is not paired yet to identify itself (`POST /0`).
    public static func identify(host: String, port: Int, timeout: Duration = .seconds(4),
                                group: any EventLoopGroup = Client.eventLoopGroup) async throws(HAPError) {
        let endpoint = try await CoAPEndpoint.open(host: host, port: port, group: group) { _ in nil }
        defer { endpoint.close() }
        let response = try await endpoint.request(.post, path: "0", payload: [], timeout: timeout)
        guard response.code.isSuccess else { throw HAPError(.status, "identify: [\(host)]:\(port) answered CoAP \(response.code)") }
    }

    /// The pairings characteristic (service 0x55, characteristic 0x50), where pairings are
    /// managed over CoAP: the request is written as its value. Found in the GATT database alone:
    /// removing a pairing never depends on reading any value.
    private var pairingsAddress: CharacteristicAddress? {
        get async throws(HAPError) {
            if formats.isEmpty { _ = try await gattDatabase() }
            return address(ofType: "00000050-0000-1000-8000-0026BB765291")
        }
    }

    /// Writes the request to the pairings characteristic; for list and add, reads the
    /// characteristic for the accessory's M2, as iOS and aiohomekit do. A removal is done when the
    /// write succeeded: iOS never reads its M2 (and a removal of our own pairing ends the session).
    public func sendPairings(_ request: PairingsRequest) async throws(HAPError) -> TLV8 {
        guard let address = try await pairingsAddress else {
            throw HAPError(.malformed, "[\(host)]:\(port) has no pairings characteristic (service 55, characteristic 50)")
        }
        let iid = UInt16(truncatingIfNeeded: address.iid)
        let written = try await send([HAPPDU.Request(opcode: .write, transaction: 0, iid: iid, body: HAPPDU.writeBody(request.message.encoded()))],
                                     timeout: Client.defaultTimeout)
        _ = try Self.successfulBody(written[0], what: "pairings \(request.method)")
        guard request.method != .remove else { return TLV8() }
        let read = try await send([HAPPDU.Request(opcode: .read, transaction: 0, iid: iid, body: [])], timeout: Client.defaultTimeout)
        guard let value = try HAPPDU.value(inBody: try Self.successfulBody(read[0], what: "pairings \(request.method)")) else {
            throw HAPError(.malformed, "pairings \(request.method): [\(host)]:\(port) has no M2 in its pairings characteristic")
        }
        let reply: TLV8
        do {
            reply = try TLV8(decoding: value)
        } catch {
            throw HAPError(.malformed, "pairings \(request.method): the accessory's M2 is not TLV8: \(error)")
        }
        return try request.answer(reply)
    }
}

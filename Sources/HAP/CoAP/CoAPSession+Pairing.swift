import NIOCore

extension CoAPSession {
    /// Pairs with a HAP-over-CoAP accessory using its setup code: pair-setup M1-M6 on
    /// `POST /1`, plaintext, on a socket of its own.
    /// - Returns: the accessory's pairing id and long-term public key, to store.
    /// - Throws: ``HAPError`` as ``Client/pairSetup(code:controller:)`` does.
    public static func pairSetup(host: String, port: Int, code: String, controller: ControllerIdentity,
                                 group: any EventLoopGroup = Client.eventLoopGroup) async throws(HAPError) -> AccessoryPairing {
        var machine = try PairSetup(setupCode: code, controller: controller)
        let endpoint = try await CoAPEndpoint.open(host: host, port: port, group: group) { _ in nil }
        defer { endpoint.close() }
        var message = machine.start()
        while true {
            let reply = try await tlvRequest(endpoint, path: "1", message, timeout: .seconds(30), operation: "pair-setup")
            switch try machine.receive(reply) {
            case .send(let next): message = next
            case .paired(let pairing): return pairing
            }
        }
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

    /// Removes a controller's pairing (remove pairing M1 written to the pairings
    /// characteristic); removing our own unpairs us. Admins only.
    public func removePairing(_ pairingID: String) async throws(HAPError) {
        guard let address = try await pairingsAddress else {
            throw HAPError(.malformed, "[\(host)]:\(port) has no pairings characteristic (service 55, characteristic 50)")
        }
        let request = TLV8([(.state, [1]), (.method, [4]), (.identifier, Array(pairingID.utf8))]).encoded()
        let responses = try await send([HAPPDU.Request(opcode: .write, transaction: 0, iid: UInt16(truncatingIfNeeded: address.iid),
                                                       body: HAPPDU.writeBody(request))], timeout: Client.defaultTimeout)
        _ = try Self.successfulBody(responses[0], what: "removing pairing \(pairingID)")
    }
}

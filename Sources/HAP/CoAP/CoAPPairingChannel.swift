import Wire
/// The pairing procedures over CoAP: plaintext `POST /1` (pair-setup) and `POST /2`
/// (pair-verify) on the accessory's endpoint, each answered by TLV8.
struct CoAPPairingChannel: PairingChannel {
    let endpoint: CoAPEndpoint

    func exchange(_ procedure: PairingProcedure, _ message: TLV8, timeout: Duration) async throws(HAPError) -> TLV8 {
        let path = procedure == .setup ? "1" : "2"
        guard timeout > .zero else { throw HAPError(.timeout, "\(procedure.rawValue) with [\(endpoint.host)]:\(endpoint.port) took too long") }
        let response = try await endpoint.request(.post, path: path, payload: message.encoded(), timeout: timeout)
        guard response.code.isSuccess else {
            throw HAPError(.status, "\(procedure.rawValue): [\(endpoint.host)]:\(endpoint.port) answered CoAP \(response.code) to POST /\(path)")
        }
        do {
            return try TLV8(decoding: response.payload)
        } catch {
            throw HAPError(.malformed, "\(procedure.rawValue): the accessory's TLV8 does not parse: \(error)")
        }
    }
}

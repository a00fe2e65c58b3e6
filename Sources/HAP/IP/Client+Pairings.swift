import Wire
/// Pairings over IP: `POST /pairings` on the verified connection.
extension Client: PairingsManaging {
    public func sendPairings(_ request: PairingsRequest) async throws(HAPError) -> TLV8 {
        try requireSession("managing pairings")
        return try request.answer(try await tlvRequest("/pairings", request.message))
    }
}

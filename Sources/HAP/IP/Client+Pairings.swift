extension Client {
    /// The controllers the accessory is paired with (`POST /pairings`, list). Admins only.
    public func pairings() async throws(HAPError) -> [PairingEntry] {
        PairingsRequest.entries(in: try await send(.list))
    }

    /// Adds a controller (`POST /pairings`, add). Admins only.
    public func addPairing(_ entry: PairingEntry) async throws(HAPError) {
        _ = try await send(.add(entry))
    }

    /// Removes a controller (`POST /pairings`, remove); removing our own pairing unpairs us
    /// (the accessory then closes its sessions with us). Admins only.
    public func removePairing(_ pairingID: String) async throws(HAPError) {
        _ = try await send(.remove(pairingID))
    }

    private func send(_ request: PairingsRequest) async throws(HAPError) -> TLV8 {
        try requireSession("managing pairings")
        return try request.answer(try await tlvRequest("/pairings", request.message))
    }
}

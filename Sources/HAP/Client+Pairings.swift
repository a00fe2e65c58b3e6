/// A controller an accessory knows: its pairing id, long-term public key and whether it is an
/// admin (admins may add and remove pairings).
public struct PairingEntry: Sendable, Hashable {
    public let pairingID: String
    public let publicKey: [UInt8]
    public let isAdmin: Bool

    public init(pairingID: String, publicKey: [UInt8], isAdmin: Bool) {
        self.pairingID = pairingID
        self.publicKey = publicKey
        self.isAdmin = isAdmin
    }
}

extension Client {
    private enum PairingMethod: UInt8 {
        case add = 3
        case remove = 4
        case list = 5
    }

    /// The controllers the accessory is paired with (`POST /pairings`, list). Admins only.
    public func pairings() async throws(HAPError) -> [PairingEntry] {
        let reply = try await pairingsRequest(.list, [])
        var entries: [PairingEntry] = []
        for item in reply.split(separatedBy: .separator) {
            guard let identifier = item[.identifier], let key = item[.publicKey] else { continue }
            entries.append(PairingEntry(pairingID: String(decoding: identifier, as: UTF8.self), publicKey: key,
                                        isAdmin: (item.byte(.permissions) ?? 0) & 1 == 1))
        }
        return entries
    }

    /// Adds a controller (`POST /pairings`, add). Admins only.
    public func addPairing(_ entry: PairingEntry) async throws(HAPError) {
        _ = try await pairingsRequest(.add, [(.identifier, Array(entry.pairingID.utf8)), (.publicKey, entry.publicKey),
                                              (.permissions, [entry.isAdmin ? 1 : 0])])
    }

    /// Removes a controller (`POST /pairings`, remove); removing our own pairing unpairs us
    /// (the accessory then closes its sessions with us). Admins only.
    public func removePairing(_ pairingID: String) async throws(HAPError) {
        _ = try await pairingsRequest(.remove, [(.identifier, Array(pairingID.utf8))])
    }

    private func pairingsRequest(_ method: PairingMethod, _ items: [(TLVType, [UInt8])]) async throws(HAPError) -> TLV8 {
        try requireSession("managing pairings")
        let reply = try await tlvRequest("/pairings", TLV8([(.state, [1]), (.method, [method.rawValue])] + items))
        return try PairSetup.expect(reply, state: 2, step: "M2", operation: "pairings \(method)")
    }
}

import Wire
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

/// A request to an accessory's pairings (HAP's add, remove and list pairing procedures) and its
/// M2 answer: the same TLV8 over both transports, sent as `POST /pairings` over IP and written to
/// the pairings characteristic (service 0x55, characteristic 0x50) over CoAP.
public struct PairingsRequest: Sendable {
    public enum Method: UInt8, Sendable {
        case add = 3
        case remove = 4
        case list = 5
    }

    public let method: Method
    let items: [(TLVType, [UInt8])]

    static let list = PairingsRequest(method: .list, items: [])

    static func add(_ entry: PairingEntry) -> PairingsRequest {
        PairingsRequest(method: .add, items: [(.identifier, Array(entry.pairingID.utf8)), (.publicKey, entry.publicKey),
                                              (.permissions, [entry.isAdmin ? 1 : 0])])
    }

    static func remove(_ pairingID: String) -> PairingsRequest {
        PairingsRequest(method: .remove, items: [(.identifier, Array(pairingID.utf8))])
    }

    /// M1.
    var message: TLV8 {
        TLV8([(.state, [1]), (.method, [method.rawValue])] + items)
    }

    /// The accessory's M2, checked (a pairing error such as "not an admin" is thrown).
    func answer(_ reply: TLV8) throws(HAPError) -> TLV8 {
        try PairSetup.expect(reply, state: 2, step: "M2", operation: "pairings \(method)")
    }

    /// The controllers a list answer names.
    static func entries(in reply: TLV8) -> [PairingEntry] {
        reply.split(separatedBy: .separator).compactMap { item in
            guard let identifier = item[.identifier], let key = item[.publicKey] else { return nil }
            return PairingEntry(pairingID: String(decoding: identifier, as: UTF8.self), publicKey: key,
                                isAdmin: (item.byte(.permissions) ?? 0) & 1 == 1)
        }
    }
}

/// A verified session that manages the accessory's pairings: HAP over IP's ``Client`` and HAP
/// over CoAP's ``CoAPSession``, each sending the same requests in its own way.
public protocol PairingsManaging: Sendable {
    /// Sends one pairings request and returns the accessory's checked M2 (empty for a removal
    /// over CoAP, whose M2 iOS never reads).
    func sendPairings(_ request: PairingsRequest) async throws(HAPError) -> TLV8
}

extension PairingsManaging {
    /// The controllers the accessory is paired with (list pairings). Admins only.
    public func pairings() async throws(HAPError) -> [PairingEntry] {
        PairingsRequest.entries(in: try await sendPairings(.list))
    }

    /// Adds a controller (add pairing). Admins only.
    public func addPairing(_ entry: PairingEntry) async throws(HAPError) {
        _ = try await sendPairings(.add(entry))
    }

    /// Removes a controller (remove pairing); removing our own pairing unpairs us (the accessory
    /// then ends its sessions with us). Admins only.
    public func removePairing(_ pairingID: String) async throws(HAPError) {
        _ = try await sendPairings(.remove(pairingID))
    }
}

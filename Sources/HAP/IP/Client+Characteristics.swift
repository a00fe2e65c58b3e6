import Foundation
import Timing
import Wire

/// One characteristic write.
public struct CharacteristicWrite: Sendable, Hashable {
    public let address: CharacteristicAddress
    public let value: JSON
    /// Ask for the value the write produced (`r: true`, for write-response characteristics).
    public let wantsResponse: Bool

    public init(_ address: CharacteristicAddress, _ value: JSON, wantsResponse: Bool = false) {
        self.address = address
        self.value = value
        self.wantsResponse = wantsResponse
    }
}

/// A characteristic's outcome in a read or write: the status, and the value when there is one.
public struct CharacteristicOutcome: Sendable, Hashable {
    public let status: HAPStatus
    public let value: JSON?
}

extension Client {
    /// The accessory database (`GET /accessories`).
    public func accessories(timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> [AccessoryDescription] {
        try await accessoryDatabase(timeout: timeout).accessories
    }

    /// The accessory database (`GET /accessories`) with what was odd in it
    /// (``AccessoryDescription/parseReporting(_:)``).
    public func accessoryDatabase(timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> AccessoryDescription.Parsed {
        try requireSession("reading the accessories")
        let response = try await request(HTTPRequest(method: "GET", path: "/accessories"), timeout: timeout)
        guard response.status == 200 else {
            throw HAPError(.status, "GET /accessories: the accessory answered HTTP \(response.status) \(response.reason)")
        }
        return try AccessoryDescription.parseReporting(response.body)
    }

    /// Reads characteristics (`GET /characteristics?id=...`): each one's status and value.
    public func read(_ addresses: [CharacteristicAddress], timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        try requireSession("reading characteristics")
        guard !addresses.isEmpty else { return [:] }
        let ids = addresses.map(\.description).joined(separator: ",")
        let response = try await request(HTTPRequest(method: "GET", path: "/characteristics?id=\(ids)"), timeout: timeout)
        guard response.status == 200 || response.status == 207 else {
            throw HAPError(.status, "GET /characteristics: the accessory answered HTTP \(response.status) \(response.reason)")
        }
        return try Self.outcomes(in: JSON.hapBody(response.body, "GET /characteristics"), for: addresses, request: "GET /characteristics")
    }

    /// Writes characteristics (`PUT /characteristics`) and returns each one's outcome once the
    /// accessory answered. `timed`: a timed write (`PUT /prepare` with a `pid` and this time to
    /// live first), which characteristics with the `tw` permission require. Each request within
    /// `timeout`.
    public func write(_ writes: [CharacteristicWrite], timed ttl: Duration? = nil, timeout: Duration = Client.defaultTimeout)
        async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        try requireSession("writing characteristics")
        guard !writes.isEmpty else { return [:] }
        var body: [String: JSON] = ["characteristics": .array(writes.map { write in
            var entry: [String: JSON] = ["aid": .int(Int64(write.address.aid)), "iid": .int(Int64(write.address.iid)), "value": write.value]
            if write.wantsResponse { entry["r"] = .bool(true) }
            return .object(entry)
        })]
        if let ttl { body["pid"] = .int(try await prepare(ttl: ttl, timeout: timeout)) }
        return try await characteristicsPut(.object(body), for: writes.map(\.address), timeout: timeout)
    }

    /// Turns events on (or off) for characteristics (`ev` in `PUT /characteristics`).
    public func subscribe(_ addresses: [CharacteristicAddress], enabled: Bool = true, timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        try requireSession("subscribing to events")
        guard !addresses.isEmpty else { return [:] }
        let entries: [JSON] = addresses.map { .object(["aid": .int(Int64($0.aid)), "iid": .int(Int64($0.iid)), "ev": .bool(enabled)]) }
        return try await characteristicsPut(.object(["characteristics": .array(entries)]), for: addresses, timeout: timeout)
    }

    /// `PUT /prepare`: announces a timed write; returns its `pid`.
    private func prepare(ttl: Duration, timeout: Duration) async throws(HAPError) -> Int64 {
        let pid = Int64.random(in: 1...Int64(UInt32.max))
        let milliseconds = ttl.wholeMilliseconds
        let (_, body) = try await jsonRequest("PUT", "/prepare", .object(["ttl": .int(milliseconds), "pid": .int(pid)]), timeout: timeout)
        if let status = body?["status"]?.int, status != 0 {
            let code = HAPStatus(rawValue: Int(status))
            throw HAPError(.status, "PUT /prepare: the accessory refused the timed write: \(code.map { "\($0)" } ?? "status \(status)")", status: code)
        }
        return pid
    }

    private func characteristicsPut(_ body: JSON, for addresses: [CharacteristicAddress], timeout: Duration) async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        let (status, reply) = try await jsonRequest("PUT", "/characteristics", body, timeout: timeout)
        guard status != 204, let reply else {
            return Dictionary(addresses.map { ($0, CharacteristicOutcome(status: .success, value: nil)) }, uniquingKeysWith: { first, _ in first })
        }
        return try Self.outcomes(in: reply, for: addresses, request: "PUT /characteristics")
    }

    /// Each address's outcome in a `characteristics` body; an address the body leaves out
    /// failed with -70402 (communication failure).
    static func outcomes(in body: JSON, for addresses: [CharacteristicAddress], request: String) throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        guard let entries = body["characteristics"]?.array else {
            throw HAPError(.malformed, "\(request): no \"characteristics\" array in the answer")
        }
        var outcomes: [CharacteristicAddress: CharacteristicOutcome] = [:]
        for entry in entries {
            guard let aid = entry["aid"]?.int, let iid = entry["iid"]?.int else { continue }
            let raw = entry["status"]?.int ?? 0
            let status = HAPStatus(rawValue: Int(raw)) ?? .communicationFailure
            outcomes[CharacteristicAddress(aid: Int(aid), iid: Int(iid))] = CharacteristicOutcome(status: status, value: entry["value"])
        }
        for address in addresses where outcomes[address] == nil {
            outcomes[address] = CharacteristicOutcome(status: .communicationFailure, value: nil)
        }
        return outcomes
    }
}

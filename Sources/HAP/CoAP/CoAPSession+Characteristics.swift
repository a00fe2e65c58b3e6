import Wire

extension CoAPSession {
    /// The most PDUs sent in one request (their answers stay a few blocks long).
    static let pdusPerRequest = 32

    /// The accessory database (opcode 0x09) with every readable characteristic's value (HAP
    /// over CoAP's database carries none; they are read right after it, as HAP over IP's
    /// `GET /accessories` would have carried them).
    ///
    /// A characteristic whose value is not known yet is there without one; a value the device
    /// sends in the wrong width is left out with a warning: neither fails the database.
    public func accessoryDatabase(timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> AccessoryDescription.Parsed {
        let deadline = ContinuousClock.now + timeout
        let database = try await gattDatabase(timeout: timeout)
        let readable = database.accessories.flatMap { accessory in
            accessory.services.flatMap(\.characteristics).filter { $0.perms?.contains("pr") ?? false }
                .map { CharacteristicAddress(aid: accessory.aid, iid: $0.iid) }
        }
        let outcomes = try await read(readable, timeout: max(.milliseconds(1), deadline - .now))
        let accessories = database.accessories.map { $0.with(values: outcomes.compactMapValues(\.value)) }
        let unreadable = outcomes.filter { $0.value.status != .success }.keys.sorted { ($0.aid, $0.iid) < ($1.aid, $1.iid) }
            .map { "characteristic \($0.aid).\($0.iid) could not be read (\(outcomes[$0]?.status.description ?? "")); it has no value until it changes" }
        return AccessoryDescription.Parsed(accessories: accessories, warnings: database.warnings + unreadable)
    }

    /// The GATT database alone (opcode 0x09), no values: enough to find a characteristic by its
    /// type (the pairings characteristic when a pairing is removed).
    func gattDatabase(timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> GATTDatabase {
        let responses = try await send([HAPPDU.Request(opcode: .databaseRead, transaction: 0, iid: 0, body: [])], timeout: timeout)
        let body = try Self.successfulBody(responses[0], what: "reading the accessory database")
        let database = try GATTDatabase(decoding: body)
        remember(database)
        return database
    }

    /// Reads characteristics (opcode 0x03): each one's status and value. A value the device
    /// sends in a width its format does not have is answered `communicationFailure` for that
    /// characteristic alone.
    public func read(_ addresses: [CharacteristicAddress], timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        try await perform(addresses.map { ($0, HAPPDU.Opcode.read, []) }, timeout: timeout) { address, response, format throws(HAPError) in
            guard let bytes = try HAPPDU.value(inBody: response.body) else { return CharacteristicOutcome(status: .success, value: nil) }
            do throws(HAPError) {
                return CharacteristicOutcome(status: .success, value: try format.json(from: bytes))
            } catch {
                return CharacteristicOutcome(status: .communicationFailure, value: nil)
            }
        }
    }

    /// Writes (opcode 0x02), or timed writes (0x04 with the time to live, then 0x05 to carry
    /// them out) for `tw` characteristics. A value the characteristic's format cannot carry is
    /// refused here (`invalidValue`) and not sent. Each request within `timeout`.
    public func write(_ writes: [CharacteristicWrite], timed ttl: Duration? = nil, timeout: Duration = Client.defaultTimeout)
        async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        let formats = formats
        var outcomes: [CharacteristicAddress: CharacteristicOutcome] = [:]
        var requests: [(CharacteristicAddress, HAPPDU.Opcode, [UInt8])] = []
        for write in writes {
            guard let bytes = formats[write.address]?.bytes(from: write.value) else {
                outcomes[write.address] = CharacteristicOutcome(status: formats[write.address] == nil ? .noSuchResource : .invalidValue, value: nil)
                continue
            }
            var body = HAPPDU.writeBody(bytes, ttl: ttl)
            if write.wantsResponse { body += [HAPPDU.BodyType.returnResponse.rawValue, 1, 1] }
            requests.append((write.address, ttl == nil ? .write : .timedWrite, body))
        }
        let written = try await perform(requests, timeout: timeout) { _, response, format throws(HAPError) in
            let value = try HAPPDU.value(inBody: response.body).map { bytes throws(HAPError) in try format.json(from: bytes) }
            return CharacteristicOutcome(status: .success, value: value ?? nil)
        }
        outcomes.merge(written) { first, _ in first }
        guard ttl != nil else { return outcomes }
        let prepared = requests.map(\.0).filter { written[$0]?.status == .success }
        let executed = try await perform(prepared.map { ($0, .executeWrite, []) }, timeout: timeout) { _, _, _ throws(HAPError) in
            CharacteristicOutcome(status: .success, value: nil)
        }
        outcomes.merge(executed) { _, execution in execution }
        return outcomes
    }

    /// Turns events on (opcode 0x0B) or off (0x0C); each characteristic's outcome.
    public func subscribe(_ addresses: [CharacteristicAddress], enabled: Bool, timeout: Duration = Client.defaultTimeout) async throws(HAPError)
        -> [CharacteristicAddress: CharacteristicOutcome] {
        try await perform(addresses.map { ($0, enabled ? .subscribe : .unsubscribe, []) }, timeout: timeout) { _, _, _ throws(HAPError) in
            CharacteristicOutcome(status: .success, value: nil)
        }
    }

    /// Cameras are HAP-over-IP accessories; a Thread accessory has no snapshot to give.
    public func snapshot(aid: Int, width: Int, height: Int, timeout: Duration) async throws(HAPError) -> [UInt8] {
        throw HAPError(.state, "[\(host)]:\(port) is a HAP-over-CoAP (Thread) accessory; snapshots come from cameras, which use HAP over IP")
    }

    /// Sends one PDU per item (in requests of at most ``pdusPerRequest``); a PDU's success is
    /// turned into an outcome by `success`, another status into that status. An address whose
    /// format is unknown (not in the database) is answered `noSuchResource` without asking.
    private func perform(_ items: [(CharacteristicAddress, HAPPDU.Opcode, [UInt8])], timeout: Duration,
                         success: (CharacteristicAddress, HAPPDU.Response, GATTFormat) throws(HAPError) -> CharacteristicOutcome)
        async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome] {
        let formats = formats
        var outcomes: [CharacteristicAddress: CharacteristicOutcome] = [:]
        let known = items.filter { item in
            if formats[item.0] == nil { outcomes[item.0] = CharacteristicOutcome(status: .noSuchResource, value: nil) }
            return formats[item.0] != nil
        }
        let deadline = ContinuousClock.now + timeout
        var start = 0
        while start < known.count {
            let batch = known[start..<min(start + Self.pdusPerRequest, known.count)]
            let requests = batch.map { HAPPDU.Request(opcode: $0.1, transaction: 0, iid: UInt16(truncatingIfNeeded: $0.0.iid), body: $0.2) }
            let responses = try await send(requests, timeout: max(.milliseconds(1), deadline - .now))
            for (item, response) in zip(batch, responses) {
                guard response.status == HAPPDU.Status.success.rawValue else {
                    outcomes[item.0] = CharacteristicOutcome(status: HAPPDU.Status(rawValue: response.status)?.hapStatus ?? .communicationFailure, value: nil)
                    continue
                }
                outcomes[item.0] = try success(item.0, response, formats[item.0]!)
            }
            start += Self.pdusPerRequest
        }
        return outcomes
    }

    static func successfulBody(_ response: HAPPDU.Response, what: String) throws(HAPError) -> [UInt8] {
        guard response.status == HAPPDU.Status.success.rawValue else {
            let status = HAPPDU.Status(rawValue: response.status)
            throw HAPError(.status, "\(what): the accessory answered PDU status \(response.status)\(status.map { " (\($0))" } ?? "")", status: status?.hapStatus)
        }
        return response.body
    }
}

extension AccessoryDescription {
    /// The same accessory with the values read for its characteristics.
    func with(values: [CharacteristicAddress: JSON]) -> AccessoryDescription {
        AccessoryDescription(aid: aid, services: services.map { service in
            ServiceDescription(iid: service.iid, type: service.type, isPrimary: service.isPrimary, isHidden: service.isHidden, linked: service.linked,
                               characteristics: service.characteristics.map { $0.with(value: values[CharacteristicAddress(aid: aid, iid: $0.iid)]) })
        })
    }
}

extension CharacteristicDescription {
    func with(value: JSON?) -> CharacteristicDescription {
        CharacteristicDescription(iid: iid, type: type, format: format, perms: perms, value: value ?? self.value, unit: unit, minValue: minValue,
                                  maxValue: maxValue, minStep: minStep, maxLen: maxLen, validValues: validValues,
                                  validValuesRange: validValuesRange, description: description)
    }
}

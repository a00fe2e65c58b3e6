import HomeModel
import Wire

/// The value a set carries, read and checked for its characteristic before anything is
/// written: `{"value": ..., "id": ...}`, `{"label": ...}` (both, when they agree), or a bare
/// payload (a number, or a label of the characteristic's valid values). Reading only: what the
/// command then does is the engine's (``Gateway``, `Gateway+Commands.swift`).
enum CommandValue {
    /// The value a set carries (`{"value": ..., "id": ...}`, `{"label": ...}`, or a bare payload:
    /// a number, or a label of the characteristic's valid values), checked for writing.
    static func read(_ body: Inbound.Body, for characteristic: Characteristic) throws(StatusError) -> Value {
        guard characteristic.isWritable else { throw StatusError(.readOnly, "\(characteristic.displayName) is read-only") }
        let labels = ValueLabels.of(characteristic)
        let value: Value
        switch body {
        case .object(let members):
            value = try valueOrLabel(members, characteristic, labels)
        case .text(let text):
            var trimmed = text.trimmedOfWhitespace // (Foundation's trimming bridges to NSString: 3% of a set's CPU)
            if trimmed.hasPrefix("\""), case .string(let unquoted)? = try? JSON.parse(Array(trimmed.utf8)) { trimmed = unquoted }
            if let labels, let named = labels.value(named: trimmed) {
                value = try labelled(named, characteristic)
            } else {
                value = try explained(characteristic, labels, got: trimmed) { () throws(StatusError) in
                    try Value.parse(payload: text, format: characteristic.format, name: characteristic.displayName)
                }
            }
        }
        try characteristic.validate(value)
        return value
    }

    /// `{"value": ...}`, `{"label": ...}`, or both when they agree.
    private static func valueOrLabel(_ members: [String: JSON], _ characteristic: Characteristic, _ labels: ValueLabels?) throws(StatusError) -> Value {
        var byLabel: Value?
        if let label = members["label"] {
            guard case .string(let text) = label else { throw StatusError(.invalidValue, "\"label\" must be text") }
            guard let labels else { throw StatusError(.invalidValue, "\(characteristic.displayName) has no labels; send its value") }
            guard let named = labels.value(named: text) else {
                throw StatusError(.invalidValue, "\(characteristic.displayName) has no label \"\(text)\"; it takes \(labels.listing)")
            }
            byLabel = try labelled(named, characteristic)
        }
        guard let raw = members["value"] else {
            if let byLabel { return byLabel }
            throw StatusError(.invalidValue, "the JSON object has no \"value\"; send {\"value\": ..., \"id\": ...} or a bare value")
        }
        let value: Value
        if case .string(let text) = raw, let labels, let named = labels.value(named: text) {
            value = try labelled(named, characteristic)
        } else {
            value = try explained(characteristic, labels, got: raw.text) { () throws(StatusError) in
                try Value.parse(json: raw, format: characteristic.format, name: characteristic.displayName)
            }
        }
        if let byLabel, byLabel.number != value.number {
            throw StatusError(.invalidValue, "\"value\" \(value.jsonText) and \"label\" \"\(labels?.label(of: byLabel) ?? "")\" disagree; send one of them")
        }
        return value
    }

    /// The value a label names, in the characteristic's format.
    private static func labelled(_ number: Double, _ characteristic: Characteristic) throws(StatusError) -> Value {
        try Value.parse(json: characteristic.format == .float ? .double(number) : .int(Int64(number)), format: characteristic.format, name: characteristic.displayName)
    }

    /// A value that does not parse: for a characteristic with labels, the message lists them.
    private static func explained(_ characteristic: Characteristic, _ labels: ValueLabels?, got text: String,
                                  _ parse: () throws(StatusError) -> Value) throws(StatusError) -> Value {
        do {
            return try parse()
        } catch {
            guard let labels else { throw error }
            throw StatusError(.invalidValue, "\(characteristic.displayName) takes \(labels.listing), by number or label; got \(text)")
        }
    }

    /// An on/off set (Adaptive Lighting's): `on`/`off`/`true`/`false`, bare, quoted or as
    /// `{"value": ...}`; nil for anything else.
    static func onOff(_ body: Inbound.Body) -> Bool? {
        let value: JSON?
        switch body {
        case .object(let members): value = members["value"]
        case .text(let text):
            let trimmed = text.trimmedOfWhitespace
            value = (try? JSON.parse(Array(trimmed.utf8))) ?? .string(trimmed)
        }
        switch value {
        case .bool(let flag)?: return flag
        case .string(let text)?: return ["on": true, "off": false, "true": true, "false": false][text.lowercased()]
        default: return nil
        }
    }
}

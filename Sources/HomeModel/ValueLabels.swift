/// Words for enumerations: the catalog's labels of a characteristic's valid values
/// (`lock-target-state`: 0 `unsecured`, 1 `secured`), for sets that name a value by its label,
/// for `<characteristic>/label` and for acknowledgements. One table: the catalog's `validValues`
/// (standard and vendor types), limited to the values the characteristic allows.
public struct ValueLabels: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public let value: Double
        public let label: String
    }

    /// In the catalog's order of values.
    public let entries: [Entry]

    /// The labels of `characteristic`'s values, or nil when its type has none.
    public static func of(_ characteristic: Characteristic) -> ValueLabels? {
        guard let named = table[characteristic.type] ?? table[characteristic.uuid] else { return nil }
        let allowed = characteristic.validValues.map(Set.init)
        let entries = named
            .filter { entry in
                if let allowed { return allowed.contains(entry.value) }
                return entry.value >= (characteristic.minValue ?? -.infinity) && entry.value <= (characteristic.maxValue ?? .infinity)
            }
            .sorted { $0.value < $1.value }
            .map { Entry(value: $0.value, label: $0.name) }
        return entries.isEmpty ? nil : ValueLabels(entries: entries)
    }

    /// The catalog's labelled types, by standard name, by UUID and by upper-case UUID (so a
    /// characteristic without labels costs two dictionary look-ups and no allocation).
    private static let table: [String: [CharacteristicType.ValidValue]] = {
        var table: [String: [CharacteristicType.ValidValue]] = [:]
        for type in Catalog.standard.characteristics {
            guard let values = type.validValues, !values.isEmpty else { continue }
            table[type.name] = values
            table[type.uuid] = values
        }
        for type in Catalog.standard.vendorCharacteristicTypes {
            guard let values = type.validValues, !values.isEmpty else { continue }
            table[type.uuid] = values
            table[type.uuid.lowercased()] = values
        }
        return table
    }()

    /// The label of a value, if it has one.
    public func label(of value: Value) -> String? {
        guard let number = value.number else { return nil }
        return entries.first { $0.value == number }?.label
    }

    /// The value a label names: any case, `-`, `_` and spaces alike (`Secured`, `SECURED`,
    /// `co2 levels normal`); nil if none.
    public func value(named text: String) -> Double? {
        let key = Self.key(text)
        return entries.first { Self.key($0.label) == key }?.value
    }

    /// `0 (unsecured), 1 (secured)`.
    public var listing: String {
        entries.map { "\(Value.format($0.value)) (\($0.label))" }.joined(separator: ", ")
    }

    private static func key(_ text: String) -> String {
        String(text.lowercased().unicodeScalars.filter { $0 != "-" && $0 != "_" && $0 != " " }.map(Character.init))
    }
}

/// A description of an accessory by standard type names, built into an ``Accessory`` with the
/// catalog's formats, permissions and bounds and with deterministic instance ids.
///
/// Instance ids follow HAP's usual layout: the Accessory Information service is iid 1 and its
/// characteristics 2 to 7; then each service in order takes the next iid, its characteristics
/// the ones after it (required characteristics first, in the catalog's order, then the optional
/// ones asked for, in the catalog's order).
public struct AccessoryBlueprint: Sendable, Hashable {
    public var id: AccessoryID
    public var name: String
    public var manufacturer: String
    public var model: String
    public var serialNumber: String
    public var firmwareRevision: String
    public var category: Category
    public var roomID: RoomID?
    public var bridgeID: AccessoryID?
    public var services: [ServiceBlueprint]

    public init(id: AccessoryID, name: String, manufacturer: String = "HomeGate", model: String = "Simulated Accessory",
                serialNumber: String? = nil, firmwareRevision: String = "1.0.0", category: Category = .other,
                roomID: RoomID? = nil, bridgeID: AccessoryID? = nil, services: [ServiceBlueprint] = []) {
        self.id = id
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber ?? id.rawValue
        self.firmwareRevision = firmwareRevision
        self.category = category
        self.roomID = roomID
        self.bridgeID = bridgeID
        self.services = services
    }

    /// A service by its standard type name, with the optional characteristics to include and
    /// initial values (for required ones too). Unlisted values start at a neutral default.
    public struct ServiceBlueprint: Sendable, Hashable {
        public var type: String
        public var name: String?
        public var isPrimary: Bool
        public var isHidden: Bool
        /// Characteristic type name -> initial value (nil: the default).
        public var characteristics: [String: Value?]
        /// Characteristic type name -> narrower bounds than the catalog's, as devices may declare
        /// (a thermostat that takes 10...38 °C in 0.5 steps).
        public var bounds: [String: Bounds]

        public init(type: String, name: String? = nil, isPrimary: Bool = false, isHidden: Bool = false,
                    characteristics: [String: Value?] = [:], bounds: [String: Bounds] = [:]) {
            self.type = type
            self.name = name
            self.isPrimary = isPrimary
            self.isHidden = isHidden
            self.characteristics = characteristics
            self.bounds = bounds
        }
    }

    /// A device's own minimum, maximum and step for a characteristic; nil keeps the catalog's.
    public struct Bounds: Sendable, Hashable {
        public var minValue: Double?
        public var maxValue: Double?
        public var minStep: Double?

        public init(minValue: Double? = nil, maxValue: Double? = nil, minStep: Double? = nil) {
            self.minValue = minValue
            self.maxValue = maxValue
            self.minStep = minStep
        }
    }

    /// Builds the accessory.
    /// - Throws: ``BlueprintError`` for an unknown service type, a characteristic the service
    ///   type does not have, or an initial value that does not fit.
    public func build(catalog: Catalog = .standard) throws(BlueprintError) -> Accessory {
        var nextIID = 1
        func takeIID() -> Int {
            defer { nextIID += 1 }
            return nextIID
        }
        var services = [try informationService(catalog: catalog, takeIID: takeIID)]
        for (index, blueprint) in self.services.enumerated() {
            services.append(try service(blueprint, index: index, catalog: catalog, takeIID: takeIID))
        }
        return Accessory(id: id, name: name, manufacturer: manufacturer, model: model, serialNumber: serialNumber,
                         firmwareRevision: firmwareRevision, category: category, roomID: roomID, bridgeID: bridgeID, services: services)
    }

    private func informationService(catalog: Catalog, takeIID: () -> Int) throws(BlueprintError) -> Service {
        let values: [(String, Value?)] = [
            ("identify", nil), ("manufacturer", .string(manufacturer)), ("model", .string(model)), ("name", .string(name)),
            ("serial-number", .string(serialNumber)), ("firmware-revision", .string(firmwareRevision)),
        ]
        guard let type = catalog.service("accessory-information") else { throw BlueprintError("the catalog has no accessory-information service") }
        let iid = takeIID()
        var characteristics: [Characteristic] = []
        for (name, value) in values {
            guard let standard = catalog.characteristic(name) else { throw BlueprintError("the catalog has no \(name) characteristic") }
            characteristics.append(Characteristic(iid: takeIID(), standard: standard, value: value))
        }
        return Service(iid: iid, type: type.name, uuid: type.uuid, characteristics: characteristics)
    }

    private func service(_ blueprint: ServiceBlueprint, index: Int, catalog: Catalog, takeIID: () -> Int) throws(BlueprintError) -> Service {
        guard let type = catalog.service(blueprint.type) else {
            let suggestion = BlueprintError.closest(blueprint.type, in: catalog.services.map(\.name)).map { "; did you mean \"\($0)\"?" } ?? ""
            throw BlueprintError(service: index, type: nil, "unknown service type \"\(blueprint.type)\"\(suggestion)")
        }
        let allowed = type.required + type.optional
        for name in Set(blueprint.characteristics.keys).union(blueprint.bounds.keys).sorted() where !allowed.contains(name) {
            throw BlueprintError(service: index, type: type.name, characteristic: name, "\"\(name)\" is not a characteristic of \(type.name) (required: \(type.required.joined(separator: ", ")); optional: \(type.optional.joined(separator: ", ")))")
        }
        let wanted = type.required + type.optional.filter { blueprint.characteristics.keys.contains($0) || blueprint.bounds.keys.contains($0) }
        let iid = takeIID()
        var characteristics: [Characteristic] = []
        for name in wanted {
            guard let standard = catalog.characteristic(name) else { throw BlueprintError("the catalog has no \(name) characteristic") }
            var characteristic = Characteristic(iid: takeIID(), standard: standard)
            if let bounds = blueprint.bounds[name] {
                try apply(bounds, to: &characteristic, service: index, type: type.name)
            }
            let given = blueprint.characteristics[name] ?? nil
            if let given {
                do {
                    try characteristic.validate(given)
                } catch {
                    throw BlueprintError(service: index, type: type.name, characteristic: name, error.message)
                }
            }
            characteristic.value = characteristic.isMomentary ? nil : (given ?? Self.defaultValue(for: characteristic, serviceName: blueprint.name ?? self.name))
            characteristics.append(characteristic)
        }
        return Service(iid: iid, type: type.name, uuid: type.uuid, name: blueprint.name, isPrimary: blueprint.isPrimary,
                       isHidden: blueprint.isHidden, characteristics: characteristics)
    }

    /// Narrows a characteristic's bounds; they must stay within the format and the catalog's bounds.
    private func apply(_ bounds: Bounds, to characteristic: inout Characteristic, service index: Int, type: String) throws(BlueprintError) {
        let name = characteristic.displayName
        func refuse(_ problem: String) -> BlueprintError {
            BlueprintError(service: index, type: type, characteristic: characteristic.type, problem)
        }
        guard characteristic.format.isNumeric else { throw refuse("\(name) is not a number; it has no bounds") }
        let lower = bounds.minValue ?? characteristic.minValue
        let upper = bounds.maxValue ?? characteristic.maxValue
        if let lower, let catalogLower = characteristic.minValue, lower < catalogLower {
            throw refuse("\(name) cannot go below \(Value.format(catalogLower)), got min \(Value.format(lower))")
        }
        if let upper, let catalogUpper = characteristic.maxValue, upper > catalogUpper {
            throw refuse("\(name) cannot go above \(Value.format(catalogUpper)), got max \(Value.format(upper))")
        }
        if let lower, let upper, lower > upper {
            throw refuse("\(name) min \(Value.format(lower)) is above max \(Value.format(upper))")
        }
        if let step = bounds.minStep {
            if let problem = Self.stepProblem(step, of: characteristic) { throw refuse(problem) }
        }
        characteristic.minValue = lower
        characteristic.maxValue = upper
        characteristic.minStep = bounds.minStep ?? characteristic.minStep
    }

    /// What is wrong with `step` as the device's own step for `characteristic`, if anything. A
    /// device may only step coarser than the catalog: a positive step, a whole number for the
    /// integer formats, and a whole multiple of the catalog's step when it has one (0.2 or 0.5
    /// where the catalog says 0.1; not 0.05 nor 0.15).
    static func stepProblem(_ step: Double, of characteristic: Characteristic) -> String? {
        let name = characteristic.displayName
        guard step > 0 else { return "\(name) step must be positive, got \(Value.format(step))" }
        if characteristic.format != .float, step != step.rounded() {
            return "\(name) takes whole numbers; the step must be one, got \(Value.format(step))"
        }
        if let catalogStep = characteristic.minStep, catalogStep > 0, !isWholeMultiple(step, of: catalogStep) {
            return "\(name) step must be a multiple of the catalog's step \(Value.format(catalogStep)), got \(Value.format(step))"
        }
        return nil
    }

    /// Whether `value` is `unit` times a whole number of at least 1, allowing for binary fractions
    /// (0.3 is 3 times 0.1).
    static func isWholeMultiple(_ value: Double, of unit: Double) -> Bool {
        let ratio = value / unit
        return ratio.rounded() >= 1 && abs(ratio - ratio.rounded()) <= 1e-9 * max(1, ratio)
    }

    /// A neutral starting value: false, 0 (or the nearest bound, or the first valid value), "" (the service's
    /// name for `name`), no data.
    static func defaultValue(for characteristic: Characteristic, serviceName: String) -> Value? {
        if characteristic.type == "name" { return .string(serviceName) }
        switch characteristic.format {
        case .bool:
            return .bool(false)
        case .int, .uint8, .uint16, .uint32, .uint64, .float:
            let lower = max(characteristic.minValue ?? 0, characteristic.format.integerRange?.lowerBound ?? -.infinity)
            let upper = characteristic.maxValue ?? .infinity
            let inBounds = characteristic.validValues?.first { $0 >= lower && $0 <= upper }
            let number = inBounds ?? characteristic.validValues?.first ?? min(max(0, lower), upper)
            switch characteristic.format {
            case .float: return .float(number)
            case .int: return .int(Int64(number))
            default: return .uint(UInt64(max(0, number)))
            }
        case .string:
            return .string("")
        case .data, .tlv8:
            return .data([])
        }
    }
}

/// Why a blueprint cannot be built; where known, which service (by position) and characteristic.
public struct BlueprintError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, with the service's position and type in front when known.
    public let message: String
    /// What is wrong, without the location.
    public let problem: String
    /// The position of the service in the blueprint.
    public let serviceIndex: Int?
    /// The characteristic type name concerned.
    public let characteristic: String?

    public init(_ message: String) {
        self.message = message
        self.problem = message
        self.serviceIndex = nil
        self.characteristic = nil
    }

    init(service index: Int, type: String?, characteristic: String? = nil, _ problem: String) {
        self.message = "services[\(index)]\(type.map { " (\($0))" } ?? ""): \(problem)"
        self.problem = problem
        self.serviceIndex = index
        self.characteristic = characteristic
    }

    public var description: String { message }

    /// The candidate nearest to a misspelt name, if any is close.
    static func closest(_ name: String, in candidates: [String]) -> String? {
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(Array(name), Array(candidate))
            if distance <= max(2, name.count / 3), distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

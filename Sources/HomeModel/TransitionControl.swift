import Foundation
import Wire

/// HomeKit's Adaptive Lighting on the wire: what a controller writes to a bulb's Characteristic
/// Value Transition Control (`transition-control`, 0x143, TLV8, write with response), what the
/// bulb answers, and what its Supported Characteristic Value Transition Configuration (0x144)
/// says. The layout is the one HAP-NodeJS's Adaptive Lighting controller (the accessory side,
/// public source) reads and writes; the type numbers and widths below are its.
///
/// A transition is a curve of colour temperatures (mireds) over time, each with a brightness
/// adjustment factor: the bulb sets `temperature + factor * brightness` (brightness clamped to
/// the curve's range), interpolating linearly between entries, by itself, every update interval.
public enum TransitionControl {
    /// The control point's top-level types.
    enum ControlType: UInt8 {
        case readCurrentConfiguration = 0x01
        case updateConfiguration = 0x02
    }

    /// Inside an update: the one configuration.
    static let valueTransitionConfiguration: UInt8 = 0x01

    /// A configuration's fields.
    enum ConfigurationType: UInt8 {
        case characteristicIID = 0x01
        case parameters = 0x02
        /// Always 1 in an enabling write; a configuration with the characteristic's iid alone
        /// ends the transition.
        case enabled = 0x03
        case curve = 0x05
        /// Milliseconds between the bulb's own updates, 16 bits.
        case updateInterval = 0x06
        /// Milliseconds the bulb waits at least between notifications, 32 bits.
        case notifyIntervalThreshold = 0x08
    }

    enum ParameterType: UInt8 {
        /// 16 bytes.
        case transitionID = 0x01
        /// Milliseconds since 2001-01-01 00:00 UTC, 64 bits.
        case startTime = 0x02
    }

    enum CurveType: UInt8 {
        /// One per entry, entries parted by an empty item of type 0.
        case entry = 0x01
        case adjustmentCharacteristicIID = 0x02
        case adjustmentRange = 0x03
    }

    enum EntryType: UInt8 {
        /// Float32.
        case adjustmentFactor = 0x01
        /// Float32, mireds.
        case value = 0x02
        /// Milliseconds from the previous entry (the interpolation's time).
        case transitionOffset = 0x03
        /// Milliseconds the previous entry's value is held before the interpolation starts.
        case duration = 0x04
    }

    enum RangeType: UInt8 {
        /// 32 bits.
        case minimum = 0x01
        /// 32 bits.
        case maximum = 0x02
    }

    /// The answer's status fields.
    enum StatusType: UInt8 {
        case characteristicIID = 0x01
        case parameters = 0x02
        case timeSinceStart = 0x03
    }

    /// The start of the time the transition's start is counted from.
    static let epoch2001 = Date(timeIntervalSince1970: 978_307_200)

    /// One point of a curve.
    public struct Entry: Sendable, Equatable {
        /// The colour temperature, in mireds.
        public var temperature: Float
        /// Mireds per percent of brightness, negative: a brighter light is a cooler one.
        public var adjustmentFactor: Float
        /// The time from the previous entry to this one, over which the bulb interpolates
        /// (for the first entry: from the transition's start).
        public var transitionTime: Duration
        /// How long the previous entry's value is held before the interpolation to this one.
        public var hold: Duration

        public init(temperature: Float, adjustmentFactor: Float, transitionTime: Duration, hold: Duration = .zero) {
            self.temperature = temperature
            self.adjustmentFactor = adjustmentFactor
            self.transitionTime = transitionTime
            self.hold = hold
        }
    }

    /// Everything an enabling write says.
    public struct Transition: Sendable, Equatable {
        /// The colour temperature characteristic's iid.
        public var temperatureIID: Int
        /// The brightness characteristic's iid (the adjustment's input).
        public var brightnessIID: Int
        /// 16 bytes naming the transition.
        public var transitionID: [UInt8]
        /// When the curve starts.
        public var start: Date
        public var curve: [Entry]
        /// The brightness range the adjustment clamps to (percent).
        public var brightnessRange: ClosedRange<UInt32>
        /// How often the bulb updates its colour temperature by itself.
        public var updateInterval: Duration
        /// How often at most it notifies controllers of the change.
        public var notifyIntervalThreshold: Duration

        public init(temperatureIID: Int, brightnessIID: Int, transitionID: [UInt8], start: Date, curve: [Entry],
                    brightnessRange: ClosedRange<UInt32> = 10...100, updateInterval: Duration = .seconds(60),
                    notifyIntervalThreshold: Duration = .seconds(600)) {
            self.temperatureIID = temperatureIID
            self.brightnessIID = brightnessIID
            self.transitionID = transitionID
            self.start = start
            self.curve = curve
            self.brightnessRange = brightnessRange
            self.updateInterval = updateInterval
            self.notifyIntervalThreshold = notifyIntervalThreshold
        }

        /// The time the curve spans, from its start to its last entry.
        public var span: Duration { curve.reduce(.zero) { $0 + $1.hold + $1.transitionTime } }
    }

    // MARK: Writing

    /// The control point write that starts (or renews) `transition`.
    public static func enabling(_ transition: Transition) -> [UInt8] {
        var configuration = TLV8()
        configuration.append(raw: ConfigurationType.characteristicIID.rawValue, variableUInt(UInt64(transition.temperatureIID)))
        configuration.append(raw: ConfigurationType.parameters.rawValue, parameters(transition))
        configuration.append(raw: ConfigurationType.enabled.rawValue, [1])
        configuration.append(raw: ConfigurationType.curve.rawValue, curve(transition))
        configuration.append(raw: ConfigurationType.updateInterval.rawValue, littleEndian(UInt16(clamping: milliseconds(transition.updateInterval))))
        configuration.append(raw: ConfigurationType.notifyIntervalThreshold.rawValue,
                             littleEndian(UInt32(clamping: milliseconds(transition.notifyIntervalThreshold))))
        return update(configuration)
    }

    /// The control point write that ends the transition of the colour temperature `temperatureIID`.
    public static func disabling(temperatureIID: Int) -> [UInt8] {
        var configuration = TLV8()
        configuration.append(raw: ConfigurationType.characteristicIID.rawValue, variableUInt(UInt64(temperatureIID)))
        return update(configuration)
    }

    private static func update(_ configuration: TLV8) -> [UInt8] {
        var inner = TLV8()
        inner.append(raw: valueTransitionConfiguration, configuration.encoded())
        var control = TLV8()
        control.append(raw: ControlType.updateConfiguration.rawValue, inner.encoded())
        return control.encoded()
    }

    private static func parameters(_ transition: Transition) -> [UInt8] {
        var parameters = TLV8()
        parameters.append(raw: ParameterType.transitionID.rawValue, transition.transitionID)
        let since2001 = max(0, (transition.start.timeIntervalSince(epoch2001) * 1000).rounded())
        parameters.append(raw: ParameterType.startTime.rawValue, littleEndian(UInt64(since2001)))
        return parameters.encoded()
    }

    private static func curve(_ transition: Transition) -> [UInt8] {
        var curve = TLV8()
        for (index, entry) in transition.curve.enumerated() {
            if index > 0 { curve.append(raw: 0x00, []) }
            var fields = TLV8()
            fields.append(raw: EntryType.adjustmentFactor.rawValue, littleEndian(entry.adjustmentFactor.bitPattern))
            fields.append(raw: EntryType.value.rawValue, littleEndian(entry.temperature.bitPattern))
            fields.append(raw: EntryType.transitionOffset.rawValue, variableUInt(UInt64(milliseconds(entry.transitionTime))))
            if entry.hold > .zero { fields.append(raw: EntryType.duration.rawValue, variableUInt(UInt64(milliseconds(entry.hold)))) }
            curve.append(raw: CurveType.entry.rawValue, fields.encoded())
        }
        curve.append(raw: CurveType.adjustmentCharacteristicIID.rawValue, variableUInt(UInt64(transition.brightnessIID)))
        var range = TLV8()
        range.append(raw: RangeType.minimum.rawValue, littleEndian(transition.brightnessRange.lowerBound))
        range.append(raw: RangeType.maximum.rawValue, littleEndian(transition.brightnessRange.upperBound))
        curve.append(raw: CurveType.adjustmentRange.rawValue, range.encoded())
        return curve.encoded()
    }

    // MARK: Reading

    /// What the bulb answered a control point write.
    public enum Answer: Sendable, Equatable {
        /// The transition runs: on this characteristic, started `timeSinceStart` ago.
        case active(temperatureIID: Int, transitionID: [UInt8], timeSinceStart: Duration)
        /// No transition runs (the answer to a disabling write).
        case inactive
    }

    /// Reads the bulb's answer to an update.
    /// - Throws: ``TLVError`` for bytes that are not this answer.
    public static func answer(_ bytes: [UInt8]) throws(TLVError) -> Answer {
        let control = try TLV8(decoding: bytes)
        guard let update = control[raw: ControlType.updateConfiguration.rawValue] else {
            throw TLVError.missing("the update's answer (type 2)")
        }
        let inner = try TLV8(decoding: update)
        guard let statusBytes = inner[raw: valueTransitionConfiguration], !statusBytes.isEmpty else { return .inactive }
        let status = try TLV8(decoding: statusBytes)
        guard let iid = status[raw: StatusType.characteristicIID.rawValue].flatMap(readVariableUInt),
              let parameters = status[raw: StatusType.parameters.rawValue] else {
            throw TLVError.missing("the status's characteristic iid and parameters")
        }
        let transitionID = try TLV8(decoding: parameters)[raw: ParameterType.transitionID.rawValue] ?? []
        let since = status[raw: StatusType.timeSinceStart.rawValue].flatMap(readVariableUInt) ?? 0
        return .active(temperatureIID: Int(iid), transitionID: transitionID, timeSinceStart: .milliseconds(Int64(clamping: since)))
    }

    /// The characteristics a bulb's Supported Characteristic Value Transition Configuration
    /// names: iid and kind (1 brightness, 2 colour temperature).
    public static func supported(_ bytes: [UInt8]) throws(TLVError) -> [(iid: Int, kind: UInt8)] {
        var found: [(iid: Int, kind: UInt8)] = []
        for record in try TLV8(decoding: bytes).records(of: 0x01) {
            let fields = try TLV8(decoding: record)
            guard let iid = fields[raw: 0x01].flatMap(readVariableUInt), let kind = fields[raw: 0x02]?.first else { continue }
            found.append((Int(iid), kind))
        }
        return found
    }

    // MARK: Numbers

    /// The shortest of 1, 2, 4 or 8 bytes, little-endian (HAP-NodeJS's `writeVariableUIntLE`).
    static func variableUInt(_ value: UInt64) -> [UInt8] {
        switch value {
        case 0...0xFF: [UInt8(value)]
        case 0...0xFFFF: littleEndian(UInt16(value))
        case 0...0xFFFF_FFFF: littleEndian(UInt32(value))
        default: littleEndian(value)
        }
    }

    static func readVariableUInt(_ bytes: [UInt8]) -> UInt64? {
        guard [1, 2, 4, 8].contains(bytes.count) else { return nil }
        return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

import Foundation

/// The unit conversions between Matter's attributes and HomeKit's characteristics, both ways.
/// Each is exact where the units allow: a HomeKit value written and read back is the same value
/// (percent -> level -> percent, degrees -> hue -> degrees, °C -> 0.01 °C -> °C); Matter's finer
/// scales (254 levels, 0.01 °C) are rounded to HomeKit's step when read.
enum MatterUnits {
    /// Level Control's 0...254 as HomeKit's brightness, 0...100 %.
    static func percent(level: Double) -> Int {
        Int((min(max(level, 0), 254) * 100 / 254).rounded())
    }

    /// HomeKit's 0...100 % as a level, at least `minimum` (Level Control's MinLevel).
    static func level(percent: Double, minimum: Int = 1) -> Int {
        max(minimum, Int((min(max(percent, 0), 100) * 254 / 100).rounded()))
    }

    /// Color Control's CurrentHue, 0...254, as HomeKit's 0...360 degrees.
    static func degrees(hue: Double) -> Int {
        Int((min(max(hue, 0), 254) * 360 / 254).rounded())
    }

    /// HomeKit's hue in degrees as Color Control's 0...254.
    static func hue(degrees: Double) -> Int {
        Int((min(max(degrees, 0), 360) * 254 / 360).rounded())
    }

    /// Color Control's CurrentSaturation, 0...254, as HomeKit's 0...100 %.
    static func percent(saturation: Double) -> Int {
        percent(level: saturation)
    }

    /// HomeKit's saturation in percent as Color Control's 0...254.
    static func saturation(percent: Double) -> Int {
        level(percent: percent, minimum: 0)
    }

    /// A temperature in 0.01 °C as °C, to the device's own 0.01 (HomeKit's minStep of 0.1
    /// bounds what is written, not what is reported).
    static func celsius(centi: Double) -> Double {
        centi / 100
    }

    /// Relative humidity in 0.01 % as percent.
    static func percent(hundredths: Double) -> Double {
        hundredths / 100
    }

    /// °C as Matter's 0.01 °C.
    static func centi(celsius: Double) -> Int {
        Int((celsius * 100).rounded())
    }

    /// Illuminance Measurement's MeasuredValue (10,000 × log10(lux) + 1) as lux; 0 (too dark to
    /// measure) as HomeKit's minimum 0.0001. Rounded to 4 significant digits (the measured value's
    /// own resolution is 0.023 %).
    static func lux(measured: Double) -> Double {
        guard measured >= 1 else { return 0.0001 }
        let lux = pow(10, (measured - 1) / 10_000)
        let digits = max(0, 3 - Int(floor(log10(lux))))
        let scale = pow(10, Double(digits))
        return max(0.0001, (lux * scale).rounded() / scale)
    }

    /// Window Covering's percent closed, in hundredths (0 open ... 10,000 closed), as HomeKit's
    /// position (100 open ... 0 closed).
    static func position(percent100thsClosed value: Double) -> Int {
        100 - Int((min(max(value, 0), 10_000) / 100).rounded())
    }

    /// HomeKit's position as Window Covering's percent closed, in hundredths.
    static func percent100thsClosed(position: Double) -> Int {
        (100 - Int(min(max(position, 0), 100).rounded())) * 100
    }

    /// A Matter `single` (float32) attribute as the number it stands for: the shortest decimal
    /// that reads back as the same float32 (238.8, not 238.8000030517578). A number no float32
    /// holds exactly (a `double` attribute) is kept as it is.
    static func single(_ value: Double) -> Double {
        guard value.isFinite, abs(value) <= Double(Float.greatestFiniteMagnitude), Double(Float(value)) == value else { return value }
        return Double("\(Float(value))") ?? value
    }

    /// Power Source's BatPercentRemaining (0...200, half percents) as percent.
    static func percent(halfPercents: Double) -> Int {
        Int((min(max(halfPercents, 0), 200) / 2).rounded())
    }
}

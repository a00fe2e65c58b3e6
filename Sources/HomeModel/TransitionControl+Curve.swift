import Foundation

/// The 24-hour curve HomeGate hands a bulb when it turns Adaptive Lighting on: warm at night,
/// cool around midday, by the local time of day, as the Home app's curve runs (the Home app
/// follows the sun; HomeGate follows a fixed day, docs/mqtt-api.md "Adaptive Lighting").
extension TransitionControl {
    /// The colour temperature by local hour (mireds): 2500 K at night, 5000 K from 11:00 to
    /// 14:00, warming through the evening; linear between these points.
    static let dayProfile: [(hour: Double, mireds: Double)] = [
        (0, 400), (5, 400), (6, 370), (7, 320), (8, 270), (9, 235), (10, 215), (11, 200), (14, 200),
        (15, 210), (16, 230), (17, 260), (18, 300), (19, 340), (20, 370), (21, 400), (24, 400),
    ]

    /// The profile's colour temperature at `hour` (0 to 24, fractions allowed).
    static func mireds(atHour hour: Double) -> Double {
        let hour = min(max(hour, 0), 24)
        guard let upper = dayProfile.firstIndex(where: { $0.hour >= hour }), upper > 0 else { return dayProfile[0].mireds }
        let (h0, m0) = dayProfile[upper - 1], (h1, m1) = dayProfile[upper]
        return m0 + (m1 - m0) * (hour - h0) / (h1 - h0)
    }

    /// The brightness adjustment at a colour temperature: none at the warmest, half a mired per
    /// percent at 5000 K, so a bright light around midday is cooler than a dim one.
    static func adjustmentFactor(mireds: Double) -> Double {
        -0.5 * max(0, 400 - mireds) / 200
    }

    /// A day's curve from `start`: an entry at `start`, one at every whole hour after it, and
    /// one 24 hours after `start`; temperatures from ``dayProfile`` in `calendar`'s time zone,
    /// kept within `temperatures` (the bulb's own bounds, in mireds).
    public static func dayCurve(from start: Date, calendar: Calendar, temperatures: ClosedRange<Double>) -> [Entry] {
        let end = start.addingTimeInterval(86_400)
        var times = [start]
        var hour = calendar.dateInterval(of: .hour, for: start)?.end ?? start.addingTimeInterval(3600)
        while hour < end {
            times.append(hour)
            hour = hour.addingTimeInterval(3600)
        }
        times.append(end)
        var entries: [Entry] = []
        var previous = start
        for time in times {
            let parts = calendar.dateComponents([.hour, .minute, .second], from: time)
            var localHour = Double(parts.hour ?? 0) + Double(parts.minute ?? 0) / 60 + Double(parts.second ?? 0) / 3600
            if time == end, localHour == 0 { localHour = 24 }
            let mireds = min(max(mireds(atHour: localHour), temperatures.lowerBound), temperatures.upperBound)
            let offset = Duration.milliseconds(Int64((time.timeIntervalSince(previous) * 1000).rounded()))
            entries.append(Entry(temperature: Float(mireds.rounded()), adjustmentFactor: Float(adjustmentFactor(mireds: mireds)), transitionTime: offset))
            previous = time
        }
        return entries
    }
}

/// A `Duration` as the numbers system calls, metrics and logs take, in one place. Whole units
/// are truncated toward zero, as `components` are, unless the name says they are rounded up;
/// every whole-unit figure saturates at `Int64`'s bounds instead of overflowing.
extension Duration {
    /// Seconds, with the fraction.
    public var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Milliseconds, with the fraction.
    public var millisecondsValue: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
    }

    /// Microseconds, with the fraction.
    public var microsecondsValue: Double {
        Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12
    }

    /// Whole seconds, truncated toward zero.
    public var wholeSeconds: Int64 {
        components.seconds
    }

    /// Whole milliseconds, truncated toward zero.
    public var wholeMilliseconds: Int64 {
        whole(perSecond: 1_000, roundingUp: false)
    }

    /// Whole nanoseconds, truncated toward zero.
    public var wholeNanoseconds: Int64 {
        whole(perSecond: 1_000_000_000, roundingUp: false)
    }

    /// Whole milliseconds, rounded up (toward positive infinity): a timeout in milliseconds
    /// that never ends before the duration has passed.
    public var millisecondsRoundedUp: Int64 {
        whole(perSecond: 1_000, roundingUp: true)
    }

    /// The duration in units of which a second has `perSecond`: truncated toward zero, or
    /// rounded up; saturating.
    private func whole(perSecond: Int64, roundingUp: Bool) -> Int64 {
        let attosecondsPerUnit = 1_000_000_000_000_000_000 / perSecond
        let (seconds, attoseconds) = components
        var fraction = attoseconds / attosecondsPerUnit
        if roundingUp && attoseconds > 0 && attoseconds % attosecondsPerUnit != 0 { fraction += 1 }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(fraction)
        guard !sumOverflow else { return seconds < 0 ? .min : .max }
        return sum
    }
}

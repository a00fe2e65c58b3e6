/// Runs `operation` until `deadline` on `clock`: its result, or nil when the deadline came first.
///
/// The operation and a sleep until the deadline race as the two children of a task group; the
/// first to end decides, and the other is cancelled. When the deadline wins, the operation has
/// been cancelled (a cancellation-aware operation stops: a driver's call stops waiting, a publish
/// gives up) and has ended before this returns. Cancelling the calling task cancels both: the
/// result is then whichever ends first, usually nil.
public func withDeadline<C: Clock, T: Sendable>(_ deadline: C.Instant, on clock: C,
                                               _ operation: @escaping @Sendable () async -> T) async -> T? where C.Duration == Duration {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await clock.sleep(until: deadline, tolerance: nil)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}

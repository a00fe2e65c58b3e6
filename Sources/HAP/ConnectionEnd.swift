import Synchronization

/// Why a connection ended, as decided once: the first reason recorded stands (a timeout, a frame
/// that does not decrypt, the accessory closing, ``Client/close()``), and everyone who asks later,
/// or waits, learns that one.
///
/// Shared between the connection's pipeline (which records on its event loop) and
/// ``Connection`` (which records on ``Connection/close()`` and cancellation, and waits).
final class ConnectionEnd: Sendable {
    private struct State {
        var reason: HAPError?
        var waiters: [CheckedContinuation<HAPError, Never>] = []
    }

    private let state = Mutex(State())

    /// The reason, once one is recorded; nil while the connection is open.
    var reason: HAPError? { state.withLock(\.reason) }

    /// Records `reason` unless one is recorded already; returns the one that stands.
    @discardableResult
    func record(_ reason: HAPError) -> HAPError {
        let (standing, waiters) = state.withLock { state in
            if let recorded = state.reason { return (recorded, [CheckedContinuation<HAPError, Never>]()) }
            state.reason = reason
            defer { state.waiters.removeAll() }
            return (reason, state.waiters)
        }
        for waiter in waiters { waiter.resume(returning: standing) }
        return standing
    }

    /// Waits until a reason is recorded, and returns it.
    func wait() async -> HAPError {
        await withCheckedContinuation { continuation in
            let reason: HAPError? = state.withLock { state in
                if state.reason == nil { state.waiters.append(continuation) }
                return state.reason
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }
}

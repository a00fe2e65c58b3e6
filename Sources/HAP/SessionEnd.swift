import Synchronization

/// Why a session ended, as decided once: the first reason recorded stands (a timeout, a frame or
/// datagram that does not decrypt, the accessory closing or forgetting the session, a
/// ``Client/close()`` or ``CoAPSession/close()``), and everyone who asks later, or waits, learns
/// that one. The same for both transports: over IP it is shared between the connection's pipeline
/// (which records on its event loop) and ``Connection`` (which records on close and
/// cancellation, and waits); over CoAP ``CoAPSession`` records and waits.
final class SessionEnd: Sendable {
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
        recordFirst(reason).standing
    }

    /// Records `reason` unless one is recorded already: the one that stands, and whether it was
    /// this one (the caller then closes what the session held).
    func recordFirst(_ reason: HAPError) -> (standing: HAPError, isFirst: Bool) {
        let (standing, waiters) = state.withLock { state in
            if let recorded = state.reason { return (recorded, [CheckedContinuation<HAPError, Never>]?.none) }
            state.reason = reason
            defer { state.waiters.removeAll() }
            return (reason, state.waiters)
        }
        guard let waiters else { return (standing, false) }
        for waiter in waiters { waiter.resume(returning: standing) }
        return (standing, true)
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

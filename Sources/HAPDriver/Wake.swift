import Synchronization

/// A wake-up call for a loop that waits: ``signal()`` ends the current (or the next) wait.
final class Wake: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when signalled (at once if signalled since the last wait), after `interval`, or
    /// when cancelled.
    func wait(upTo interval: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.signalled() }
            group.addTask { try? await Task.sleep(for: interval) }
            await group.next()
            group.cancelAll()
        }
    }

    private func signalled() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}

internal import CMosquitto
import Foundation
import Synchronization

/// Subscriptions: recorded, sent, answered and made again after a reconnect, all on the network
/// thread (``EventLoop/execute(_:)``).
///
/// Every change to what the broker is asked for happens on that thread, in order with
/// libmosquitto's callbacks: a `subscribe` or `unsubscribe` can never fall between a CONNACK and
/// the subscriptions it restores, the end of a connection records an unanswered UNSUBSCRIBE at
/// once, and a cancelled `subscribe` whose SUBSCRIBE went out keeps the subscription it made.
extension Client {
    /// Subscribes, and keeps the subscriptions: they are made again after every reconnect.
    ///
    /// Connected, it returns when the broker has answered each. Not connected (or if the
    /// connection drops before the answer), the subscriptions are recorded and made when the
    /// connection is back; the call returns without waiting for that. Cancelled, the
    /// subscription whose SUBSCRIBE went out is kept (as if the call had returned: unsubscribe to
    /// undo it); those not yet sent are not made.
    /// - Throws: ``ClientError`` listing the subscriptions the broker refused (those are
    ///   forgotten; the others stay); `CancellationError`.
    nonisolated(nonsending) public func subscribe(_ subscriptions: [Subscription]) async throws {
        guard try await onNetworkThread({ client in client.record(subscriptions) }) else { return }
        var refused: [ClientError.Refusal] = []
        for (position, subscription) in subscriptions.enumerated() {
            do {
                if let code = try await make(subscription) {
                    refused.append(ClientError.Refusal(filter: subscription.filter.string, code: code))
                }
            } catch {
                let unsent = subscriptions[(position + 1)...].map(\.filter)
                try? await onNetworkThread { client in client.forget(unsent) }
                throw error
            }
        }
        if !refused.isEmpty { throw ClientError(.subscriptionRefused(refused)) }
    }

    /// Removes subscriptions; they are no longer made after a reconnect. Connected, it returns
    /// when the broker has answered; otherwise a broker that kept the session is told at the
    /// next connect.
    nonisolated(nonsending) public func unsubscribe(_ filters: [TopicFilter]) async throws {
        for filter in filters {
            let token = CallToken()
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    eventLoop.execute { [self] in
                        // Cancelled or not, the unsubscription is made: cancelling only stops the wait.
                        guard !token.isCancelled else {
                            sendUnsubscribe(filter, waiter: nil)
                            continuation.resume(throwing: CancellationError())
                            return
                        }
                        sendUnsubscribe(filter, waiter: Waiter(token: token) { result in continuation.resume(with: result.map { _ in }) })
                    }
                }
            } onCancel: {
                token.cancel()
                eventLoop.execute { [self] in abandonWaiter(token) }
            }
        }
    }

    // MARK: - On the network thread

    /// Runs `body` on the network thread and returns its result.
    private func onNetworkThread<T: Sendable>(_ body: @escaping @Sendable (Client) -> T) async throws -> T {
        await withCheckedContinuation { continuation in
            eventLoop.execute { [self] in continuation.resume(returning: body(self)) }
        }
    }

    /// Records the subscriptions; true if connected (they are to be sent now).
    private func record(_ subscriptions: [Subscription]) -> Bool {
        state.withLock { state in
            for subscription in subscriptions {
                state.subscriptions[subscription.filter] = subscription
                state.unsubscribedWhileDisconnected.remove(subscription.filter)
            }
            return state.isConnected
        }
    }

    private func forget(_ filters: [TopicFilter]) {
        state.withLock { state in
            for filter in filters { state.subscriptions.removeValue(forKey: filter) }
        }
    }

    /// Sends one SUBSCRIBE and waits for its answer; returns the refusal code, if refused. Not
    /// connected (any more), or unsubscribed meanwhile, there is nothing to send.
    private func make(_ subscription: Subscription) async throws -> Int32? {
        let token = CallToken()
        let acknowledgement: Acknowledgement = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                eventLoop.execute { [self] in
                    guard !token.isCancelled else {
                        forget([subscription.filter]) // cancelled before its SUBSCRIBE went out: not made
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    let waiter = Waiter(token: token) { continuation.resume(with: $0) }
                    if !sendSubscribe(subscription, waiter: waiter) { continuation.resume(returning: Acknowledgement(interrupted: true)) }
                }
            }
        } onCancel: {
            token.cancel()
            eventLoop.execute { [self] in abandonWaiter(token) }
        }
        guard !acknowledgement.interrupted, let code = acknowledgement.grantedQoS.first, code >= 0x80 else { return nil }
        return code
    }

    /// Sends a SUBSCRIBE for a recorded subscription; false when there is nothing to wait for
    /// (not connected: it is made at the next connect; or no longer recorded).
    @discardableResult
    func sendSubscribe(_ subscription: Subscription, waiter: Waiter?) -> Bool {
        let filter = subscription.filter
        let recorded = state.withLock { $0.isConnected && $0.subscriptions[filter] != nil }
        guard recorded else { return false }
        var mid: Int32 = 0
        let options = configuration.protocolVersion == .v5 ? subscription.optionBits : 0
        let rc = mosquitto_subscribe_v5(handle.pointer, &mid, filter.string, subscription.qosOnTheWire.rawValue, options, nil)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            if rc != MOSQ_ERR_NO_CONN.rawValue { logger.error("could not send the subscription to \(filter): \(Library.describe(rc, errno: errno))") }
            return false // the connection is going: it is made at the next connect
        }
        state.withLock { $0.acknowledgements.append(.subscribing(filter, waiter), for: mid) }
        return true
    }

    /// Sends an UNSUBSCRIBE, or records it for a broker that keeps the session when not connected.
    func sendUnsubscribe(_ filter: TopicFilter, waiter: Waiter?) {
        let connected = state.withLock { state in
            state.subscriptions.removeValue(forKey: filter)
            if !state.isConnected { state.unsubscribedWhileDisconnected.insert(filter) }
            return state.isConnected
        }
        guard connected else {
            waiter?.resume(.success(Acknowledgement(interrupted: true)))
            return
        }
        var mid: Int32 = 0
        let rc = mosquitto_unsubscribe_v5(handle.pointer, &mid, filter.string, nil)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            state.withLock { _ = $0.unsubscribedWhileDisconnected.insert(filter) }
            waiter?.resume(.success(Acknowledgement(interrupted: true)))
            return
        }
        state.withLock { $0.acknowledgements.append(.unsubscribing(filter, waiter), for: mid) }
    }

    /// A cancelled call stops waiting; what it sent stands (its answer is handled as a restored
    /// subscription's or a recorded unsubscription's).
    private func abandonWaiter(_ token: CallToken) {
        let waiter = state.withLock { state -> Waiter? in
            let old = state.acknowledgements.replaceFirst { slot in
                switch slot {
                case .subscribing(let filter, let waiter?) where waiter.token === token: .subscribing(filter, nil)
                case .unsubscribing(let filter, let waiter?) where waiter.token === token: .unsubscribing(filter, nil)
                default: nil
                }
            }
            switch old {
            case .subscribing(_, let waiter?), .unsubscribing(_, let waiter?): return waiter
            default: return nil
            }
        }
        waiter?.resume(.failure(CancellationError()))
    }
}

extension Client {
    /// A call waiting for a SUBACK or an UNSUBACK.
    struct Waiter: Sendable {
        let token: CallToken
        let resume: @Sendable (Result<Acknowledgement, any Error>) -> Void
    }

    /// Tells a call's cancellation to the network thread.
    final class CallToken: Sendable {
        private let cancelled = Atomic<Bool>(false)
        var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
        func cancel() { cancelled.store(true, ordering: .releasing) }
    }
}

internal import CMosquitto
import Foundation

/// Matching libmosquitto's acknowledgements (PUBACK, PUBCOMP, SUBACK, UNSUBACK, and the write of a
/// QoS 0 message) to the calls waiting for them, by message id.
///
/// libmosquitto hands out the id when the call returns, and the network thread may process the
/// acknowledgement before the caller has registered to wait for it. So a caller announces a
/// hand-off before the libmosquitto call (``beginHandOff()``) and registers right after; an
/// acknowledgement that arrives in between is kept for it. One that arrives when no hand-off is in
/// progress and nobody waits is nobody's, and is dropped: nothing accumulates, and an old
/// acknowledgement can never complete a later call that reuses its id.
extension Client {
    /// What a waiting call is waiting for; decides what happens when the connection ends.
    enum PendingKind: Equatable {
        /// A QoS 0 message: lost with the connection.
        case publishQoS0
        /// A QoS 1 or 2 message: libmosquitto keeps it and resends it after the reconnect.
        case publishQueued
    }

    /// What an acknowledgement carried.
    struct Acknowledgement: Sendable {
        var reasonCode: Int32 = 0
        var grantedQoS: [Int32] = []
        /// The connection ended before the broker answered (subscriptions are made again on reconnect).
        var interrupted = false
    }

    enum AcknowledgementSlot {
        case waiting(CheckedContinuation<Acknowledgement, any Error>, PendingKind)
        /// The waiter was cancelled; the acknowledgement, if it comes, is dropped.
        case abandoned(PendingKind)
        /// A SUBSCRIBE for a recorded subscription, and the call waiting for its SUBACK (none: the
        /// client restored it after a reconnect, or the call was cancelled). A refusal forgets it.
        case subscribing(TopicFilter, Waiter?)
        /// An UNSUBSCRIBE, and the call waiting for its UNSUBACK, if any. If the connection ends
        /// first, it is recorded to be sent again to a broker that kept the session.
        case unsubscribing(TopicFilter, Waiter?)
    }

    /// Call before a libmosquitto call that returns a message id; ``awaitAcknowledgement(of:kind:handOff:)``
    /// or ``endHandOff()`` must follow. Returns the connection the hand-off belongs to.
    func beginHandOff() -> HandOff {
        state.withLock { state in
            state.handOffsInProgress += 1
            return HandOff(connection: state.connectionNumber)
        }
    }

    /// Which connection a hand-off happened on: if that connection ended before the caller
    /// registered, the end-of-connection rules apply to it at once.
    struct HandOff {
        let connection: Int
    }

    /// Ends a hand-off that produced nothing to wait for (the call failed).
    func endHandOff() {
        state.withLock { $0.finishHandOff() }
    }

    /// Ends the hand-off of `mid` and waits for its acknowledgement.
    func awaitAcknowledgement(of mid: Int32, kind: PendingKind, handOff: HandOff) async throws -> Acknowledgement {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Acknowledgement, any Error>) in
                let early: Result<Acknowledgement, any Error>? = state.withLock { state in
                    defer { state.finishHandOff() }
                    if let acknowledgement = state.earlyAcknowledgements.removeValue(forKey: mid) {
                        return .success(acknowledgement)
                    }
                    if state.phase == .stopped { return .failure(ClientError.stopped) }
                    if state.connectionNumber != handOff.connection, let outcome = Self.outcomeOfLostConnection(kind) {
                        return outcome
                    }
                    if Task.isCancelled {
                        state.acknowledgements.append(.abandoned(kind), for: mid)
                        return .failure(CancellationError())
                    }
                    state.acknowledgements.append(.waiting(continuation, kind), for: mid)
                    return nil
                }
                if let early { continuation.resume(with: early) }
            }
        } onCancel: {
            let waiting: CheckedContinuation<Acknowledgement, any Error>? = state.withLock { state in
                let old = state.acknowledgements.replaceFirst(for: mid) { slot in
                    if case .waiting(_, let kind) = slot { .abandoned(kind) } else { nil }
                }
                guard case .waiting(let continuation, _) = old else { return nil }
                return continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Ends the hand-off of `mid` with nobody waiting: its acknowledgement is dropped when it comes.
    func forgetAcknowledgement(of mid: Int32, kind: PendingKind) {
        state.withLock { state in
            defer { state.finishHandOff() }
            if state.earlyAcknowledgements.removeValue(forKey: mid) == nil {
                state.acknowledgements.append(.abandoned(kind), for: mid)
            }
        }
    }

    /// An acknowledgement from the network thread.
    func deliver(_ acknowledgement: Acknowledgement, for mid: Int32) {
        var waiter: CheckedContinuation<Acknowledgement, any Error>?
        var subscriptionWaiter: Waiter?
        var refused: (filter: TopicFilter, restored: Bool)?
        state.withLock { state in
            switch state.acknowledgements.removeFirst(for: mid) {
            case .waiting(let continuation, _):
                waiter = continuation
            case .subscribing(let filter, let waiting):
                subscriptionWaiter = waiting
                if let code = acknowledgement.grantedQoS.first, code >= 0x80 {
                    state.subscriptions.removeValue(forKey: filter)
                    refused = (filter, waiting == nil)
                }
            case .unsubscribing(_, let waiting):
                subscriptionWaiter = waiting
            case .abandoned:
                break
            case nil:
                if state.handOffsInProgress > 0 { state.earlyAcknowledgements[mid] = acknowledgement }
            }
        }
        waiter?.resume(returning: acknowledgement)
        subscriptionWaiter?.resume(.success(acknowledgement))
        if let refused, refused.restored {
            logger.error("the broker refused to restore the subscription to \(refused.filter) (reason code \(acknowledgement.grantedQoS.first ?? 0)); it is dropped")
        }
    }

    /// What a call waiting for `kind` gets when its connection ended; nil: it keeps waiting.
    static func outcomeOfLostConnection(_ kind: PendingKind) -> Result<Acknowledgement, any Error>? {
        switch kind {
        case .publishQoS0: return .failure(ClientError.notConnected)
        case .publishQueued: return nil
        }
    }

    /// The connection ended: QoS 0 messages not yet written are lost; subscription calls return
    /// (their subscriptions are made again on the reconnect), and an unanswered UNSUBSCRIBE is
    /// recorded at once for a broker that kept the session; QoS 1 and 2 messages wait for the
    /// reconnect.
    func connectionEnded() {
        let (lost, interrupted) = state.withLock { state in
            state.connectionNumber += 1
            var lost: [CheckedContinuation<Acknowledgement, any Error>] = []
            var interrupted: [Waiter] = []
            state.acknowledgements.removeAll { slot in
                switch slot {
                case .waiting(let continuation, .publishQoS0):
                    lost.append(continuation)
                case .waiting(_, .publishQueued), .abandoned(.publishQueued):
                    return false
                case .subscribing(_, let waiter):
                    if let waiter { interrupted.append(waiter) }
                case .unsubscribing(let filter, let waiter):
                    state.unsubscribedWhileDisconnected.insert(filter)
                    if let waiter { interrupted.append(waiter) }
                case .abandoned(.publishQoS0):
                    break
                }
                return true
            }
            return (lost, interrupted)
        }
        for continuation in lost { continuation.resume(throwing: ClientError.notConnected) }
        for waiter in interrupted { waiter.resume(.success(Acknowledgement(interrupted: true))) }
    }

    /// The client stopped: nothing will be acknowledged any more.
    func failAllAcknowledgements() {
        let (waiting, subscriptionWaiters) = state.withLock { state in
            defer { state.earlyAcknowledgements.removeAll() }
            var waiting: [CheckedContinuation<Acknowledgement, any Error>] = []
            var subscriptionWaiters: [Waiter] = []
            for slot in state.acknowledgements.takeAll() {
                switch slot {
                case .waiting(let continuation, _): waiting.append(continuation)
                case .subscribing(_, let waiter?), .unsubscribing(_, let waiter?): subscriptionWaiters.append(waiter)
                default: break
                }
            }
            return (waiting, subscriptionWaiters)
        }
        for continuation in waiting { continuation.resume(throwing: ClientError.stopped) }
        for waiter in subscriptionWaiters { waiter.resume(.failure(ClientError.stopped)) }
    }
}

extension Client.State {
    /// One hand-off is over; when none is left, unclaimed early acknowledgements are nobody's.
    mutating func finishHandOff() {
        handOffsInProgress -= 1
        if handOffsInProgress == 0 && !earlyAcknowledgements.isEmpty {
            earlyAcknowledgements.removeAll()
        }
    }
}

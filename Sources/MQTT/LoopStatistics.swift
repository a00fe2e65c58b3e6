import Synchronization
import Timing

/// What a client's network loop has done since the client was made (``Client/loopStatistics``).
public struct LoopStatistics: Sendable, Equatable {
    /// Messages received from the broker.
    public var received: Int
    /// Received messages the consumer of ``Client/messages`` has not taken yet.
    public var waiting: Int
    /// How often the loop stopped reading from the broker because the consumer, or the broker
    /// taking the client's own messages, was behind.
    public var pauses: Int
    /// How long reading was stopped, in all (including a pause under way).
    public var pausedTime: Duration
    /// QoS 1 messages the broker delivered again after a reconnect, already handed on once and
    /// not handed on again (``RedeliveryFilter``); not counted in ``received``.
    public var redeliveries: Int

    /// Nothing done yet.
    public init(received: Int = 0, waiting: Int = 0, pauses: Int = 0, pausedTime: Duration = .zero, redeliveries: Int = 0) {
        self.received = received
        self.waiting = waiting
        self.pauses = pauses
        self.pausedTime = pausedTime
        self.redeliveries = redeliveries
    }
}

/// The network loop's counters: written by the network thread, read by anyone.
final class LoopCounters: Sendable {
    private let receivedCount = Atomic<Int>(0)
    private let redeliveryCount = Atomic<Int>(0)
    private let pauseCount = Atomic<Int>(0)
    private let pausedNanoseconds = Atomic<Int>(0)
    /// When the pause under way began, in nanoseconds of ``ContinuousClock`` since ``origin``; -1: none.
    private let pauseStart = Atomic<Int>(-1)
    private let origin = ContinuousClock.now

    func received() {
        receivedCount.add(1, ordering: .relaxed)
    }

    func redelivered() {
        redeliveryCount.add(1, ordering: .relaxed)
    }

    /// Reading stopped (network thread).
    func pauseBegan() {
        pauseCount.add(1, ordering: .relaxed)
        pauseStart.store(nanosecondsSinceOrigin(), ordering: .relaxed)
    }

    /// Reading goes on (network thread).
    func pauseEnded() {
        let start = pauseStart.exchange(-1, ordering: .relaxed)
        if start >= 0 { pausedNanoseconds.add(nanosecondsSinceOrigin() - start, ordering: .relaxed) }
    }

    func snapshot(waiting: Int) -> LoopStatistics {
        var paused = pausedNanoseconds.load(ordering: .relaxed)
        let start = pauseStart.load(ordering: .relaxed)
        if start >= 0 { paused += nanosecondsSinceOrigin() - start }
        return LoopStatistics(received: receivedCount.load(ordering: .relaxed), waiting: waiting,
                              pauses: pauseCount.load(ordering: .relaxed), pausedTime: .nanoseconds(paused),
                              redeliveries: redeliveryCount.load(ordering: .relaxed))
    }

    private func nanosecondsSinceOrigin() -> Int {
        Int(origin.duration(to: .now).wholeNanoseconds)
    }
}

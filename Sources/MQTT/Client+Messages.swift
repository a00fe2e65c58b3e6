import Synchronization

extension Client {
    /// The messages a client received, in the order the broker delivered them: one consumer.
    ///
    /// Nothing received is ever dropped. When the consumer falls
    /// ``Configuration/incomingBufferLimit`` messages behind, the network thread stops reading the
    /// broker's socket (backpressure): the broker keeps what it has for the client, within its own
    /// queue limits, and TCP holds the sender back. Once the consumer has caught up to half the
    /// limit, reading goes on. Keep-alives and publishes continue meanwhile.
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = Message
        public typealias Failure = Never

        let stream: AsyncStream<Message>
        let backlog: Backlog?

        /// Messages from a stream of one's own, with no backpressure (an in-memory bus in tests).
        public init(_ stream: AsyncStream<Message>) {
            self.stream = stream
            backlog = nil
        }

        init(_ stream: AsyncStream<Message>, backlog: Backlog) {
            self.stream = stream
            self.backlog = backlog
        }

        public func makeAsyncIterator() -> Iterator {
            Iterator(base: stream.makeAsyncIterator(), backlog: backlog)
        }

        public struct Iterator: AsyncIteratorProtocol {
            // Said outright: with the protocol's default (`any Error`), `next(isolation:)` below
            // would not be the one `for await` calls, and every message would resume its consumer
            // on a global thread before it hopped to the consumer's actor.
            public typealias Failure = Never

            var base: AsyncStream<Message>.Iterator
            let backlog: Backlog?

            public mutating func next() async -> Message? {
                guard let message = await base.next() else { return nil }
                backlog?.take()
                return message
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async -> Message? {
                guard let message = await base.next(isolation: actor) else { return nil }
                backlog?.take()
                return message
            }
        }
    }

    /// How many received messages wait for the consumer, and whether the network thread should
    /// read more: it pauses at the limit and goes on at half of it.
    final class Backlog: Sendable {
        let limit: Int
        private let waiting = Atomic<Int>(0)
        private let wait: NetworkWait

        init(limit: Int, wait: NetworkWait) {
            self.limit = limit
            self.wait = wait
        }

        /// Messages received and not yet taken by the consumer.
        var count: Int { waiting.load(ordering: .relaxed) }

        /// Where reading goes on again after a pause.
        var resumeMark: Int { limit / 2 }

        /// A message handed to the consumer's stream (network thread).
        func add() {
            waiting.add(1, ordering: .relaxed)
        }

        /// The consumer took a message; at the resume mark the network thread is woken (it may be
        /// paused; if it is not, the wake-up costs one idle turn of its loop).
        func take() {
            if waiting.subtract(1, ordering: .relaxed).newValue == resumeMark { wait.signal() }
        }

        /// Whether the network thread reads now: it stops at the limit and, once stopped, reads
        /// again only at the resume mark.
        func allowsReading(pausedBefore: Bool) -> Bool {
            pausedBefore ? count <= resumeMark : count < limit
        }
    }
}

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

        let queue: MessageQueue

        init(_ queue: MessageQueue) {
            self.queue = queue
        }

        public func makeAsyncIterator() -> Iterator {
            Iterator(queue: queue)
        }

        public struct Iterator: AsyncIteratorProtocol {
            // Said outright: with the protocol's default (`any Error`), `next(isolation:)` below
            // would not be the one `for await` calls.
            public typealias Failure = Never

            let queue: MessageQueue

            public mutating func next() async -> Message? {
                await queue.next()
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async -> Message? {
                await queue.next(isolation: actor)
            }
        }
    }

    /// The received messages between the network thread and the one consumer.
    ///
    /// Not an `AsyncStream`: its iterator resumes the consumer on a global thread, from where it
    /// hops to the consumer's actor. Here the consumer waits on a continuation taken in its own
    /// isolation, so a message read on the network thread resumes an actor that runs there (the
    /// engine) in the same turn, without another thread.
    final class MessageQueue: Sendable {
        private struct State {
            var items: [Message] = []
            var head = 0
            var waiter: CheckedContinuation<Message?, Never>?
            var finished = false

            mutating func pop() -> Message? {
                guard head < items.count else { return nil }
                defer {
                    head += 1
                    if head == items.count {
                        items.removeAll(keepingCapacity: items.count <= 4096)
                        head = 0
                    }
                }
                return items[head]
            }
        }

        private let state = Mutex(State())
        private let backlog: Backlog?

        init(backlog: Backlog?) {
            self.backlog = backlog
        }

        /// A message for the consumer (network thread).
        func push(_ message: Message) {
            backlog?.add()
            let waiter = state.withLock { state -> CheckedContinuation<Message?, Never>? in
                guard !state.finished else { return nil }
                guard let waiter = state.waiter else {
                    state.items.append(message)
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            if let waiter {
                backlog?.take()
                waiter.resume(returning: message)
            }
        }

        /// Takes every message waiting for the consumer, in order (a direct consumer takes over).
        func drain() -> [Message] {
            let waiting = state.withLock { state -> [Message] in
                defer {
                    state.items.removeAll()
                    state.head = 0
                }
                return Array(state.items[state.head...])
            }
            for _ in waiting { backlog?.take() }
            return waiting
        }

        /// No more messages: the consumer gets those waiting, then nil.
        func finish() {
            let waiter = state.withLock { state -> CheckedContinuation<Message?, Never>? in
                state.finished = true
                defer { state.waiter = nil }
                return state.items.count > state.head ? nil : state.waiter
            }
            waiter?.resume(returning: nil)
        }

        /// The next message; nil once finished and empty, or when the waiting task is cancelled.
        func next(isolation actor: isolated (any Actor)? = #isolation) async -> Message? {
            if let message = state.withLock({ $0.pop() }) {
                backlog?.take()
                return message
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<Message?, Never>) in
                    let ready: Message?? = state.withLock { state in
                        if let message = state.pop() { return .some(message) }
                        if state.finished || Task.isCancelled { return .some(nil) }
                        state.waiter = continuation
                        return .none
                    }
                    if case .some(let message) = ready {
                        if message != nil { backlog?.take() }
                        continuation.resume(returning: message)
                    }
                }
            } onCancel: {
                state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }?.resume(returning: nil)
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

/// What the engine does not publish to the broker, because the options hold it back (a
/// debounced or throttled value, an excluded characteristic, a disabled accessory, a value that
/// is not retained), handed to the web page in the same process: the page shows the device's
/// values whatever the broker is told (docs/configuration.md, "Options per accessory").
///
/// One writer (the engine), one reader (the page's feed); the engine never waits: the buffer
/// keeps the newest messages when the reader falls behind.
public final class WithheldMessages: Sendable {
    /// A topic as the broker would have carried it, and its payload (empty: no longer withheld).
    public struct Message: Sendable, Equatable {
        public let topic: String
        public let payload: [UInt8]

        public init(topic: String, payload: [UInt8]) {
            self.topic = topic
            self.payload = payload
        }
    }

    /// The messages, in the order the engine withheld them.
    public let messages: AsyncStream<Message>
    private let continuation: AsyncStream<Message>.Continuation

    public init(buffer: Int = 10_000) {
        (messages, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingNewest(buffer))
    }

    /// Hands one on.
    public func withhold(_ topic: String, _ payload: [UInt8]) {
        continuation.yield(Message(topic: topic, payload: payload))
    }
}

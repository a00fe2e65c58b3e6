import NIOCore

/// The second stage of a HAP connection's pipeline: the plaintext byte stream in, whole
/// ``HTTPMessage``s out (responses and `EVENT/1.0` events, in the order sent), parsed by
/// ``HTTPResponseParser`` however the bytes are cut.
///
/// It parses and does not decide: a stream that does not parse is passed on as the
/// ``HTTPParseError`` (``RequestMatcher`` closes the connection), and nothing after it is read.
/// It also guards the switch to encryption (``SessionEvent/encrypt(_:)``): plaintext bytes
/// buffered beyond the last whole message at that moment cannot be told apart from the session's
/// first frame, so the switch is refused with ``HTTPParseError`` (the connection closes).
final class HTTPResponseDecoder: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = HTTPMessage
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var parser: HTTPResponseParser
    private var failed = false

    /// A decoder with the parser's limits.
    init(parser: HTTPResponseParser = HTTPResponseParser()) {
        self.parser = parser
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        let messages: [HTTPMessage]
        do {
            messages = try parser.feed(buffer.readableBytesView)
        } catch {
            failed = true
            context.fireErrorCaught(error)
            return
        }
        for message in messages {
            context.fireChannelRead(wrapInboundOut(message))
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if case .encrypt? = event as? SessionEvent, !parser.isBetweenMessages {
            // The count is what the parser holds (a begun message's head, or bytes after it).
            let error = HTTPParseError(reason: .bytesBeforeEncryption(count: max(1, parser.bufferedByteCount)))
            failed = true
            context.fireErrorCaught(error) // first: the matcher records why before the caller hears
            promise?.fail(error)
            return
        }
        context.triggerUserOutboundEvent(event, promise: promise)
    }
}

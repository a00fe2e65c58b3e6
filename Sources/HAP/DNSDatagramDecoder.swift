import NIOCore

/// The parsing half of mDNS on a datagram channel: each datagram becomes a ``DNSMessage`` for
/// the next handler; one that is not valid DNS is dropped and counted, never an error (anyone on
/// the link can send anything to the mDNS group). It decides nothing about what a message means.
final class DNSDatagramDecoder: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias InboundOut = DNSMessage

    /// How many datagrams were dropped because they were not valid DNS.
    private(set) var malformedCount = 0
    /// Why the last dropped datagram was not valid DNS.
    private(set) var lastMalformation: DNSMessageError?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        do {
            let message = try DNSMessage(decoding: Array(envelope.data.readableBytesView))
            context.fireChannelRead(wrapInboundOut(message))
        } catch {
            malformedCount += 1
            lastMalformation = error
        }
    }
}

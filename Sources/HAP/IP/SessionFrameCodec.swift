import NIOCore

/// The first stage of a HAP connection's pipeline: bytes pass as they are until pair-verify, then
/// each direction is HAP's ChaCha20-Poly1305 frames (``FrameSealer`` out, ``FrameOpener`` in).
///
/// The switch is ``SessionEvent/encrypt(_:)``, an outbound user event: it travels with the writes,
/// so the request before it (pair-verify M3) leaves in plaintext and the one after it is sealed;
/// its response (M4) was read in plaintext before the event was sent (``Client`` waits for it),
/// and every byte read after it is opened. Frames are taken however the reads cut them (several in
/// one read, one split over several). A frame that does not open is passed on as the
/// ``FrameError`` (to ``RequestMatcher``, which closes the connection); nothing after it is read.
final class SessionFrameCodec: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var sealer: FrameSealer?
    private var opener: FrameOpener?
    private var failed = false

    /// Whether frames are encrypted now.
    var isEncrypted: Bool { sealer != nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard opener != nil else {
            context.fireChannelRead(data)
            return
        }
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        do {
            // Mutated in place through the optional: the opener's buffer is not copied.
            let plaintext = try opener!.open(buffer.readableBytesView)
            guard !plaintext.isEmpty else { return }
            context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: plaintext)))
        } catch {
            failed = true
            context.fireErrorCaught(error)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard sealer != nil else {
            context.write(data, promise: promise)
            return
        }
        let sealed = sealer!.seal(unwrapOutboundIn(data).readableBytesView)
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: sealed)), promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard case .encrypt(let keys)? = event as? SessionEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        guard sealer == nil else {
            promise?.fail(HAPError(.state, "the session is encrypted already"))
            return
        }
        sealer = FrameSealer(key: keys.controllerToAccessory)
        opener = FrameOpener(key: keys.accessoryToController)
        promise?.succeed()
    }
}

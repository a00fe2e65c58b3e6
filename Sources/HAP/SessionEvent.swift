/// What a connection tells its pipeline, as an outbound user event: ordered with the writes, so
/// it takes effect between the write before it and the write after it.
enum SessionEvent: Sendable {
    /// From now on, frames are encrypted with these keys in both directions (after pair-verify).
    /// ``HTTPResponseDecoder`` refuses it while bytes of an unfinished message are buffered;
    /// ``SessionFrameCodec`` switches.
    case encrypt(SessionKeys)
}

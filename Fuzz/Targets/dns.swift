// libFuzzer target: DNS messages (mDNS answers from anyone on the LAN).
// Property: decoding never crashes, loops or allocates without bound (compression pointers).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNS(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? DNSMessage(decoding: Array(UnsafeBufferPointer(start: data, count: count)))
    return 0
}

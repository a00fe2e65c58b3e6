// libFuzzer target: TLV8 (pair-setup, pair-verify and pairings messages from accessories, Adaptive Lighting's transitions).
// Properties: decoding never crashes; what decodes encodes to bytes that decode again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLV8(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let tlv = try? TLV8(decoding: bytes) else { return 0 }
    do {
        _ = try TLV8(decoding: tlv.encoded())
    } catch {
        fatalError("a decoded TLV8 does not decode after encoding: \(error)")
    }
    _ = tlv.split(separatedBy: 0xFF)
    return 0
}

// libFuzzer target: the HTTP/EVENT response parser (everything an accessory sends on a session).
// Properties: never crashes; the same bytes fed whole or in two pieces give the same messages
// (or both fail).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    var whole = HTTPResponseParser(maxHeaderBytes: 4096, maxBodyBytes: 65_536)
    let all = try? whole.feed(bytes)
    var split = HTTPResponseParser(maxHeaderBytes: 4096, maxBodyBytes: 65_536)
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let first = try? split.feed(bytes[..<cut])
    let second = first == nil ? nil : try? split.feed(bytes[cut...])
    if let all, let first, let second, all.count != first.count + second.count {
        fatalError("fed whole: \(all.count) messages; in two pieces at \(cut): \(first.count + second.count)")
    }
    return 0
}

// libFuzzer target: Wire's JSON parser (the set path's payloads, request bodies, HAP databases).
// Properties: parsing never crashes; a document that parses writes back to text that parses to
// the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let value = try? JSON.parse(bytes) else { return 0 }
    let again: JSON
    do {
        again = try JSON.parse(value.encoded())
    } catch {
        fatalError("\(value.text) does not parse again: \(error)")
    }
    if !sameValue(again, value) { fatalError("\(value.text) parses again as \(again.text)") }
    return 0
}

/// Equality, with NaN-free numbers compared by value (an integer written as 1.0 reads back as 1).
func sameValue(_ a: JSON, _ b: JSON) -> Bool {
    a == b || a.text == b.text
}

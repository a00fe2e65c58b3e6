extension Array where Element == UInt8 {
    /// Appends `bytes` with one copy when they are contiguous (arrays, slices, `Data`), also in
    /// unoptimized builds, where the generic `append(contentsOf:)` goes element by element.
    mutating func appendBytes(_ bytes: some Collection<UInt8>) {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if copied == nil { append(contentsOf: bytes) }
    }
}

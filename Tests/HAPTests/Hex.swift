/// Hex strings for test vectors.
enum Hex {
    /// Bytes from hex digits; white space (line breaks of long vectors) is ignored.
    static func bytes(_ text: String) -> [UInt8] {
        let digits = text.unicodeScalars.filter { !$0.properties.isWhitespace }.compactMap {
            UInt8(String($0), radix: 16)
        }
        precondition(digits.count.isMultiple(of: 2), "odd number of hex digits in a test vector")
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    /// Lowercase hex digits.
    static func string(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}

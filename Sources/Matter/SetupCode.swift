/// A Matter onboarding code as people type or scan it: the 11- or 21-digit manual pairing code
/// (dashes and spaces ignored; its last digit a Verhoeff check digit) or the QR code's `MT:`
/// payload. Apple Home's "Turn On Pairing Mode" gives a manual code of this kind.
public struct SetupCode: Sendable, Hashable, CustomStringConvertible {
    /// The code as the Matter Server takes it: the digits alone, or the `MT:` payload.
    public let text: String

    /// What is wrong with a code.
    public struct Problem: Error, Hashable, CustomStringConvertible {
        public let description: String
    }

    /// Reads and checks a code.
    /// - Throws: ``Problem`` saying what is wrong: not digits, a wrong length, a wrong check
    ///   digit, a QR payload with characters outside its alphabet.
    public init(_ given: String) throws(Problem) {
        let trimmed = given.trimmingWhitespace
        if trimmed.uppercased().hasPrefix("MT:") {
            let payload = trimmed.dropFirst(3).uppercased()
            guard payload.count >= 19, payload.allSatisfy({ Self.base38.contains($0) }) else {
                throw Problem(description: "a Matter QR code is MT: and at least 19 characters of 0-9, A-Z, - and .")
            }
            text = "MT:" + payload
            return
        }
        let digits = trimmed.filter { $0 != "-" && $0 != " " }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else {
            throw Problem(description: "a Matter setup code is 11 or 21 digits (dashes and spaces allowed) or an MT: QR code")
        }
        let values = digits.compactMap(\.wholeNumberValue)
        let expected = values[0] >= 4 ? 21 : 11 // the first digit's bit 2: vendor and product id follow
        guard values[0] <= 7, values.count == expected else {
            throw Problem(description: "a Matter manual code starting with \(values[0]) has \(values[0] > 7 ? "no valid length" : "\(expected) digits"), got \(values.count)")
        }
        guard Self.verhoeffChecks(values) else {
            throw Problem(description: "the Matter setup code's check digit does not match: mistyped?")
        }
        text = digits
    }

    public var description: String { text.hasPrefix("MT:") ? "a QR code" : "a \(text.count)-digit code" }

    private static let base38 = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-.")

    /// Whether the last digit is the Verhoeff check digit of the others.
    static func verhoeffChecks(_ digits: [Int]) -> Bool {
        var check = 0
        for (position, digit) in digits.reversed().enumerated() {
            check = multiplication[check][permutation[position % 8][digit]]
        }
        return check == 0
    }

    private static let multiplication: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
        [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1], [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
        [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ]
    private static let permutation: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
        [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1], [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
    ]
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

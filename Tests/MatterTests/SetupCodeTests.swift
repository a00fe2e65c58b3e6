import Matter
import Testing

@Suite struct SetupCodeTests {
    @Test("an 11-digit manual code with its Verhoeff check digit is taken, dashes and spaces ignored")
    func manualCode() throws {
        #expect(try SetupCode("34970112332").text == "34970112332")
        #expect(try SetupCode(" 3497-011-2332 ").text == "34970112332")
        #expect(try SetupCode("3497 011 2332").text == "34970112332")
    }

    @Test("a mistyped digit, a wrong length or letters are refused with a reason")
    func refusals() {
        #expect(throws: SetupCode.Problem.self) { try SetupCode("34970112331") }
        #expect(throws: SetupCode.Problem.self) { try SetupCode("3497011233") }
        #expect(throws: SetupCode.Problem.self) { try SetupCode("349701123320") }
        #expect(throws: SetupCode.Problem.self) { try SetupCode("3497O112332") }
        #expect(throws: SetupCode.Problem.self) { try SetupCode("") }
        #expect(throws: SetupCode.Problem.self) { try SetupCode("MT:short") }
        #expect(throws: SetupCode.Problem.self) { try SetupCode("MT:Y.K9042C00KA0648G0!") }
        do {
            _ = try SetupCode("34970112331")
        } catch {
            #expect(error.description.contains("check digit"))
        }
    }

    @Test("a QR payload is taken as MT: and its base-38 text, upper case")
    func qrPayload() throws {
        #expect(try SetupCode("MT:Y.K9042C00KA0648G00").text == "MT:Y.K9042C00KA0648G00")
        #expect(try SetupCode("mt:y.k9042c00ka0648g00").text == "MT:Y.K9042C00KA0648G00")
    }

    @Test("a 21-digit code (vendor and product id present: first digit 4 to 7) needs 21 digits")
    func longCode() throws {
        // The check digit computed over the 20 digits before it.
        let body = "74970112330000100002"
        let digits = body.compactMap(\.wholeNumberValue)
        let check = (0...9).first { SetupCodeTests.verhoeff(digits + [$0]) }!
        #expect(try SetupCode(body + String(check)).text.count == 21)
        #expect(throws: SetupCode.Problem.self) { try SetupCode("74970112332") }
    }

    /// An independent Verhoeff check (dihedral group D5 by its multiplication table), for the test.
    static func verhoeff(_ digits: [Int]) -> Bool {
        let d = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
                 [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1], [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
                 [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
        let p0 = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], p1 = [1, 5, 7, 6, 2, 8, 3, 0, 9, 4]
        var p = [p0, p1]
        for _ in 2..<8 { p.append(p.last!.map { p1[$0] }) }
        var c = 0
        for (i, digit) in digits.reversed().enumerated() { c = d[c][p[i % 8][digit]] }
        return c == 0
    }
}

import HomeGateConfig
import Testing

/// The Mosquitto password file the page signs people in against: hashes as Debian's
/// `mosquitto_passwd` (Mosquitto 2.0.11) wrote them.
@Suite struct PasswordFileTests {
    /// `mosquitto_passwd -b` for alice ("correct horse") and bob ("hunter2").
    static let text = """
        alice:$7$101$UXdrkZThK/n/L59t$gDeYJ2+tAbw2Lnfnu03rR/DygSEzzLB/gFfbxuyN+dGAhk2Rw2zdFwJLExFO9xruLO2CYJrEzsyEkuc9AAAi7A==
        bob:$7$101$U8vM3bDaC/ypYIH/$twLsfdHkzihwRYf+JSVPl5O2j9XwEcwgGyeItKfmrzcYqTInrmzVttW6+JonOfepqfYvyszA2O6psZsH9/gMDw==

        """

    @Test func acceptsThePasswordsMosquittoHashed() throws {
        let file = try PasswordFile.parse(Self.text, file: "homegate.passwd")
        #expect(file.verify(user: "alice", password: "correct horse"))
        #expect(file.verify(user: "bob", password: "hunter2"))
    }

    @Test func refusesWrongPasswordsAndUnknownNames() throws {
        let file = try PasswordFile.parse(Self.text, file: "homegate.passwd")
        #expect(!file.verify(user: "alice", password: "hunter2"))
        #expect(!file.verify(user: "alice", password: ""))
        #expect(!file.verify(user: "carol", password: "correct horse"))
    }

    @Test func aHashItCannotReadNamesTheLineAndNotTheHash() {
        #expect {
            try PasswordFile.parse("alice:$7$101$c2FsdA==$aGFzaA==\nbob:plaintext\n", file: "homegate.passwd")
        } throws: { error in
            let text = (error as? ConfigError)?.description ?? ""
            return text.hasPrefix("homegate.passwd:2: ") && text.contains("\"bob\"") && !text.contains("plaintext")
        }
    }
}

import Testing
import HAP

/// Expected values from Python `cryptography`'s HKDF (through HAP-python's `hap_hkdf`).
@Suite("HKDF-SHA-512")
struct HKDFTests {
    private let key = (0..<64).map { UInt8($0) }

    @Test func pairSetupEncryptKey() {
        let derived = HAPKeyDerivation.sha512(key, salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
        #expect(Hex.string(derived) == "b6335536162d6629e4c0bade85f1b712c85a364bab0dedb25014cfb814489273")
    }

    @Test func controlKeys() {
        let read = HAPKeyDerivation.sha512(key, salt: "Control-Salt", info: "Control-Read-Encryption-Key")
        let write = HAPKeyDerivation.sha512(key, salt: "Control-Salt", info: "Control-Write-Encryption-Key")
        #expect(Hex.string(read) == "c2f56f1912e2fc1f6604fd5bccab619272f687345aa4bce1c3c857421bd3b821")
        #expect(Hex.string(write) == "5a6cb19bcbe7d4df2dd8279f39562f7fae2dbf73eb5a4f98849c245c82b2fe96")
    }

    @Test func lengthIsAdjustable() {
        let long = HAPKeyDerivation.sha512(key, salt: "Control-Salt", info: "Control-Read-Encryption-Key", count: 64)
        #expect(long.count == 64)
        #expect(Hex.string(long.prefix(32)) == "c2f56f1912e2fc1f6604fd5bccab619272f687345aa4bce1c3c857421bd3b821")
    }
}

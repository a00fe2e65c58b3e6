import Crypto

/// HAP's key derivation: HKDF with SHA-512 (RFC 5869), salt and info given as ASCII labels.
public enum HAPKeyDerivation {
    /// Derives `count` bytes from `key` with HKDF-SHA-512.
    ///
    /// HAP's labels: `Pair-Setup-Encrypt-Salt`/`-Info` (pair-setup M5/M6 key),
    /// `Pair-Setup-Controller-Sign-Salt`/`-Info`, `Pair-Setup-Accessory-Sign-Salt`/`-Info`,
    /// `Pair-Verify-Encrypt-Salt`/`-Info`, and `Control-Salt` with `Control-Write-Encryption-Key`
    /// (controller to accessory) or `Control-Read-Encryption-Key` (accessory to controller).
    ///
    /// - Precondition: `count` is at most 255 * 64 bytes (HKDF's limit).
    public static func sha512(_ key: [UInt8], salt: String, info: String, count: Int = 32) -> [UInt8] {
        let derived = HKDF<SHA512>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: key),
            salt: Array(salt.utf8),
            info: Array(info.utf8),
            outputByteCount: count
        )
        return derived.withUnsafeBytes { Array($0) }
    }
}

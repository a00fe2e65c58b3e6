import CLibCrypto

/// A non-negative arbitrary-precision integer: an owned libcrypto `BIGNUM`.
///
/// Only SRP uses it, inside single calls; it is deliberately not `Sendable`. Every operation
/// returns a new number. Numbers made with `secret: true` (private keys, exponents, the premaster
/// secret) use libcrypto's constant-time exponentiation and are wiped when freed.
///
/// libcrypto fails these operations only when it cannot allocate memory or when given a zero
/// modulus; both are treated like a failed Swift allocation (a crash with a message), never as
/// errors a caller could handle.
final class BigNumber {
    /// The `BIGNUM *`.
    let pointer: OpaquePointer
    private let isSecret: Bool

    private init(pointer: OpaquePointer, secret: Bool) {
        self.pointer = pointer
        self.isSecret = secret
        if secret { BN_set_flags(pointer, BN_FLG_CONSTTIME) }
    }

    /// A new number, zero until an operation writes it.
    convenience init(secret: Bool = false) {
        guard let pointer = BN_new() else { BigNumber.fail("BN_new") }
        self.init(pointer: pointer, secret: secret)
    }

    /// The number whose big-endian bytes are `bytes` (leading zero bytes allowed; empty is 0).
    convenience init(bytes: [UInt8], secret: Bool = false) {
        let made = bytes.withUnsafeBufferPointer { buffer in
            BN_bin2bn(buffer.baseAddress, Int32(buffer.count), nil)
        }
        guard let pointer = made else { BigNumber.fail("BN_bin2bn") }
        self.init(pointer: pointer, secret: secret)
    }

    /// A small number.
    convenience init(_ value: UInt) {
        self.init()
        BigNumber.check(BN_set_word(pointer, value), "BN_set_word")
    }

    deinit {
        if isSecret { BN_clear_free(pointer) } else { BN_free(pointer) }
    }

    /// Whether the number is zero.
    var isZero: Bool { BN_is_zero(pointer) == 1 }

    /// The number of bytes of the big-endian form without leading zeros (0 for zero).
    var byteCount: Int { (Int(BN_num_bits(pointer)) + 7) / 8 }

    /// Big-endian bytes without leading zero bytes (empty for zero).
    var minimalBytes: [UInt8] { bytes(paddedTo: byteCount) }

    /// Big-endian bytes left-padded with zeros to `length`.
    ///
    /// - Precondition: the number fits in `length` bytes.
    func bytes(paddedTo length: Int) -> [UInt8] {
        precondition(byteCount <= length, "a \(byteCount)-byte number does not fit in \(length) bytes")
        var result = [UInt8](repeating: 0, count: length)
        let written = result.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(pointer, buffer.baseAddress, Int32(length))
        }
        precondition(Int(written) == length, "BN_bn2binpad wrote \(written) of \(length) bytes")
        return result
    }
}

// MARK: - Arithmetic

extension BigNumber {
    /// `self ^ exponent mod modulus` (constant-time when the exponent is secret).
    func power(_ exponent: BigNumber, modulo modulus: BigNumber, in context: BigNumberContext) -> BigNumber {
        let result = BigNumber(secret: isSecret || exponent.isSecret)
        BigNumber.check(
            BN_mod_exp(result.pointer, pointer, exponent.pointer, modulus.pointer, context.pointer), "BN_mod_exp")
        return result
    }

    /// `self * other mod modulus`.
    func multiplied(by other: BigNumber, modulo modulus: BigNumber, in context: BigNumberContext) -> BigNumber {
        let result = BigNumber(secret: isSecret || other.isSecret)
        BigNumber.check(
            BN_mod_mul(result.pointer, pointer, other.pointer, modulus.pointer, context.pointer), "BN_mod_mul")
        return result
    }

    /// `self + other mod modulus`.
    func adding(_ other: BigNumber, modulo modulus: BigNumber, in context: BigNumberContext) -> BigNumber {
        let result = BigNumber(secret: isSecret || other.isSecret)
        BigNumber.check(
            BN_mod_add(result.pointer, pointer, other.pointer, modulus.pointer, context.pointer), "BN_mod_add")
        return result
    }

    /// `self - other mod modulus`, in `0 ..< modulus`.
    func subtracting(_ other: BigNumber, modulo modulus: BigNumber, in context: BigNumberContext) -> BigNumber {
        let result = BigNumber(secret: isSecret || other.isSecret)
        BigNumber.check(
            BN_mod_sub(result.pointer, pointer, other.pointer, modulus.pointer, context.pointer), "BN_mod_sub")
        return result
    }

    /// `self * other` (not reduced).
    func multiplied(by other: BigNumber, in context: BigNumberContext) -> BigNumber {
        let result = BigNumber(secret: isSecret || other.isSecret)
        BigNumber.check(
            BN_mul(result.pointer, pointer, other.pointer, context.pointer), "BN_mul")
        return result
    }

    /// `self + other` (not reduced).
    func adding(_ other: BigNumber) -> BigNumber {
        let result = BigNumber(secret: isSecret || other.isSecret)
        BigNumber.check(BN_add(result.pointer, pointer, other.pointer), "BN_add")
        return result
    }

    /// `self mod modulus`, in `0 ..< modulus`.
    func reduced(modulo modulus: BigNumber, in context: BigNumberContext) -> BigNumber {
        let result = BigNumber(secret: isSecret)
        BigNumber.check(
            BN_nnmod(result.pointer, pointer, modulus.pointer, context.pointer), "BN_nnmod")
        return result
    }

    /// Whether `self mod modulus` is zero (SRP's check on the peer's public key).
    func isZero(modulo modulus: BigNumber, in context: BigNumberContext) -> Bool {
        reduced(modulo: modulus, in: context).isZero
    }

    /// Whether the two numbers are equal.
    func isEqual(to other: BigNumber) -> Bool {
        BN_cmp(pointer, other.pointer) == 0
    }
}

// MARK: - Failure

extension BigNumber {
    fileprivate static func check(_ result: Int32, _ function: String) {
        if result != 1 { fail(function) }
    }

    fileprivate static func fail(_ function: String) -> Never {
        fatalError("libcrypto's \(function) failed (out of memory or a zero modulus)")
    }
}

/// libcrypto's scratch space for big-number arithmetic (`BN_CTX`), reused across the operations
/// of one computation.
final class BigNumberContext {
    /// The `BN_CTX *`.
    let pointer: OpaquePointer

    init() {
        guard let pointer = BN_CTX_new() else {
            fatalError("libcrypto's BN_CTX_new failed (out of memory)")
        }
        self.pointer = pointer
    }

    deinit {
        BN_CTX_free(pointer)
    }
}

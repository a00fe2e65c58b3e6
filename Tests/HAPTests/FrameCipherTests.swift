import Crypto
import Foundation
import Testing
@testable import HAP

@Suite("Session frames")
struct FrameCipherTests {
    private let key = (0..<32).map { UInt8($0 * 3) }

    private static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
    }

    @Test(arguments: [0, 1, 1024, 1025, 5000])
    func roundTrip(size: Int) throws {
        var sealer = FrameSealer(key: key)
        var opener = FrameOpener(key: key)
        let plaintext = Self.pattern(size)
        let frames = (size + 1023) / 1024
        let sealed = sealer.seal(plaintext)
        #expect(sealed.count == size + frames * 18)
        #expect(try opener.open(sealed) == plaintext)
        #expect(sealer.frameCount == UInt64(frames))
        #expect(opener.frameCount == UInt64(frames))
        #expect(opener.bufferedByteCount == 0)
    }

    @Test func framesCarryTheirLengthLittleEndian() {
        var sealer = FrameSealer(key: key)
        let sealed = sealer.seal(Self.pattern(1025))
        #expect(Array(sealed[0..<2]) == [0x00, 0x04])
        #expect(Array(sealed[1042..<1044]) == [0x01, 0x00])
    }

    @Test func nonceIsFourZeroBytesAndTheLittleEndianCounter() {
        #expect(Array(FrameSealer.nonce(counter: 0x0102_0304_0506_0708)) == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
        #expect(Array(HAPChaCha.nonce("PS-Msg05")) == [0, 0, 0, 0] + Array("PS-Msg05".utf8))
    }

    @Test func secondFrameUsesCounterOne() throws {
        var sealer = FrameSealer(key: key)
        let first = sealer.seal(Array("first".utf8))
        let second = sealer.seal(Array("second".utf8))

        let manual = try ChaChaPoly.seal(
            Array("second".utf8), using: SymmetricKey(data: key),
            nonce: ChaChaPoly.Nonce(data: [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
            authenticating: [UInt8(6), 0])
        #expect(second == [6, 0] + Array(manual.ciphertext) + Array(manual.tag))

        var fresh = FrameOpener(key: key)
        #expect(throws: FrameError(reason: .frameAuthenticationFailed(counter: 0))) { try fresh.open(second) }
        var opener = FrameOpener(key: key)
        #expect(try opener.open(first + second) == Array("firstsecond".utf8))
    }

    @Test func everySplitOfATwoFrameStreamOpens() throws {
        var sealer = FrameSealer(key: key)
        let plaintext = Self.pattern(1100)
        let stream = sealer.seal(plaintext)
        for cut in 0...stream.count {
            var opener = FrameOpener(key: key)
            let head = try opener.open(stream[..<cut])
            let tail = try opener.open(stream[cut...])
            #expect(head + tail == plaintext, "cut at \(cut)")
            #expect(head.count == (cut == stream.count ? 1100 : cut >= 1042 ? 1024 : 0), "cut at \(cut)")
        }
    }

    @Test func byteByByteFeedingOpens() throws {
        var sealer = FrameSealer(key: key)
        let plaintext = Self.pattern(2100)
        var opener = FrameOpener(key: key)
        var opened: [UInt8] = []
        for byte in sealer.seal(plaintext) {
            opened += try opener.open([byte])
        }
        #expect(opened == plaintext)
    }

    @Test func tamperedBytesThrow() throws {
        var sealer = FrameSealer(key: key)
        let sealed = sealer.seal(Self.pattern(40))
        for index in 2..<sealed.count {
            var tampered = sealed
            tampered[index] ^= 0x01
            var opener = FrameOpener(key: key)
            #expect(throws: FrameError.self, "byte \(index)") { try opener.open(tampered) }
            #expect(throws: FrameError.self, "stays failed") { try opener.open(sealed) }
        }
    }

    @Test func tamperedLengthThrows() {
        var sealer = FrameSealer(key: key)
        var sealed = sealer.seal(Self.pattern(40))
        sealed[0] = 39
        var opener = FrameOpener(key: key)
        #expect(throws: FrameError(reason: .frameAuthenticationFailed(counter: 0))) { try opener.open(sealed) }
    }

    @Test func frameLongerThan1024Throws() {
        var opener = FrameOpener(key: key)
        let error = #expect(throws: FrameError.self) { try opener.open([0x01, 0x04]) }
        #expect(error == FrameError(reason: .frameTooLong(length: 1025)))
        #expect(error?.description == "encrypted frame declares 1025 bytes, the limit is 1024")
    }

    @Test func wrongKeyThrows() {
        var sealer = FrameSealer(key: key)
        var opener = FrameOpener(key: [UInt8](repeating: 9, count: 32))
        #expect(throws: FrameError.self) { try opener.open(sealer.seal([1, 2, 3])) }
    }

    // MARK: Known answers from HAP-python 5.0.0's HAPCrypto (pyhap/hap_crypto.py)

    /// HKDF(shared = 100...131, "Control-Salt", "Control-Read-Encryption-Key").
    private let readKey = Hex.bytes("491a1c8ac0c2fcee724aa9c6d0d905dc5aa6c221b0f140417ee0eac5ac6c897a")
    /// HKDF(shared = 100...131, "Control-Salt", "Control-Write-Encryption-Key").
    private let writeKey = Hex.bytes("956bcb5c0786454cea397acca939907bbd896debcd14ac02c54e0794fbda72b7")

    @Test func sessionKeysAreHAPPythons() {
        let shared = (100..<132).map { UInt8($0) }
        #expect(HAPKeyDerivation.sha512(shared, salt: "Control-Salt", info: "Control-Read-Encryption-Key") == readKey)
        #expect(HAPKeyDerivation.sha512(shared, salt: "Control-Salt", info: "Control-Write-Encryption-Key") == writeKey)
    }

    /// The accessory's frames 0, 1 and 2 as HAP-python seals them.
    @Test func accessoryFramesMatchHAPPython() throws {
        let response = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        let frame0 = Hex.bytes("""
            1b008384ea3a7052ec82ff8c4771a6ff81012bd57162d859a66e5d4f95832463d78ebfc5dc9fe430a3423968b7
            """)
        var sealer = FrameSealer(key: readKey)
        #expect(sealer.seal(response) == frame0)
        let big = Self.pattern(1030)
        let frames12 = sealer.seal(big)
        #expect(frames12.count == 1066)
        #expect(Hex.string(SHA256.hash(data: frames12))
            == "c06003fdb4afee82034843d54b4dfcdf474d2c9bf11d411ee3b41a025fe9ab95")
        var opener = FrameOpener(key: readKey)
        #expect(try opener.open(frame0 + frames12) == response + big)
    }

    /// Controller frames 0 and 1 that HAP-python's decrypt accepts.
    @Test func controllerFramesMatchWhatHAPPythonOpens() {
        let request = Array("GET /accessories HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var sealer = FrameSealer(key: writeKey)
        #expect(Hex.string(sealer.seal(request)) == """
            2600c4df152f9c33eb005d3785da2e6b558576baf6171ff9e3dfddc1c10672a2316358ae21677f665ca4be22513756b0\
            ed5c91f935d94a9c
            """)
        #expect(Hex.string(sealer.seal(request)) == """
            26009807ae256c12ef876e95b61f829a75a26238c8b6b2e4d42b5c7e56fc6b209bc6f9aa4d5ca77de3498142b570b07d\
            cef759ba233c6daa
            """)
    }

    // MARK: Pair-setup and pair-verify messages

    @Test func singleMessageKnownAnswer() throws {
        let key = (0..<32).map { UInt8($0) }
        let sealed = HAPChaCha.seal(Array("hello, accessory".utf8), key: key, nonce: "PS-Msg05")
        #expect(Hex.string(sealed) == "5c9fee0106800d47d74cb95f0126828331a5a748fc68b94f32393fb4ef55c855")
        #expect(try HAPChaCha.open(sealed, key: key, nonce: "PS-Msg05") == Array("hello, accessory".utf8))
        #expect(throws: FrameError(reason: .messageAuthenticationFailed(nonce: "PS-Msg06"))) {
            try HAPChaCha.open(sealed, key: key, nonce: "PS-Msg06")
        }
        #expect(throws: FrameError(reason: .messageTooShort(length: 15))) {
            try HAPChaCha.open(Array(sealed.prefix(15)), key: key, nonce: "PS-Msg05")
        }
        #expect(try HAPChaCha.open(HAPChaCha.seal([], key: key, nonce: "PV-Msg02"), key: key, nonce: "PV-Msg02") == [])
    }

    /// A thousand request/response round trips through both directions' frames and the parser
    /// stay in step (counters, buffering). How long they take is the benchmark's business
    /// (`scripts/bench`), not a test's.
    @Test func manyRoundTripsStayInStep() throws {
        var controller = FrameSealer(key: writeKey)
        var accessory = FrameOpener(key: writeKey)
        var accessorySealer = FrameSealer(key: readKey)
        var controllerOpener = FrameOpener(key: readKey)
        var parser = HTTPResponseParser()
        let request = HTTPRequest(method: "GET", path: "/characteristics?id=2.10,3.10")
        let body = Array(#"{"characteristics":[{"aid":2,"iid":10,"value":1},{"aid":3,"iid":10,"value":0}]}"#.utf8)
        let response = Array("HTTP/1.1 200 OK\r\nContent-Type: application/hap+json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        var parsed = 0
        for _ in 0..<1000 {
            #expect(try accessory.open(controller.seal(request.encoded(host: "bridge"))) == request.encoded(host: "bridge"))
            parsed += try parser.feed(controllerOpener.open(accessorySealer.seal(response))).count
        }
        #expect(parsed == 1000)
    }
}

import Testing
@testable import HAP

/// How a `POST /resource` answer becomes an image or an error.
@Suite struct ResourceResponseTests {
    private let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]

    @Test func aJPEGIsTheImage() throws {
        let response = HTTPMessage(kind: .response, status: 200, reason: "OK", headers: [.init(name: "content-type", value: "image/jpeg")], body: jpeg)
        #expect(try Client.image(in: response) == jpeg)
    }

    @Test func aRefusalCarriesTheHAPStatus() {
        let body = Array(#"{"status": -70402}"#.utf8)
        let response = HTTPMessage(kind: .response, status: 500, reason: "Internal Server Error", body: body)
        let error = #expect(throws: HAPError.self) { try Client.image(in: response) }
        #expect(error?.kind == .status)
        #expect(error?.status == .communicationFailure)
    }

    @Test func anythingButAJPEGIsMalformed() {
        let html = HTTPMessage(kind: .response, status: 200, reason: "OK", headers: [.init(name: "Content-Type", value: "text/html")], body: jpeg)
        #expect(throws: HAPError.self) { try Client.image(in: html) }
        let empty = HTTPMessage(kind: .response, status: 200, reason: "OK", headers: [.init(name: "Content-Type", value: "image/jpeg")])
        let error = #expect(throws: HAPError.self) { try Client.image(in: empty) }
        #expect(error?.kind == .malformed)
    }
}

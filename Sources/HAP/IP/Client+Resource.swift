import Wire

extension Client {
    /// A camera's still image (`POST /resource` with `{"aid": A, "resource-type": "image",
    /// "image-width": W, "image-height": H}`), answered with `image/jpeg` bytes.
    ///
    /// `aid` names the camera on a bridge; an accessory that is not a bridge ignores it (1 is
    /// its own aid). The size is what the controller would like: cameras pick the nearest they
    /// can make, so the image may be of another size.
    /// - Throws: ``HAPError``: ``HAPError/Kind/status`` when the accessory refuses (HAP-python
    ///   answers HTTP 500 with status -70402 when the accessory is no camera),
    ///   ``HAPError/Kind/malformed`` when the answer is not a JPEG, or the connection's errors.
    public func snapshot(aid: Int, width: Int, height: Int, timeout: Duration = Client.defaultTimeout) async throws(HAPError) -> [UInt8] {
        try requireSession("asking for a snapshot")
        let body = JSON.object([
            "aid": .int(Int64(aid)), "resource-type": "image",
            "image-width": .int(Int64(width)), "image-height": .int(Int64(height)),
        ])
        let request = HTTPRequest(method: "POST", path: "/resource", contentType: "application/hap+json", body: body.encoded())
        let response = try await self.request(request, timeout: timeout)
        return try Self.image(in: response)
    }

    /// The JPEG in a `/resource` answer, or why there is none.
    static func image(in response: HTTPMessage) throws(HAPError) -> [UInt8] {
        guard response.status == 200 else {
            let status = (try? JSON.parse(response.body))?["status"]?.int.flatMap { HAPStatus(rawValue: Int($0)) }
            let detail = status.map { ": \($0)" } ?? ""
            throw HAPError(.status, "POST /resource: the accessory answered HTTP \(response.status) \(response.reason)\(detail)", status: status)
        }
        if let type = response.header("Content-Type"), !type.lowercased().hasPrefix("image/jpeg") {
            throw HAPError(.malformed, "POST /resource: the accessory answered \(type), not image/jpeg")
        }
        // A JPEG starts with SOI (FF D8); an empty body is a camera that had no image.
        guard response.body.count >= 2, response.body[0] == 0xFF, response.body[1] == 0xD8 else {
            throw HAPError(.malformed, "POST /resource: the accessory's answer (\(response.body.count) bytes) is not a JPEG image")
        }
        return response.body
    }
}

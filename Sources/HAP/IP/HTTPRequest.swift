/// A request to an accessory, encoded as HTTP/1.1.
public struct HTTPRequest: Sendable {
    /// `GET`, `PUT` or `POST`.
    public var method: String
    /// The path with its query, such as `/characteristics?id=1.9`.
    public var path: String
    /// Header fields besides `Host` and `Content-Length`, which ``encoded(host:)`` writes.
    public var headers: [(String, String)]
    /// The body, maybe empty.
    public var body: [UInt8]

    /// A request; `contentType` becomes a `Content-Type` header (HAP uses
    /// `application/pairing+tlv8` and `application/hap+json`).
    public init(method: String, path: String, contentType: String? = nil, body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = contentType.map { [("Content-Type", $0)] } ?? []
        self.body = body
    }

    /// The request's bytes: request line, `Host`, the headers, `Content-Length` when there is a
    /// body (or the method is `PUT` or `POST`), an empty line, the body.
    public func encoded(host: String) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        if !body.isEmpty || method == "PUT" || method == "POST" {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var bytes: [UInt8] = []
        bytes.reserveCapacity(head.utf8.count + body.count)
        bytes.append(contentsOf: head.utf8)
        bytes.append(contentsOf: body)
        return bytes
    }
}

import Hummingbird
import NIOCore

/// The page's files, built into the binary from `Sources/WebUI/Assets` (the EmbedAssets plugin).
enum Assets {
    /// The file `name` with its content type, or 404.
    static func response(for name: String) -> Response {
        guard let text = EmbeddedAssets.files[name] else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "not found\n")))
        }
        return Response(status: .ok, headers: [.contentType: contentType(of: name), .cacheControl: "no-cache"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The content type of a file by its extension.
    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "json": "application/json"
        default: "text/plain; charset=utf-8"
        }
    }
}

import Foundation
import Hummingbird
import NIOCore

/// The page's files, built into the binary from `Sources/WebUI/Assets` (the EmbedAssets plugin).
enum Assets {
    /// The file `name` with its content type, or 404.
    static func response(for name: String) -> Response {
        guard let body = files[name] else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "not found\n")))
        }
        return Response(status: .ok, headers: [.contentType: contentType(of: name), .cacheControl: "no-cache"],
                        body: ResponseBody(byteBuffer: body))
    }

    /// Every file's bytes by its name: the text files as they are, the others (the PNG icons)
    /// decoded from their base64 once.
    static let files: [String: ByteBuffer] = {
        var files = EmbeddedAssets.files.mapValues { ByteBuffer(string: $0) }
        for (name, base64) in EmbeddedAssets.binaryFiles {
            guard let bytes = Data(base64Encoded: base64) else { preconditionFailure("asset-embed wrote bad base64 for \(name)") }
            files[name] = ByteBuffer(bytes: bytes)
        }
        return files
    }()

    /// The content type of a file by its extension.
    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        default: "text/plain; charset=utf-8"
        }
    }
}

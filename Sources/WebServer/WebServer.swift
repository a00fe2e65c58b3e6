import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// The gateway's HTTP server, on hummingbird: `/metrics` (Prometheus text format) and `/health`
/// (200 while the gateway is connected to the broker, else 503). A service of the gateway's
/// service group: it binds when the group starts and drains its connections on shutdown.
public struct WebServer: Service {
    /// Where it listens.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int

        public init(host: String = "127.0.0.1", port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// What the endpoints answer, asked at each request.
    public struct Endpoints: Sendable {
        /// The Prometheus exposition.
        public var metrics: @Sendable () async -> [UInt8]
        /// Whether the gateway is healthy (connected to its broker).
        public var health: @Sendable () async -> Bool

        public init(metrics: @escaping @Sendable () async -> [UInt8], health: @escaping @Sendable () async -> Bool) {
            self.metrics = metrics
            self.health = health
        }
    }

    /// The `Content-Type` of `/metrics`.
    public static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    private let application: Application<RouterResponder<BasicRequestContext>>

    /// - Parameter onListening: called with the port once the server listens (the configured
    ///   one, or the one the system chose for port 0).
    public init(configuration: Configuration, endpoints: Endpoints, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) {
        let router = Router()
        router.add(middleware: ReadOnlyMethods())
        let metrics: @Sendable () async -> Response = {
            Self.text(.ok, await endpoints.metrics(), contentType: Self.metricsContentType)
        }
        let health: @Sendable () async -> Response = {
            await endpoints.health()
                ? Self.text(.ok, Array("ok\n".utf8))
                : Self.text(.serviceUnavailable, Array("not connected to the broker\n".utf8))
        }
        let notFound: @Sendable () -> Response = { Self.text(.notFound, Array("not found; try /metrics or /health\n".utf8)) }
        router.get("/metrics") { _, _ in await metrics() }
        router.get("/health") { _, _ in await health() }
        router.get("**") { _, _ in notFound() }
        router.head("/metrics") { _, _ in await metrics().withoutBody() }
        router.head("/health") { _, _ in await health().withoutBody() }
        router.head("**") { _, _ in notFound().withoutBody() }
        application = Application(
            router: router,
            server: .http1(configuration: Self.http1),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "homegate"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    /// Idle keep-alive connections are closed after 30 s; a request head is at most 8 KiB a line,
    /// 16 KiB and 100 fields in all (a bigger one is answered 400 and the connection closed).
    /// The web page's server (WebUI) has the same limits.
    public static let http1 = HTTP1Channel.Configuration(
        idleTimeout: .seconds(30),
        httpDecoderConfiguration: .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 100)
    )

    public func run() async throws {
        try await application.run()
    }

    private static func text(_ status: HTTPResponse.Status, _ body: [UInt8], contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Answers 405 (with `Allow: GET, HEAD`) to every method but GET and HEAD: the server only reads.
struct ReadOnlyMethods<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD", .contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: Array("only GET and HEAD are served\n".utf8))))
        }
        return try await next(request, context)
    }
}

extension Response {
    /// The same status and headers, no body (the answer to HEAD).
    func withoutBody() -> Response {
        var headers = self.headers
        headers[.contentLength] = nil
        return Response(status: status, headers: headers, body: ResponseBody())
    }
}

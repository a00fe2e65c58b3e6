import Hummingbird
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
        router.get("/metrics") { _, _ -> Response in
            Self.text(.ok, await endpoints.metrics(), contentType: Self.metricsContentType)
        }
        router.get("/health") { _, _ -> Response in
            await endpoints.health()
                ? Self.text(.ok, Array("ok\n".utf8))
                : Self.text(.serviceUnavailable, Array("not connected to the broker\n".utf8))
        }
        application = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "homegate"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    public func run() async throws {
        try await application.run()
    }

    private static func text(_ status: HTTPResponse.Status, _ body: [UInt8], contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

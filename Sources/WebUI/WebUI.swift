import HomeGateConfig
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import MQTT
import NIOCore
import NIOSSL
import ServiceLifecycle
import WebServer

/// The web page (`ui:` in the configuration; docs/web.md): a hummingbird server that serves the
/// page (built into the binary), signs people in against the users and Mosquitto password files,
/// sends each open page what happens under the base topic over a WebSocket (``LiveFeed``), and
/// publishes the page's sets and requests after checking them against the person's role and the
/// session's CSRF token. A service of the gateway's group.
public struct WebUI: Service {
    /// Where it listens and who may come in.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// The users file and the Mosquitto password file; nil: no sign-in, everyone is an admin.
        public var signIn: (usersFile: String, passwordFile: String)?
        /// HTTPS: the PEM certificate chain and private key; nil: plain HTTP.
        public var tls: (certificateFile: String, keyFile: String)?
        /// How long a sign-in lasts without use.
        public var sessionTimeout: Duration
        /// Backup and restore from the page (admins only); nil: not offered.
        public var maintenance: Maintenance?

        public init(host: String = "127.0.0.1", port: Int, signIn: (usersFile: String, passwordFile: String)? = nil,
                    tls: (certificateFile: String, keyFile: String)? = nil, sessionTimeout: Duration = .seconds(24 * 3600),
                    maintenance: Maintenance? = nil) {
            self.maintenance = maintenance
            self.host = host
            self.port = port
            self.signIn = signIn
            self.tls = tls
            self.sessionTimeout = sessionTimeout
        }
    }

    /// Why the server cannot start.
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    private let application: Application<RouterResponder<BasicRequestContext>>

    /// - Parameter onListening: called with the port once the server listens.
    /// - Throws: ``StartError`` when the TLS certificate or key cannot be loaded.
    public init(configuration: Configuration, feed: LiveFeed, baseTopic: TopicName, logger: Logger,
                onListening: @escaping @Sendable (Int) async -> Void = { _ in }) throws(StartError) {
        let endpoints = Endpoints(
            feed: feed, sessions: Sessions(timeout: configuration.sessionTimeout),
            signIn: configuration.signIn.map { SignIn(usersFile: $0.usersFile, passwordFile: $0.passwordFile) },
            rules: PublishRules(baseTopic: baseTopic.string), maintenance: configuration.maintenance, baseTopic: baseTopic.string,
            secureCookies: configuration.tls != nil, logger: logger
        )
        let http = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: WebServer.http1,
            ws: WebSocketServerConfiguration(maxFrameSize: 16 * 1024, autoPing: .enabled(timePeriod: .seconds(30)))
        )
        var server = HTTPServerBuilder.http1WebSocketUpgrade(webSocketRouter: endpoints.webSocketRouter(), configuration: http)
        if let tls = configuration.tls {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(tls.certificateFile).map { NIOSSLCertificateSource.certificate($0) }
                let key = try NIOSSLPrivateKey(file: tls.keyFile, format: .pem)
                server = try .tls(server, tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
            } catch {
                throw StartError(description: "ui.tls: cannot load \(tls.certificateFile) and \(tls.keyFile): \(error)")
            }
        }
        application = Application(
            router: endpoints.router(),
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "homegate"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    public func run() async throws {
        try await application.run()
    }
}

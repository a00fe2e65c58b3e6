import Foundation
import HomeGateConfig
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import MQTT
import NIOCore
import Timing
import Wire

/// The web page's HTTP side (docs/web.md): the assets, `/api/session`, `/api/login`,
/// `/api/logout`, `/api/publish`, `/api/backup`, `/api/restore`, and the `/ws` WebSocket. Every request is checked here: the
/// session (its cookie), for changes the CSRF token and the Origin, for publishes the role.
struct Endpoints: Sendable {
    let feed: LiveFeed
    let sessions: Sessions
    /// Nil: no sign-in; every browser gets an admin session.
    let signIn: SignIn?
    let rules: PublishRules
    /// The gateway's backup and restore; nil: the page offers neither.
    let maintenance: Maintenance?
    let baseTopic: String
    /// Cookies marked `Secure` (the page is served over HTTPS).
    let secureCookies: Bool
    let logger: Logger

    static let cookieName = "homegate_session"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    /// The largest request body taken (a sign-in, a publish).
    static let bodyLimit = 64 * 1024

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: SecurityHeaders())
        router.get("/") { _, _ in Assets.response(for: "index.html") }
        router.get("/assets/:name") { _, context in Assets.response(for: context.parameters.get("name") ?? "") }
        router.get("/api/session") { request, _ in await session(request) }
        router.post("/api/login") { request, _ in await login(request) }
        router.post("/api/logout") { request, _ in await logout(request) }
        router.post("/api/publish") { request, _ in await publish(request) }
        router.get("/api/backup") { request, _ in await downloadBackup(request) }
        router.post("/api/restore") { request, _ in await restoreBackup(request) }
        router.get("/ws") { _, _ in Self.json(.badRequest, ["error": "invalid-request", "message": "/ws takes WebSocket connections"]) }
        return router
    }

    // MARK: - Sessions

    private func session(_ request: Request) async -> Response {
        if let (_, session) = await currentSession(request) { return sessionResponse(session, base: baseTopic, login: signIn != nil) }
        guard signIn == nil else { return Self.json(.unauthorized, ["error": "login-required", "message": "sign in first"]) }
        let (token, session) = await sessions.start(user: nil, role: .admin)
        var response = sessionResponse(session, base: baseTopic, login: false)
        response.setCookie(cookie(token))
        return response
    }

    private func login(_ request: Request) async -> Response {
        guard originMatches(request) else { return Self.forbidden("the request comes from another site") }
        guard let signIn else { return Self.json(.badRequest, ["error": "invalid-request", "message": "this gateway's page needs no sign-in"]) }
        guard let body = await Self.jsonObject(request), let user = body["user"]?.string, let password = body["password"]?.string else {
            return Self.json(.badRequest, ["error": "invalid-request", "message": "send {\"user\": ..., \"password\": ...}"])
        }
        switch await signIn.check(user: user, password: password) {
        case .accepted(let role):
            let (token, session) = await sessions.start(user: user, role: role)
            logger.info("web page: \(user) signed in (\(role.rawValue))")
            var response = sessionResponse(session, base: baseTopic, login: true)
            response.setCookie(cookie(token))
            return response
        case .refused:
            logger.notice("web page: a sign-in as \(user) was refused (wrong name or password)")
            return Self.json(.unauthorized, ["error": "login-failed", "message": "wrong user name or password"])
        case .lockedOut:
            return Self.json(.tooManyRequests, ["error": "too-many-attempts", "message": "too many wrong passwords for \(user); try again in \(SignIn.lockout.wholeSeconds) s"])
        case .unavailable(let problem):
            logger.error("web page: cannot check a sign-in: \(problem)")
            return Self.json(.internalServerError, ["error": "unavailable", "message": "the gateway cannot read its users or password file; see its log"])
        }
    }

    private func logout(_ request: Request) async -> Response {
        guard let (token, session) = await currentSession(request) else { return Self.json(.ok, [:]) }
        if let refusal = changeRefusal(request, session) { return refusal }
        await sessions.end(token)
        await feed.endSession(token)
        var response = Self.json(.ok, [:])
        response.setCookie(Cookie(name: Self.cookieName, value: "", maxAge: 0, path: "/", secure: secureCookies, httpOnly: true, sameSite: .strict))
        return response
    }

    // MARK: - Publishing

    private func publish(_ request: Request) async -> Response {
        guard let (_, session) = await currentSession(request) else {
            return Self.json(.unauthorized, ["error": "login-required", "message": "sign in first"])
        }
        if let refusal = changeRefusal(request, session) { return refusal }
        guard let body = await Self.jsonObject(request), let topicText = body["topic"]?.string, let payload = body["payload"]?.string else {
            return Self.json(.badRequest, ["error": "invalid-request", "message": "send {\"topic\": ..., \"payload\": ...} (payload as text)"])
        }
        let topic: TopicName
        do {
            topic = try TopicName(topicText)
        } catch {
            return Self.json(.badRequest, ["error": "invalid-request", "message": "topic: \(error)"])
        }
        if let problem = rules.problem(publishing: topic, as: session.role) {
            logger.notice("web page: refused a publish on \(topic) by \(session.user ?? "the page") (\(session.role.rawValue))")
            return Self.forbidden(problem)
        }
        guard await feed.isConnected else {
            return Self.json(.serviceUnavailable, ["error": "broker-unavailable", "message": "the gateway's page is not connected to the broker"])
        }
        do {
            try await feed.publish(topic: topic, payload: Array(payload.utf8))
        } catch {
            return Self.json(.serviceUnavailable, ["error": "broker-unavailable", "message": "the broker did not take it: \(error)"])
        }
        return Self.json(.accepted, ["ok": true])
    }

    /// Why a change is refused (a forbidden response), or nil: the CSRF token must be the
    /// session's and the Origin, when the browser sends one, this server.
    func changeRefusal(_ request: Request, _ session: Sessions.Session) -> Response? {
        guard originMatches(request) else { return Self.forbidden("the request comes from another site") }
        guard let token = request.headers[Self.csrfHeader], Sessions.same(token, session.csrf) else {
            return Self.forbidden("the X-CSRF-Token header is missing or wrong; reload the page")
        }
        return nil
    }

    // MARK: - Helpers

    /// The session the request's cookie names, with its token.
    func currentSession(_ request: Request) async -> (token: String, session: Sessions.Session)? {
        guard let token = request.cookies[Self.cookieName]?.value, !token.isEmpty,
              let session = await sessions.session(token) else { return nil }
        return (token, session)
    }

    /// Whether the `Origin` header, if any, names this server (as the `Host` header does).
    func originMatches(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority, let url = URL(string: origin), let originHost = url.host else { return false }
        let originAuthority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return originAuthority.lowercased() == host.lowercased()
    }

    private func cookie(_ token: String) -> Cookie {
        Cookie(name: Self.cookieName, value: token, path: "/", secure: secureCookies, httpOnly: true, sameSite: .strict)
    }

    private func sessionResponse(_ session: Sessions.Session, base: String, login: Bool) -> Response {
        Self.sessionResponse(session, base: base, login: login, backup: maintenance != nil && session.role == .admin)
    }

    private static func sessionResponse(_ session: Sessions.Session, base: String, login: Bool, backup: Bool) -> Response {
        json(.ok, ["user": session.user.map(JSON.string) ?? .null, "role": .string(session.role.rawValue), "csrf": .string(session.csrf),
                   "base": .string(base), "login": .bool(login), "backup": .bool(backup),
                   "topics": TopicGrammar.json])
    }

    static func forbidden(_ message: String) -> Response {
        json(.forbidden, ["error": "forbidden", "message": .string(message)])
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: JSON]) -> Response {
        Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSON.object(object).encoded())))
    }

    /// The request's body as a JSON object, or nil (too big, not JSON, not an object).
    static func jsonObject(_ request: Request) async -> [String: JSON]? {
        guard let buffer = try? await request.body.collect(upTo: bodyLimit) else { return nil }
        return (try? JSON.parse(Array(buffer.readableBytesView)))?.object
    }
}

/// Headers on every answer: no framing by other sites, no content sniffing, no referrer, and a
/// content security policy that allows only this server's own scripts and connections.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }
}

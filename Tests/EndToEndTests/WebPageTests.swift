import Foundation
import Testing
import TestSupport

/// The web page's server side through the real binary, a real Mosquitto and curl: sign-in against
/// the users file and a password file made by `homegate passwd`, the cookie, CSRF and Origin
/// checks, and the role check of every publish (the browser itself: Tests/WebUI, scripts/test-web-ui).
@Suite(.serialized, .startsProcesses) struct WebPageTests {
    /// What curl got: the status, the headers (lower-cased names) and the body.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    /// A browser's side: curl with a cookie jar of its own.
    struct Browser {
        let base: String
        let jar: String
        var extraCurl: [String] = []

        /// - Parameter maxSeconds: cut the transfer after this long (an upgraded connection never ends).
        func get(_ path: String, headers: [String] = [], maxSeconds: Int? = nil) async throws -> Answer {
            try await call(["-X", "GET"] + headers.flatMap { ["-H", $0] } + (maxSeconds.map { ["-m", "\($0)"] } ?? []), path,
                           acceptTimeout: maxSeconds != nil)
        }

        func post(_ path: String, _ body: String, headers: [String] = []) async throws -> Answer {
            try await call(["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body] + headers.flatMap { ["-H", $0] }, path)
        }

        func csrf() async throws -> String {
            try #require(try await get("/api/session").json["csrf"] as? String)
        }

        private func call(_ arguments: [String], _ path: String, acceptTimeout: Bool = false) async throws -> Answer {
            let curl = try Executable.locate("curl", install: "apt-get install curl")
            let process = try ChildProcess(curl, ["-s", "-i", "-b", jar, "-c", jar] + extraCurl + arguments + [base + path])
            let status = try await process.waitForExit()
            // 28: curl's "operation timed out", what -m gives on a connection that stays open.
            #expect(status == 0 || (acceptTimeout && status == 28), "curl \(path): \(process.output.value)")
            return Self.parse(process.output.value)
        }

        static func parse(_ text: String) -> Answer {
            let parts = text.components(separatedBy: "\r\n\r\n")
            let head = parts.first ?? ""
            var lines = head.components(separatedBy: "\r\n")
            let status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "") ?? 0
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { $0 + "\n" + value } ?? value
            }
            return Answer(status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
    }

    /// The demo home with its page on a free port; with `signIn`, alice (admin, "correct horse")
    /// and bob (guest, "hunter2") in a users file and a password file made by `homegate passwd`.
    static func start(signIn: Bool, tls: Certificates? = nil) async throws -> (GatewayFixture, port: Int) {
        let port = try FreePort.next()
        let folder = try TemporaryDirectory.make(prefix: "webpage")
        var section = "ui:\n  port: \(port)\n"
        if signIn {
            try "gateway_user: homegate\nusers:\n  - name: alice\n    role: admin\n  - name: bob\n    role: guest\n"
                .write(to: folder.appendingPathComponent("users.yml"), atomically: true, encoding: .utf8)
            for (user, password) in [("alice", "correct horse"), ("bob", "hunter2")] {
                let passwd = try HomeGateProcess(["passwd", "--file", folder.appendingPathComponent("homegate.passwd").path, "--user", user,
                                                  "--password-env", "WEB_PASSWORD"], environment: ["WEB_PASSWORD": password])
                #expect(try await passwd.waitForExit() == 0, "\(passwd.output)")
            }
            section += "  users: users.yml\n  passwords: homegate.passwd\n"
        }
        if let tls {
            section += "  tls:\n    cert_file: \(tls.serverCertificateFile)\n    key_file: \(tls.serverKeyFile)\n"
        }
        let fixture = try await GatewayFixture.start(config: GatewayFixture.demoText(appending: section), folder: folder)
        try await fixture.gateway.waitForOutput(containing: "web page on")
        try await fixture.gateway.waitForOutput(containing: "web page: connected to the broker")
        return (fixture, port)
    }

    static func browser(_ port: Int, scheme: String = "http") throws -> Browser {
        Browser(base: "\(scheme)://127.0.0.1:\(port)", jar: try TemporaryDirectory.make(prefix: "jar").appendingPathComponent("cookies").path)
    }

    static let lamp = "homegate/demo-home/living-room/floor-lamp/lightbulb/on"

    @Test("the page, built into the binary, with a content security policy")
    func servesThePage() async throws {
        let (fixture, port) = try await Self.start(signIn: false)
        let browser = try Self.browser(port)
        let page = try await browser.get("/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains("/assets/app.js"))
        #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(page.headers["x-frame-options"] == "DENY")
        let script = try await browser.get("/assets/app.js")
        #expect(script.status == 200)
        #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(try await browser.get("/assets/nothing.js").status == 404)
        // The web app manifest and its PNG icon (embedded as base64, served as bytes).
        #expect(page.headers["content-security-policy"]?.contains("manifest-src 'self'") == true)
        let manifest = try await browser.get("/assets/manifest.webmanifest")
        #expect(manifest.status == 200)
        #expect(manifest.headers["content-type"] == "application/manifest+json")
        #expect(manifest.body.contains("\"display\": \"standalone\""))
        let icon = try await browser.get("/assets/icon-192.png")
        #expect(icon.status == 200)
        #expect(icon.headers["content-type"] == "image/png")
        try await fixture.stop()
    }

    @Test("without users every browser is an admin, and still needs the CSRF token to publish")
    func noSignIn() async throws {
        let (fixture, port) = try await Self.start(signIn: false)
        let browser = try Self.browser(port)
        let session = try await browser.get("/api/session")
        #expect(session.status == 200)
        #expect(session.json["role"] as? String == "admin")
        #expect(session.json["login"] as? Bool == false)
        // The topic grammar comes with the session: the page's scripts spell no level or verb.
        let topics = try #require(session.json["topics"] as? [String: Any], "\(session.json)")
        #expect((topics["levels"] as? [String: String])?["request"] == "$request" && (topics["verbs"] as? [String: String])?["set"] == "set", "\(topics)")
        let cookie = try #require(session.headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && !cookie.contains("Secure"), "\(cookie)")
        let set = #"{"topic": "\#(Self.lamp)/set", "payload": "{\"value\": true, \"id\": \"page-1\"}"}"#
        #expect(try await browser.post("/api/publish", set).status == 403, "no CSRF token")
        let csrf = try await browser.csrf()
        #expect(try await browser.post("/api/publish", set, headers: ["X-CSRF-Token: \(csrf)", "Origin: http://evil.example"]).status == 403)
        #expect(try await browser.post("/api/publish", set, headers: ["X-CSRF-Token: \(csrf)"]).status == 202)
        let ack = try await fixture.watcher.inbox.first { $0.topic.string == "\(Self.lamp)/set/result" }
        #expect(ack.payloadString.contains(#""id":"page-1""#) && ack.payloadString.contains(#""ok":true"#), "\(ack.payloadString)")
        try await fixture.stop()
    }

    @Test("sign-in: wrong passwords refused, then locked out for the name; a right one gives the role")
    func signIn() async throws {
        let (fixture, port) = try await Self.start(signIn: true)
        let browser = try Self.browser(port)
        #expect(try await browser.get("/api/session").status == 401)
        #expect(try await browser.post("/api/login", #"{"user": "alice", "password": "correct horse"}"#).json["role"] as? String == "admin")
        #expect(try await browser.get("/api/session").json["user"] as? String == "alice")
        let mallory = try Self.browser(port)
        for _ in 1...5 {
            #expect(try await mallory.post("/api/login", #"{"user": "bob", "password": "guess"}"#).status == 401)
        }
        let locked = try await mallory.post("/api/login", #"{"user": "bob", "password": "hunter2"}"#)
        #expect(locked.status == 429, "\(locked.body)")
        #expect(try await mallory.get("/api/session").status == 401)
        let log = fixture.gateway.output
        #expect(!log.contains("hunter2") && !log.contains("guess") && !log.contains("correct horse"), "a password reached the log")
        try await fixture.stop()
    }

    @Test("a guest sets, but a forged management request from its session is refused and never reaches the broker")
    func guestCannotManage() async throws {
        let (fixture, port) = try await Self.start(signIn: true)
        let bob = try Self.browser(port)
        #expect(try await bob.post("/api/login", #"{"user": "bob", "password": "hunter2"}"#).json["role"] as? String == "guest")
        let csrf = try await bob.csrf()
        let forged = #"{"topic": "homegate/$request/room/add", "payload": "{\"name\": \"Bob's Den\"}"}"#
        let refused = try await bob.post("/api/publish", forged, headers: ["X-CSRF-Token: \(csrf)"])
        #expect(refused.status == 403)
        #expect((refused.json["message"] as? String)?.contains("guest") == true, "\(refused.body)")
        let value = #"{"topic": "\#(Self.lamp)", "payload": "false"}"#
        #expect(try await bob.post("/api/publish", value, headers: ["X-CSRF-Token: \(csrf)"]).status == 403)
        let set = #"{"topic": "\#(Self.lamp)/set", "payload": "{\"value\": false, \"id\": \"bob-1\"}"}"#
        #expect(try await bob.post("/api/publish", set, headers: ["X-CSRF-Token: \(csrf)"]).status == 202)
        // Published in order on one connection: once bob's set is acknowledged, a forged request
        // that had gone out would have been seen before it.
        _ = try await fixture.watcher.inbox.first { $0.topic.string == "\(Self.lamp)/set/result" }
        #expect(!fixture.watcher.inbox.all.contains { $0.topic.string.hasPrefix("homegate/$request/") }, "a refused request reached the broker")
        #expect(!fixture.watcher.inbox.all.contains { $0.topic.string == Self.lamp && $0.payloadString == "false" && !$0.retain })
        let alice = try Self.browser(port)
        _ = try await alice.post("/api/login", #"{"user": "alice", "password": "correct horse"}"#)
        let request = #"{"topic": "homegate/$request/room/add", "payload": "{\"name\": \"Attic\", \"transaction\": \"page-2\"}"}"#
        #expect(try await alice.post("/api/publish", request, headers: ["X-CSRF-Token: \(try await alice.csrf())"]).status == 202)
        let answer = try await fixture.watcher.inbox.first { $0.topic.string == "homegate/$response/room/add" }
        #expect(answer.payloadString.contains(#""ok":true"#), "\(answer.payloadString)")
        try await fixture.stop()
    }

    @Test("signing out ends the session: its cookie no longer publishes")
    func signOut() async throws {
        let (fixture, port) = try await Self.start(signIn: true)
        let alice = try Self.browser(port)
        _ = try await alice.post("/api/login", #"{"user": "alice", "password": "correct horse"}"#)
        let csrf = try await alice.csrf()
        #expect(try await alice.post("/api/logout", "{}", headers: ["X-CSRF-Token: \(csrf)"]).status == 200)
        let set = #"{"topic": "\#(Self.lamp)/set", "payload": "true"}"#
        #expect(try await alice.post("/api/publish", set, headers: ["X-CSRF-Token: \(csrf)"]).status == 401)
        try await fixture.stop()
    }

    @Test("a hundred idle connections and twenty open pages do not keep the page from answering")
    func idleConnections() async throws {
        let (fixture, port) = try await Self.start(signIn: false)
        let browser = try Self.browser(port)
        _ = try await browser.get("/api/session")
        let cookie = try WebPageFeedTests.sessionCookie(browser)
        let idle = try (0..<100).map { _ in try IdleConnection(port: port) }
        let pages = try (0..<20).map { _ in try RawWebSocket(port: port, path: "/ws", headers: ["Origin: http://127.0.0.1:\(port)", "Cookie: \(cookie)"]) }
        #expect(try await browser.get("/api/session").status == 200)
        #expect(try await browser.get("/").status == 200)
        idle.forEach { $0.close() }
        pages.forEach { $0.sendClose() }
        try await fixture.stop()
    }

    @Test("over HTTPS the session cookie is Secure")
    func https() async throws {
        let certificates = try await Certificates.generate(in: try TemporaryDirectory.make(prefix: "webtls"))
        let (fixture, port) = try await Self.start(signIn: true, tls: certificates)
        var alice = try Self.browser(port, scheme: "https")
        alice.extraCurl = ["--cacert", certificates.caFile]
        let login = try await alice.post("/api/login", #"{"user": "alice", "password": "correct horse"}"#)
        #expect(login.status == 200)
        let cookie = try #require(login.headers["set-cookie"])
        #expect(cookie.contains("Secure") && cookie.contains("HttpOnly"), "\(cookie)")
        #expect(try await alice.get("/").status == 200)
        try await fixture.stop()
    }
}

import Foundation
import Testing
import TestSupport

/// The page's WebSocket through the real binary: the retained picture, then live messages (a set
/// published through the page and its acknowledgement), and why it closes: sign-out (1008), the
/// broker lost (1012); another site's page cannot open it.
@Suite(.serialized, .startsProcesses) struct WebPageFeedTests {
    typealias Browser = WebPageTests.Browser

    /// The session cookie curl keeps in its jar (Netscape format: the value is the last field).
    static func sessionCookie(_ browser: Browser) throws -> String {
        let jar = try String(contentsOfFile: browser.jar, encoding: .utf8)
        let line = try #require(jar.split(separator: "\n").first { $0.contains("homegate_session") })
        return "homegate_session=" + (line.split(separator: "\t").last.map(String.init) ?? "")
    }

    /// One frame from the server.
    struct Frame: Sendable {
        var type: String
        var topic: String?
        var payload: String?
        var retained: Bool?

        init?(_ text: String) {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                  let type = object["type"] as? String else { return nil }
            self.type = type
            topic = object["topic"] as? String
            payload = object["payload"] as? String
            retained = object["retained"] as? Bool
        }
    }

    /// The frames received, in order, by a WebSocket client.
    final class Frames: Sendable {
        let recorder = Recorder<[Frame]>([])
        var all: [Frame] { recorder.value }

        func wait(for what: String, _ predicate: @escaping @Sendable (Frame) -> Bool) async throws {
            _ = try await recorder.wait(timeout: HangGuard.standard, for: what) { frames in frames.contains(where: predicate) ? true : nil }
        }
    }

    /// Connects to the page's feed with `headers` (and the page's own `Origin`), records every
    /// frame, runs `body` once the picture is complete, then closes (unless the server closed
    /// first), and returns the close frame's code. An error of `body` is thrown.
    static func feed(port: Int, headers: [String: String], frames: Frames,
                     body: @escaping @Sendable () async throws -> Void) async throws -> Int? {
        let origin = headers["Origin"] ?? "http://127.0.0.1:\(port)"
        let socket = try RawWebSocket(port: port, path: "/ws", headers: ["Origin: \(origin)"] + headers.filter { $0.key != "Origin" }.map { "\($0.key): \($0.value)" })
        let failure = Recorder<String?>(nil)
        let code = await withCheckedContinuation { (done: CheckedContinuation<Int?, Never>) in
            let reader = Thread {
                var synced = false
                let code = socket.readUntilClosed { text in
                    guard let frame = Frame(text) else { return }
                    frames.recorder.update { $0.append(frame) }
                    if !synced, frame.type == "synced" {
                        synced = true
                        Task {
                            do { try await body() } catch { failure.update { $0 = "\(error)" } }
                            socket.sendClose()
                        }
                    }
                }
                done.resume(returning: code)
            }
            reader.start()
        }
        if let problem = failure.value { throw FixtureError(problem) }
        return code
    }

    /// How many times the page's broker connection came up, by the gateway's log.
    static func feedConnections(_ fixture: GatewayFixture) -> Int {
        fixture.gateway.output.components(separatedBy: "web page: connected to the broker").count - 1
    }

    static func isMessage(_ topic: String, containing text: String = "") -> @Sendable (Frame) -> Bool {
        { frame in frame.topic == topic && (text.isEmpty || (frame.payload ?? "").contains(text)) }
    }

    @Test("the picture, then a set and its acknowledgement live; signing out closes it with 1008")
    func pictureThenLiveThenSignOut() async throws {
        let (fixture, port) = try await WebPageTests.start(signIn: true)
        let alice = try WebPageTests.browser(port)
        _ = try await alice.post("/api/login", #"{"user": "alice", "password": "correct horse"}"#)
        let csrf = try await alice.csrf()
        let frames = Frames()
        let lamp = WebPageTests.lamp
        let code = try await Self.feed(port: port, headers: ["Cookie": try Self.sessionCookie(alice)],
                                       frames: frames) {
            let set = #"{"topic": "\#(lamp)/set", "payload": "{\"value\": true, \"id\": \"feed-1\"}"}"#
            #expect(try await alice.post("/api/publish", set, headers: ["X-CSRF-Token: \(csrf)"]).status == 202)
            try await frames.wait(for: "the acknowledgement", Self.isMessage("\(lamp)/set/result", containing: #""id":"feed-1""#))
            #expect(try await alice.post("/api/logout", "{}", headers: ["X-CSRF-Token: \(csrf)"]).status == 200)
        }
        #expect(code == 1008)
        let all = frames.all
        let synced = try #require(all.firstIndex { $0.type == "synced" })
        let picture = all[..<synced]
        #expect(picture.first?.type == "broker")
        #expect(picture.contains(where: Self.isMessage("homegate/$layout")))
        #expect(picture.contains { $0.topic == lamp && $0.retained == true })
        #expect(!picture.contains { $0.retained == false }, "the picture holds retained messages only")
        let acknowledged = try #require(all.firstIndex(where: Self.isMessage("\(lamp)/set/result", containing: #""ok":true"#)))
        #expect(all[synced...].contains { $0.topic == lamp && $0.payload == "true" }, "the value follows")
        #expect(acknowledged > synced)
        try await fixture.stop()
    }

    @Test("a broker restart closes the feed with 1012; the next one has the picture again")
    func brokerRestart() async throws {
        let (fixture, port) = try await WebPageTests.start(signIn: false)
        let browser = try WebPageTests.browser(port)
        _ = try await browser.get("/api/session")
        let headers = ["Cookie": try Self.sessionCookie(browser)]
        let code = try await Self.feed(port: port, headers: headers, frames: Frames()) {
            try await fixture.broker.restart()
        }
        #expect(code == 1012)
        // The page reconnects once the gateway's page is connected to the broker again.
        _ = try await fixture.gateway.child.output.wait(timeout: .seconds(30), for: "the page's broker connection again") { _ in
            Self.feedConnections(fixture) >= 2 ? true : nil
        }
        // Its picture is what the feed has so far; the retained messages still arriving follow it.
        let again = Frames()
        let second = try await Self.feed(port: port, headers: headers, frames: again) {
            try await again.wait(for: "the layout again", Self.isMessage("homegate/$layout"))
        }
        #expect(second == 1000)
        #expect(again.all.contains { $0.topic == "homegate/$layout" && $0.retained == true }, "the picture again")
        try await fixture.stop()
    }

    @Test("another site's page cannot open the feed with the person's cookie, nor a browser without a session")
    func otherOrigin() async throws {
        let (fixture, port) = try await WebPageTests.start(signIn: false)
        let browser = try WebPageTests.browser(port)
        _ = try await browser.get("/api/session")
        let upgrade = ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
        // curl sends the jar's cookie; the Origin decides. (The answer to an upgrade never ends: -m.)
        let ownSite = try await browser.get("/ws", headers: upgrade + ["Origin: http://127.0.0.1:\(port)"], maxSeconds: 2)
        #expect(ownSite.status == 101)
        let otherSite = try await browser.get("/ws", headers: upgrade + ["Origin: http://evil.example"], maxSeconds: 2)
        #expect(otherSite.status == 400)
        let stranger = try WebPageTests.browser(port)
        #expect(try await stranger.get("/ws", headers: upgrade + ["Origin: http://127.0.0.1:\(port)"], maxSeconds: 2).status == 400)
        try await fixture.stop()
    }
}

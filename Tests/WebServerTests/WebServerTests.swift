import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport
import WebServer

/// The HTTP server on a real socket: what each endpoint answers, with curl as the client.
@Suite("WebServer", .startsProcesses)
struct WebServerTests {
    /// Runs a server on a free port with `endpoints`, runs `body` with its port, stops it the
    /// way the gateway does: a graceful shutdown of its service group, which drains the
    /// connections. (Cancelling the server's task instead can trap in NIO, "Deinited
    /// NIOAsyncWriter without calling finish()", when a connection was accepted but not yet
    /// served: apple/swift-nio#3481. It did here, after the hundred idle connections.)
    static func withServer(_ endpoints: WebServer.Endpoints, _ body: (Int) async throws -> Void) async throws {
        let listening = Recorder<Int?>(nil)
        let logger = TestLogger.make("web")
        let server = WebServer(configuration: .init(host: "127.0.0.1", port: 0), endpoints: endpoints, logger: logger) { port in
            listening.update { $0 = port }
        }
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: logger))
        let task = Task { try await group.run() }
        defer { task.cancel() }  // only if the graceful shutdown below was not reached
        var failure: (any Error)?
        do {
            let port = try await listening.wait(timeout: HangGuard.standard, for: "the server to listen") { $0 }
            try await body(port)
        } catch {
            failure = error
        }
        await group.triggerGracefulShutdown()
        try await task.value
        if let failure { throw failure }
    }

    /// `curl -s -i` of `path`: status line, headers and body as one text.
    static func get(_ port: Int, _ path: String, _ options: [String] = []) async throws -> String {
        let curl = try Executable.locate("curl", install: "apt-get install curl")
        let process = try ChildProcess(curl, ["-s", "-i"] + options + ["http://127.0.0.1:\(port)\(path)"])
        #expect(try await process.waitForExit() == 0)
        return process.output.value
    }

    @Test("/metrics answers the exposition with Prometheus's content type; /health 200 or 503 as the gateway is")
    func endpoints() async throws {
        let healthy = Mutex(true)
        let endpoints = WebServer.Endpoints(metrics: { Array("homegate_up 1\n".utf8) }, health: { healthy.withLock { $0 } })
        try await Self.withServer(endpoints) { port in
            let metrics = try await Self.get(port, "/metrics")
            #expect(metrics.hasPrefix("HTTP/1.1 200"), "\(metrics)")
            #expect(metrics.lowercased().contains("content-type: text/plain; version=0.0.4; charset=utf-8"))
            #expect(metrics.hasSuffix("\r\n\r\nhomegate_up 1\n"))
            #expect(try await Self.get(port, "/health").hasSuffix("\r\n\r\nok\n"))
            healthy.withLock { $0 = false }
            let unhealthy = try await Self.get(port, "/health")
            #expect(unhealthy.hasPrefix("HTTP/1.1 503") && unhealthy.hasSuffix("not connected to the broker\n"), "\(unhealthy)")
            #expect(try await Self.get(port, "/nothing").hasPrefix("HTTP/1.1 404"))
        }
    }

    @Test("HEAD answers like GET without a body; other methods 405 with Allow; unknown paths 404 in words; an oversized head 400")
    func methodsAndLimits() async throws {
        let endpoints = WebServer.Endpoints(metrics: { Array("homegate_up 1\n".utf8) }, health: { true })
        try await Self.withServer(endpoints) { port in
            let head = try await Self.get(port, "/health", ["-I"])
            #expect(head.hasPrefix("HTTP/1.1 200") && head.hasSuffix("\r\n\r\n"), "\(head)")
            let post = try await Self.get(port, "/health", ["-X", "POST"])
            #expect(post.hasPrefix("HTTP/1.1 405") && post.lowercased().contains("allow: get, head"), "\(post)")
            #expect(try await Self.get(port, "/nothing").hasSuffix("not found; try /metrics or /health\n"))
            let big = try await Self.get(port, "/health", ["-H", "X-Big: " + String(repeating: "a", count: 9000)])
            #expect(big.hasPrefix("HTTP/1.1 400"), "\(big)")
        }
    }

    @Test("a hundred idle connections do not keep /health from answering")
    func idleConnections() async throws {
        let endpoints = WebServer.Endpoints(metrics: { [] }, health: { true })
        try await Self.withServer(endpoints) { port in
            let idle = try (0..<100).map { _ in try IdleConnection(port: port) }
            #expect(try await Self.get(port, "/health").hasSuffix("\r\n\r\nok\n"))
            idle.forEach { $0.close() }
        }
    }
}


#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Testing
@testable import Gateway

@Suite struct MetricsTests {
    // MARK: The exposition

    @Test func countersAndGaugesAreWrittenExactly() throws {
        var metrics = Metrics()
        for kind in ["set", "set", "get", "set"] { metrics.recordCommand(kind: kind) }
        metrics.recordAcknowledgement(status: 0, seconds: 0.0007)
        metrics.recordAcknowledgement(status: 0, seconds: 0.03)
        metrics.recordAcknowledgement(status: -70402, seconds: 12)
        metrics.recordReconnect()
        metrics.recordReconnect()
        let lines = metrics.exposition(reachable: 4, accessories: 5, queueDepth: 2, connected: true)
            .split(separator: "\n").map(String.init)

        for line in [
            #"homegate_commands_total{kind="get"} 1"#,
            #"homegate_commands_total{kind="set"} 3"#,
            #"homegate_acknowledgements_total{status="-70402"} 1"#,
            #"homegate_acknowledgements_total{status="0"} 2"#,
            "homegate_acknowledgement_seconds_count 3",
            "homegate_mqtt_reconnects_total 2",
            "homegate_mqtt_connected 1",
            "homegate_accessories 5",
            "homegate_accessories_reachable 4",
            "homegate_queue_depth 2",
            "# TYPE homegate_commands_total counter",
            "# TYPE homegate_acknowledgements_total counter",
            "# TYPE homegate_acknowledgement_seconds histogram",
            "# TYPE homegate_mqtt_reconnects_total counter",
            "# TYPE homegate_mqtt_connected gauge",
            "# TYPE homegate_accessories gauge",
            "# TYPE homegate_accessories_reachable gauge",
            "# TYPE homegate_queue_depth gauge",
        ] {
            #expect(lines.contains(line), "missing: \(line)")
        }
        // Label values sorted: kinds by name, statuses by number.
        #expect(lines.filter { $0.hasPrefix("homegate_commands_total{") }
            == [#"homegate_commands_total{kind="get"} 1"#, #"homegate_commands_total{kind="set"} 3"#])
        #expect(lines.filter { $0.hasPrefix("homegate_acknowledgements_total{") }
            == [#"homegate_acknowledgements_total{status="-70402"} 1"#, #"homegate_acknowledgements_total{status="0"} 2"#])

        #expect(buckets(lines) == [
            ("0.0005", 0), ("0.001", 1), ("0.0025", 1), ("0.005", 1), ("0.01", 1), ("0.025", 1), ("0.05", 2),
            ("0.1", 2), ("0.25", 2), ("0.5", 2), ("1", 2), ("2.5", 2), ("5", 2), ("10", 2), ("+Inf", 3),
        ].map { "\($0.0)=\($0.1)" })
        let sum = try #require(lines.first { $0.hasPrefix("homegate_acknowledgement_seconds_sum ") })
        let value = try #require(Double(sum.split(separator: " ")[1]))
        #expect(abs(value - 12.0307) < 1e-9, "\(sum)")
    }

    @Test func everyFamilyHasHelpAndTypeBeforeItsSamplesAndTheTextEndsWithANewline() throws {
        var metrics = Metrics()
        metrics.recordCommand(kind: "get")
        let text = metrics.exposition(reachable: 0, accessories: 0, queueDepth: 0, connected: false)
        #expect(text.hasSuffix("\n"))
        var family: String?
        var typed = false
        for line in text.split(separator: "\n").map(String.init) {
            let words = line.split(separator: " ").map(String.init)
            if line.hasPrefix("# HELP ") {
                #expect(words.count > 3 && words[2].hasPrefix("homegate_"))
                family = words[2]
                typed = false
            } else if line.hasPrefix("# TYPE ") {
                #expect(words.count == 4 && words[2] == family && ["counter", "gauge", "histogram"].contains(words[3]))
                typed = true
            } else {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                let owner = try #require(family, "\(line) before any # HELP")
                #expect(typed)
                #expect(name == owner || name.hasPrefix(owner + "_"), "\(line) outside its family \(owner)")
                #expect(words.count == 2)
            }
        }
        #expect(text.contains("homegate_mqtt_connected 0\n"))
    }

    @Test func beforeAnythingIsRecordedTheSeriesExistAtZero() {
        let lines = Metrics().exposition(reachable: 0, accessories: 0, queueDepth: 0, connected: false)
            .split(separator: "\n").map(String.init)
        for line in [
            #"homegate_commands_total{kind="get"} 0"#, #"homegate_commands_total{kind="set"} 0"#,
            #"homegate_acknowledgements_total{status="0"} 0"#, #"homegate_acknowledgement_seconds_bucket{le="+Inf"} 0"#,
            "homegate_acknowledgement_seconds_sum 0", "homegate_acknowledgement_seconds_count 0",
            "homegate_mqtt_reconnects_total 0",
        ] {
            #expect(lines.contains(line), "missing: \(line)")
        }
        #expect(lines.filter { $0.hasPrefix("homegate_acknowledgement_seconds_bucket") }.count == 15)
    }

    @Test func bucketsAreCumulativeInclusiveAndEndWithTheCount() {
        var metrics = Metrics()
        // On a bound (inclusive), between bounds, beyond the last, below zero (as 0), not a number.
        let times = [0.0005, 0.001, 0.0011, 0.003, 0.003, 0.7, 2.5, 9.99, 10, 10.01, 3600, -0.2, 0, .nan, .infinity]
        for (index, time) in times.enumerated() { metrics.recordAcknowledgement(status: index % 3 == 0 ? 0 : -70408, seconds: time) }
        let text = metrics.exposition(reachable: 0, accessories: 0, queueDepth: 0, connected: true)
        let lines = text.split(separator: "\n").map(String.init)
        let counts = buckets(lines).map { Int($0.split(separator: "=")[1])! }
        #expect(counts == [3, 4, 5, 7, 7, 7, 7, 7, 7, 7, 8, 9, 9, 11, 13])
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 <= $1 })
        // NaN and infinity are acknowledged but not timed (an infinite _sum would stay so).
        #expect(lines.contains("homegate_acknowledgement_seconds_count 13"))
        #expect(lines.contains("homegate_acknowledgement_seconds_count \(counts.last!)"))
        #expect(lines.contains(#"homegate_acknowledgements_total{status="0"} 5"#))
        #expect(lines.contains(#"homegate_acknowledgements_total{status="-70408"} 10"#))
        #expect(metrics.latencyCount == 13)
        #expect(metrics.latencySum.isFinite)
    }

    @Test func labelValuesAreEscaped() {
        var metrics = Metrics()
        metrics.recordCommand(kind: "a\"b\\c\nd")
        let text = metrics.exposition(reachable: 0, accessories: 0, queueDepth: 0, connected: true)
        #expect(text.contains(#"homegate_commands_total{kind="a\"b\\c\nd"} 1"#))
    }

    @Test func numbersAreWrittenAsPrometheusDoes() {
        #expect(Metrics.number(1) == "1")
        #expect(Metrics.number(0.0005) == "0.0005")
        #expect(Metrics.number(2.5) == "2.5")
        #expect(Metrics.number(.infinity) == "+Inf")
        #expect(Metrics.number(-.infinity) == "-Inf")
        #expect(Metrics.number(.nan) == "NaN")
    }

    // MARK: The server

    @Test func servesTheExpositionWithItsContentType() async throws {
        var metrics = Metrics()
        metrics.recordCommand(kind: "set")
        metrics.recordAcknowledgement(status: 0, seconds: 0.004)
        let body = metrics.exposition(reachable: 1, accessories: 2, queueDepth: 0, connected: true)
        let server = try MetricsServer(port: 0) { path in
            path == "/metrics" ? (200, Metrics.contentType, body) : (404, "text/plain; charset=utf-8", "not found\n")
        }
        #expect(server.host == "127.0.0.1")
        #expect(server.boundPort > 0)
        let task = Task { try await server.run() }
        defer { task.cancel() }

        let response = try await HTTPResponse(port: server.boundPort, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(response.headers["content-length"] == String(body.utf8.count))
        #expect(response.headers["connection"] == "close")
        #expect(response.body == body)
        #expect(response.body.contains(#"homegate_acknowledgement_seconds_bucket{le="0.005"} 1"#))

        let missing = try await HTTPResponse(port: server.boundPort, "GET /nothing HTTP/1.0\r\n\r\n")
        #expect(missing.statusLine == "HTTP/1.1 404 Not Found")
        #expect(missing.body == "not found\n")
    }

    @Test func passesThePathWithoutItsQueryAndAnswersWhatRespondReturns() async throws {
        let paths = Mutex<[String]>([])
        let server = try MetricsServer(port: 0) { path in
            paths.withLock { $0.append(path) }
            return (503, "application/json", #"{"healthy":false}"#)
        }
        let task = Task { try await server.run() }
        defer { task.cancel() }

        let response = try await HTTPResponse(port: server.boundPort, "GET /health?verbose=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 503 Service Unavailable")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.body == #"{"healthy":false}"#)
        // A bare LF ends a head too (RFC 9112 allows it).
        let head = try await HTTPResponse(port: server.boundPort, "HEAD /health HTTP/1.1\nHost: x\n\n")
        #expect(head.statusLine == "HTTP/1.1 503 Service Unavailable")
        #expect(head.headers["content-length"] == "17")
        #expect(head.body == "")
        #expect(paths.withLock { $0 } == ["/health", "/health"])
    }

    @Test func otherMethodsGet405AndBadRequests400WithoutCallingRespond() async throws {
        let calls = Mutex(0)
        let server = try MetricsServer(port: 0) { _ in
            calls.withLock { $0 += 1 }
            return (200, "text/plain", "ok")
        }
        let task = Task { try await server.run() }
        defer { task.cancel() }
        let port = server.boundPort

        let post = try await HTTPResponse(port: port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(post.statusLine == "HTTP/1.1 405 Method Not Allowed")
        #expect(post.headers["allow"] == "GET, HEAD")
        #expect(post.headers["connection"] == "close")
        for request in ["NONSENSE\r\n\r\n", "GET /metrics\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2.0\r\n\r\n",
                        "GET  /metrics HTTP/1.1\r\n\r\n", "G(T /metrics HTTP/1.1\r\n\r\n",
                        "GET /metrics HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 9000)] {
            let response = try await HTTPResponse(port: port, request)
            #expect(response.statusLine == "HTTP/1.1 400 Bad Request", "\(request.prefix(40))")
            #expect(response.headers["content-length"] == String(response.body.utf8.count))
        }
        #expect(calls.withLock { $0 } == 0)
    }

    @Test func aPortInUseFailsAtInitWithTheAddressAndTheCause() throws {
        let first = try MetricsServer(port: 0) { _ in (200, "text/plain", "") }
        let error = #expect(throws: MetricsServerError.self) {
            _ = try MetricsServer(port: first.boundPort) { _ in (200, "text/plain", "") }
        }
        #expect(error?.description == "cannot listen on 127.0.0.1:\(first.boundPort): Address already in use")
        #expect(throws: MetricsServerError.self) { _ = try MetricsServer(port: 70000) { _ in (200, "", "") } }
    }

    @Test func cancellingRunStopsServingEvenWithAStalledClient() async throws {
        let server = try MetricsServer(port: 0) { _ in (200, "text/plain; charset=utf-8", "ok\n") }
        let port = server.boundPort
        let task = Task { try await server.run() }

        // A client that connects and sends nothing holds no one else up...
        let stalled = try await offThread { try connect(port: port) }
        defer { close(stalled) }
        let response = try await HTTPResponse(port: port, "GET /health HTTP/1.1\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.body == "ok\n")

        // ...nor the stop: run() returns with the listening socket closed.
        task.cancel()
        try await task.value
        let refused = await #expect(throws: SocketError.self) { _ = try await offThread { try connect(port: port) } }
        #expect(refused?.code == ECONNREFUSED)
        // The stalled connection was ended by the server.
        let rest = try await offThread { try readToEnd(stalled) }
        #expect(rest.isEmpty)
    }

    @Test func runFromACancelledTaskReturnsAndRunTwiceThrows() async throws {
        let server = try MetricsServer(port: 0) { _ in (200, "text/plain", "") }
        let port = server.boundPort
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await server.run()
        }
        try await task.value
        let refused = await #expect(throws: SocketError.self) { _ = try await offThread { try connect(port: port) } }
        #expect(refused?.code == ECONNREFUSED)
        let again = await #expect(throws: MetricsServerError.self) { try await server.run() }
        #expect(again?.description.contains("already called") == true)
    }
}

// MARK: Helpers

/// The `le=count` pairs of the histogram's bucket lines, in order.
private func buckets(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix("homegate_acknowledgement_seconds_bucket{le=\"") }.map { line in
        let bound = line.dropFirst("homegate_acknowledgement_seconds_bucket{le=\"".count).prefix { $0 != "\"" }
        return "\(bound)=\(line.split(separator: " ")[1])"
    }
}

/// An HTTP answer read to the end of the connection.
private struct HTTPResponse {
    let statusLine: String
    /// Header names in lower case.
    let headers: [String: String]
    let body: String

    /// Sends `request` as is to 127.0.0.1:`port` and reads until the server closes.
    init(port: Int, _ request: String) async throws {
        let raw = try await offThread {
            let fd = try connect(port: port)
            defer { close(fd) }
            let bytes = Array(request.utf8)
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { throw SocketError(operation: "write", code: errno) }
                offset += count
            }
            return try readToEnd(fd)
        }
        let text = String(decoding: raw, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n")
        statusLine = head[0]
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            headers[pair[0].lowercased()] = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
        }
        self.headers = headers
        body = parts.dropFirst().joined(separator: "\r\n\r\n")
    }
}

private struct SocketError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}

/// Runs blocking socket calls on a thread of their own, never on one of Swift's cooperative
/// threads (which the server's `respond` needs).
private func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

private func connect(port: Int) throws -> Int32 {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw SocketError(operation: "socket", code: errno) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        let error = SocketError(operation: "connect", code: errno)
        close(fd)
        throw error
    }
    return fd
}

/// Reads until the other side closes (a read timeout of 10 s turns a hang into a failure).
private func readToEnd(_ fd: Int32) throws -> [UInt8] {
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { throw SocketError(operation: "read", code: errno) }
        if count == 0 { return received }
        received.append(contentsOf: chunk[0..<count])
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Wire

/// A tiny HTTP/1.1 server for `/metrics` and `/health`, on plain sockets.
///
/// It answers `GET` (and `HEAD`) with whatever `respond` returns for the request's path (without
/// its query), one request per connection (`Connection: close`); any other method gets 405, a
/// request it cannot read 400. The address is bound in `init`, so a port in use fails at start and
/// ``boundPort`` is known (port 0 picks a free one). ``run()`` serves until its task is cancelled.
///
/// Connections are accepted on a thread of their own, and each is served on its own thread (at
/// most ``maximumConnections`` at once; more are closed at once), so neither blocks Swift's
/// cooperative threads nor waits for a slow client. A client has ``requestTimeout`` to send its
/// request, of at most ``maximumRequestSize`` bytes up to the blank line ending its headers.
public final class MetricsServer: Sendable {
    /// What to answer: the HTTP status code, the `Content-Type` and the body.
    public typealias Response = (status: Int, contentType: String, body: String)

    /// Connections served at once; more are closed without an answer.
    public static let maximumConnections = 16
    /// The largest request head (request line and headers) read, in bytes.
    public static let maximumRequestSize = 8 * 1024
    /// How long a client may take to send its request.
    public static let requestTimeout: Duration = .seconds(5)

    /// The address listened on, as given.
    public let host: String
    /// The port listened on: the one given, or the one the system chose for port 0.
    public let boundPort: Int
    private let respond: @Sendable (String) async -> Response
    private let listener: Int32
    /// Written to (once) to wake the accept loop when ``run()``'s task is cancelled.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let state = Mutex(State())

    private struct State {
        enum Phase { case ready, running, finished }
        var phase = Phase.ready
        var stopRequested = false
        /// Connections being served; closed under the lock, so a stop never touches a reused fd.
        var clients: Set<Int32> = []
    }

    /// Binds to `host` (by default 127.0.0.1, this machine only; `0.0.0.0` or `::` for every
    /// interface) and `port`, and listens.
    /// - Parameter respond: called with the path of each `GET` (`/metrics`); its answer is sent.
    /// - Throws: ``MetricsServerError`` when the address cannot be used:
    ///   `cannot listen on 127.0.0.1:9100: Address already in use`.
    public init(host: String = "127.0.0.1", port: Int,
                respond: @escaping @Sendable (_ path: String) async -> Response) throws {
        self.host = host
        self.respond = respond
        let address = Self.address(host: host, port: port)
        guard (0...65535).contains(port) else {
            throw MetricsServerError(.listen(address: address, cause: "the port must be between 0 and 65535"))
        }
        let (listener, boundPort) = try Self.openListener(host: host, port: port, address: address)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            let cause = Self.errorText(errno)
            close(listener)
            throw MetricsServerError(.listen(address: address, cause: cause))
        }
        for fd in pipeEnds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(pipeEnds[1], F_SETFL, fcntl(pipeEnds[1], F_GETFL) | O_NONBLOCK)
        self.listener = listener
        self.boundPort = boundPort
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
    }

    deinit {
        if state.withLock({ $0.phase }) == .ready { close(listener) }
        close(wakeRead)
        close(wakeWrite)
    }

    /// Serves until the task is cancelled; then stops accepting, closes the listening socket,
    /// lets the answers being written finish (requests still being read are dropped) and
    /// returns. Call it once; called from a cancelled task it closes the socket and returns.
    /// - Throws: ``MetricsServerError`` if called again, or if the socket stops accepting
    ///   connections for a reason waiting cannot fix.
    public func run() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let first = state.withLock { state in
                    guard state.phase == .ready else { return false }
                    state.phase = .running
                    return true
                }
                guard first else {
                    continuation.resume(throwing: MetricsServerError(.alreadyStarted))
                    return
                }
                let thread = Thread { [self] in
                    let result = acceptLoop()
                    state.withLock { $0.phase = .finished }
                    continuation.resume(with: result)
                }
                thread.name = "metrics-\(boundPort)"
                thread.start()
            }
        } onCancel: {
            requestStop()
        }
    }

    private func requestStop() {
        state.withLock { state in
            guard !state.stopRequested else { return }
            state.stopRequested = true
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    // MARK: Accepting

    private func acceptLoop() -> Result<Void, any Error> {
        let connections = DispatchGroup()
        var result: Result<Void, any Error> = .success(())
        loop: while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                result = .failure(MetricsServerError(.accept(address: address, cause: Self.errorText(errno))))
                break
            }
            if fds[1].revents != 0 { break } // run()'s task was cancelled
            guard fds[0].revents != 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO, EPERM:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: the pending connection stays readable, so wait
                    // a little (or for the stop) rather than spin.
                    var wake = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
                    _ = poll(&wake, 1, 100)
                    continue
                default:
                    result = .failure(MetricsServerError(.accept(address: address, cause: Self.errorText(errno))))
                    break loop
                }
            }
            Self.configure(client)
            let admitted = state.withLock { state in
                guard state.clients.count < Self.maximumConnections else { return false }
                state.clients.insert(client)
                return true
            }
            guard admitted else {
                close(client)
                continue
            }
            connections.enter()
            let thread = Thread { [self] in
                serve(client)
                connections.leave()
            }
            thread.name = "metrics-\(boundPort)-connection"
            thread.start()
        }
        close(listener)
        // Requests still being read end now (their reads see the end of the stream); answers
        // being written are finished.
        state.withLock { state in
            for client in state.clients { _ = shutdown(client, Int32(SHUT_RD)) }
        }
        connections.wait()
        return result
    }

    private var address: String { Self.address(host: host, port: boundPort) }

    // MARK: One connection

    private enum Request {
        case get(path: String, head: Bool)
        case invalid(status: Int)
        case gone
    }

    private func serve(_ client: Int32) {
        defer {
            state.withLock { state in
                state.clients.remove(client)
                close(client)
            }
        }
        let response: [UInt8]
        switch readRequest(client) {
        case .gone:
            return
        case .invalid(let status):
            response = Self.encode(status: status, contentType: "text/plain; charset=utf-8",
                                   body: Self.reason(status) + "\n", includingBody: true)
        case .get(let path, let head):
            let answer = answer(path)
            response = Self.encode(status: answer.status, contentType: answer.contentType, body: answer.body, includingBody: !head)
        }
        guard send(response, to: client) else { return }
        // Close gracefully: say we are done, then read whatever the client still sends (a body
        // we did not want) until it closes, so the system does not reset the connection before the
        // client has read the answer.
        _ = shutdown(client, Int32(SHUT_WR))
        let deadline = ContinuousClock.now + .seconds(1)
        var scratch = [UInt8](repeating: 0, count: 4096)
        var drained = 0
        while drained < 64 * 1024, Self.waitReadable(client, until: deadline) {
            let count = recv(client, &scratch, scratch.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            drained += count
        }
    }

    /// Reads the request head (up to the blank line) and parses its request line.
    private func readRequest(_ client: Int32) -> Request {
        let deadline = ContinuousClock.now + Self.requestTimeout
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            guard Self.waitReadable(client, until: deadline) else { return .gone }
            let count = recv(client, &chunk, chunk.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return .gone }
            let searchFrom = max(0, buffer.count - 3)
            buffer.append(contentsOf: chunk[0..<count])
            if let end = Self.headEnd(buffer, from: searchFrom) {
                return Self.parse(buffer[..<end])
            }
            if buffer.count >= Self.maximumRequestSize { return .invalid(status: 400) }
        }
    }

    /// Calls `respond` from this (non-Swift-concurrency) thread and waits for its answer.
    private func answer(_ path: String) -> Response {
        let result = AnswerBox()
        let done = DispatchSemaphore(value: 0)
        let respond = self.respond
        Task {
            let answer = await respond(path)
            result.value.withLock { $0 = answer }
            done.signal()
        }
        done.wait()
        return result.value.withLock { $0 } ?? (500, "text/plain; charset=utf-8", "Internal Server Error\n")
    }

    private func send(_ bytes: [UInt8], to client: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Self.sendNoSignal(client, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    // MARK: HTTP

    /// Where the head ends (after its blank line, `\r\n\r\n` or a bare `\n\n`).
    private static func headEnd(_ buffer: [UInt8], from start: Int) -> Int? {
        let newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")
        var index = start
        while index < buffer.count {
            if buffer[index] == newline {
                if index + 1 < buffer.count, buffer[index + 1] == newline { return index + 2 }
                if index + 2 < buffer.count, buffer[index + 1] == carriageReturn, buffer[index + 2] == newline { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    /// `GET /path?query HTTP/1.1` -> `/path`.
    private static func parse(_ head: ArraySlice<UInt8>) -> Request {
        let lineEnd = head.firstIndex(of: UInt8(ascii: "\n")) ?? head.endIndex
        var line = head[..<lineEnd]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard parts.count == 3 else { return .invalid(status: 400) }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        guard !method.isEmpty, method.allSatisfy(tokenCharacters.contains),
              version.count == 8, version.hasPrefix("HTTP/1."), version.last?.isASCII == true, version.last?.isNumber == true else {
            return .invalid(status: 400)
        }
        guard method == "GET" || method == "HEAD" else { return .invalid(status: 405) }
        guard target.hasPrefix("/") else { return .invalid(status: 400) }
        let path = target.prefix { $0 != "?" && $0 != "#" }
        return .get(path: String(path), head: method == "HEAD")
    }

    private static func encode(status: Int, contentType: String, body: String, includingBody: Bool) -> [UInt8] {
        let body = Array(body.utf8)
        var head = "HTTP/1.1 \(status) \(reason(status))\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
        if status == 405 { head += "Allow: GET, HEAD\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (includingBody ? body : [])
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: ""
        }
    }

    // MARK: Sockets

    private static func openListener(host: String, port: Int, address: String) throws -> (fd: Int32, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocket
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &list)
        guard lookup == 0 else {
            throw MetricsServerError(.listen(address: address, cause: String(cString: gai_strerror(lookup))))
        }
        defer { freeaddrinfo(list) }
        var cause = "no address for \(host)"
        var entry = list
        while let info = entry?.pointee {
            entry = info.ai_next
            let fd = socket(info.ai_family, info.ai_socktype, info.ai_protocol)
            guard fd >= 0 else {
                cause = errorText(errno)
                continue
            }
            var yes: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard bind(fd, info.ai_addr, info.ai_addrlen) == 0, listen(fd, 64) == 0 else {
                cause = errorText(errno)
                close(fd)
                continue
            }
            var bound = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else {
                cause = errorText(errno)
                close(fd)
                continue
            }
            let isIPv6 = Int32(bound.ss_family) == AF_INET6
            let networkPort = withUnsafePointer(to: bound) { pointer in
                isIPv6
                    ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
                    : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
            }
            return (fd, Int(UInt16(bigEndian: networkPort)))
        }
        throw MetricsServerError(.listen(address: address, cause: cause))
    }

    /// Blocking, closed on exec, and (on Darwin) no SIGPIPE; writes give up after the request
    /// timeout.
    private static func configure(_ client: Int32) {
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK)
        #if canImport(Darwin)
        var yes: Int32 = 1
        _ = setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var timeout = timeval(tv_sec: Int(requestTimeout.components.seconds), tv_usec: 0)
        _ = setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Whether `fd` has something to read (or has ended) before `deadline`.
    private static func waitReadable(_ fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(clamping: milliseconds))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return false }
        }
    }

    private static func sendNoSignal(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
        return Darwin.send(fd, bytes, count, 0)
        #else
        return Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL))
        #endif
    }

    private static var streamSocket: Int32 {
        #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue)
        #else
        SOCK_STREAM
        #endif
    }

    static func address(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// Why the metrics server could not listen or serve:
/// `cannot listen on 127.0.0.1:9100: Address already in use`.
public struct MetricsServerError: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        case listen(address: String, cause: String)
        case accept(address: String, cause: String)
        case alreadyStarted
    }

    let kind: Kind

    init(_ kind: Kind) {
        self.kind = kind
    }

    public var description: String {
        switch kind {
        case .listen(let address, let cause):
            return "cannot listen on \(address): \(cause)"
        case .accept(let address, let cause):
            return "cannot accept connections on \(address): \(cause)"
        case .alreadyStarted:
            return "run() was already called on this metrics server; make a new one to serve again"
        }
    }
}

/// Carries `respond`'s answer from its task back to the connection's thread.
private final class AnswerBox: Sendable {
    let value = Mutex<MetricsServer.Response?>(nil)
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// A connected TCP socket (blocking reads with a wait limit, whole writes), with
/// `TCP_NODELAY` and short TCP keep-alive probes so a vanished peer is noticed.
final class Socket: Sendable {
    enum ReadOutcome {
        case data(Int)
        /// Nothing arrived within the wait.
        case idle
        case closed(String?)
    }

    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Resolves `host` and connects, on a thread of its own (name resolution and a connect
    /// to a silent host block).
    static func connect(host: String, port: Int, timeout: Duration) async throws(HAPError) -> Socket {
        let result: Result<Socket, HAPError> = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: connectNow(host: host, port: port, timeout: timeout)) }
            thread.name = "hap connect \(host):\(port)"
            thread.start()
        }
        return try result.get()
    }

    private static func connectNow(host: String, port: Int, timeout: Duration) -> Result<Socket, HAPError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(HAPError(.connection, "cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            switch attempt(address.pointee, timeout: timeout) {
            case .success(let descriptor): return .success(Socket(descriptor: descriptor))
            case .failure(let reason): lastError = reason.text
            }
            entry = address.pointee.ai_next
        }
        return .failure(HAPError(.connection, "cannot connect to \(host):\(port): \(lastError)"))
    }

    private struct Reason: Error { let text: String }

    private static func attempt(_ address: addrinfo, timeout: Duration) -> Result<Int32, Reason> {
        let descriptor = socket(address.ai_family, address.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.ai_protocol)
        guard descriptor >= 0 else { return .failure(Reason(text: String(cString: strerror(errno)))) }
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        if Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else {
                let reason = String(cString: strerror(errno))
                Glibc.close(descriptor)
                return .failure(Reason(text: reason))
            }
            if let reason = waitForConnect(descriptor, timeout: timeout) {
                Glibc.close(descriptor)
                return .failure(Reason(text: reason))
            }
        }
        _ = fcntl(descriptor, F_SETFL, flags)
        configure(descriptor)
        return .success(descriptor)
    }

    /// nil when connected, else why not.
    private static func waitForConnect(_ descriptor: Int32, timeout: Duration) -> String? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        let ready = poll(&poller, 1, milliseconds)
        if ready == 0 { return "timed out after \(timeout)" }
        if ready < 0 { return String(cString: strerror(errno)) }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0 ? nil : String(cString: strerror(error))
    }

    private static func configure(_ descriptor: Int32) {
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
        var idle: Int32 = 2, interval: Int32 = 1, count: Int32 = 2
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes every byte; nil on success, else the reason.
    func writeAll(_ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += written
        }
        return nil
    }

    /// Waits up to `wait` for bytes and reads what is there.
    func read(into buffer: inout [UInt8], waitingAtMost wait: Duration) -> ReadOutcome {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: wait.wholeMilliseconds)
        let ready = poll(&poller, 1, milliseconds)
        if ready == 0 || (ready < 0 && errno == EINTR) { return .idle }
        if ready < 0 { return .closed(String(cString: strerror(errno))) }
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 { return .data(count) }
        if count < 0, errno == EINTR || errno == EAGAIN { return .idle }
        return .closed(count < 0 ? String(cString: strerror(errno)) : nil)
    }

    /// Ends both directions: a read waiting on the socket returns.
    func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Releases the descriptor (the reader does this once it stopped reading).
    func close() {
        _ = Glibc.close(descriptor)
    }
}

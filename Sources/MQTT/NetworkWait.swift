internal import CMosquitto
import Glibc
import Synchronization
import Timing

/// How the network thread waits: `epoll` over the broker's socket and an `eventfd` that any thread
/// may signal.
///
/// It is the client's one wake-up primitive: a message handed to libmosquitto from another thread
/// (libmosquitto then only queues it), a stop, and the consumer of ``Client/messages`` catching up
/// after the network thread stopped reading all ``signal()`` it. Signals coalesce: while one is
/// pending, further ones cost an atomic exchange and no system call.
final class NetworkWait: Sendable {
    /// What a wait found ready.
    struct Readiness: Equatable {
        /// The socket has data, or the connection ended (read it to find out).
        var readable = false
        /// The socket can take more bytes.
        var writable = false
        /// ``signal()`` was called since the last wait.
        var signalled = false
    }

    private let epoll: Int32
    private let event: Int32
    private let pending = Atomic<Bool>(false)
    /// The socket being watched and the events asked for; only the network thread changes it.
    private let watched = Mutex<(socket: Int32, events: UInt32)?>(nil)

    init() throws(ConfigurationError) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw ConfigurationError("cannot create the network loop's epoll descriptor: \(String(cString: strerror(errno)))") }
        event = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard event >= 0 else {
            let reason = String(cString: strerror(errno))
            close(epoll)
            throw ConfigurationError("cannot create the network loop's eventfd: \(reason)")
        }
        var registration = epoll_event()
        registration.events = EPOLLIN.rawValue
        registration.data.fd = event
        epoll_ctl(epoll, EPOLL_CTL_ADD, event, &registration)
    }

    deinit {
        close(event)
        close(epoll)
    }

    /// Wakes the network thread (from any thread). Cheap when a wake-up is already pending.
    func signal() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = write(event, &one, 8)
    }

    /// Waits until the socket is ready for what is asked, a signal arrives, or `timeout` passes.
    /// - Parameters:
    ///   - socket: the broker's socket, or nil to wait for a signal only (between connections).
    ///   - reading: whether to wake when the socket has data (false: the broker keeps what it
    ///     sends, its queue and TCP's window hold it back: backpressure).
    ///   - writing: whether to wake when the socket can take more bytes.
    func wait(socket: Int32?, reading: Bool, writing: Bool, timeout: Duration) -> Readiness {
        if let socket { watch(socket, events: (reading ? EPOLLIN.rawValue : 0) | (writing ? EPOLLOUT.rawValue : 0)) }
        // Two events at most (the socket and the signal), on the stack: no allocation per wait.
        let readiness = withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: 2) { events in
            let count = epoll_wait(epoll, events.baseAddress, 2, Self.milliseconds(timeout))
            return self.readiness(reporting: events.prefix(max(0, Int(count))))
        }
        if readiness.signalled { consumeSignal() }
        return readiness
    }

    /// What the events `epoll_wait` filled in say.
    private func readiness(reporting events: UnsafeMutableBufferPointer<epoll_event>.SubSequence) -> Readiness {
        var readiness = Readiness()
        for ready in events {
            if ready.data.fd == event {
                readiness.signalled = true
                continue
            }
            // A hang-up or an error is told by reading: libmosquitto then reports how it ended.
            let ended = ready.events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
            readiness.readable = ready.events & EPOLLIN.rawValue != 0 || ended
            readiness.writable = ready.events & EPOLLOUT.rawValue != 0
        }
        return readiness
    }

    /// Stops watching the connection's socket (before libmosquitto's next one, which may reuse
    /// the number). A socket already closed has left the set by itself.
    func forget(_ socket: Int32) {
        watched.withLock { watched in
            guard watched?.socket == socket else { return }
            watched = nil
            var unused = epoll_event()
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, socket, &unused)
        }
    }

    private func watch(_ socket: Int32, events: UInt32) {
        watched.withLock { watched in
            guard watched?.socket != socket || watched?.events != events else { return }
            var registration = epoll_event()
            registration.events = events
            registration.data.fd = socket
            if watched?.socket == socket {
                if epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &registration) == 0 {
                    watched = (socket, events)
                    return
                }
            }
            // A new socket, or the old one closed and its number reused.
            if epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &registration) != 0 && errno == EEXIST {
                _ = epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &registration)
            }
            watched = (socket, events)
        }
    }

    /// Empties the eventfd, then lets the next ``signal()`` write again. In this order a signal
    /// that comes in between is not lost: it finds one pending, and the work it announces was
    /// queued before it, so the network thread, which looks for work after this, sees it.
    private func consumeSignal() {
        var count: UInt64 = 0
        _ = read(event, &count, 8)
        pending.store(false, ordering: .releasing)
    }

    /// A timeout in whole milliseconds for `epoll_wait`, rounded up so a wait never ends early.
    static func milliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        return Int32(clamping: duration.millisecondsRoundedUp)
    }
}

import Foundation
import Synchronization

/// One TCP connection to an accessory: HTTP requests and responses in plaintext until
/// pair-verify, then inside encrypted frames; `EVENT/1.0` messages arrive on it at any time.
///
/// Requests go one at a time (``Client`` makes sure); responses are matched in order. A thread
/// of the connection's own reads the socket, decrypts, parses, hands responses to their waiting
/// requests and events to its event handler, and fails the oldest request whose
/// deadline passed (closing the connection: later answers could no longer be matched).
final class Connection: Sendable {
    private struct Pending {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Result<HTTPMessage, HAPError>, Never>
    }

    private struct State {
        var sealer: FrameSealer?
        var opener: FrameOpener?
        var parser = HTTPResponseParser()
        var pending: [Pending] = []
        var failure: HAPError?
        var closedWaiters: [CheckedContinuation<HAPError, Never>] = []
    }

    let host: String
    let port: Int
    private let socket: Socket
    private let state = Mutex(State())
    private let onEvent: @Sendable (HTTPMessage) -> Void

    private init(socket: Socket, host: String, port: Int, onEvent: @escaping @Sendable (HTTPMessage) -> Void) {
        self.socket = socket
        self.host = host
        self.port = port
        self.onEvent = onEvent
    }

    /// Connects and starts reading.
    static func open(host: String, port: Int, timeout: Duration, onEvent: @escaping @Sendable (HTTPMessage) -> Void) async throws(HAPError) -> Connection {
        let socket = try await Socket.connect(host: host, port: port, timeout: timeout)
        let connection = Connection(socket: socket, host: host, port: port, onEvent: onEvent)
        let thread = Thread { connection.readUntilClosed() }
        thread.name = "hap \(host):\(port)"
        thread.start()
        return connection
    }

    /// Sends `request` and waits for its response.
    /// - Throws: ``HAPError`` if the connection is closed or closes, or `timeout` passes, or the
    ///   task is cancelled (the connection is then closed: an answer that comes later could no
    ///   longer be matched to its request).
    func send(_ request: HTTPRequest, timeout: Duration) async throws(HAPError) -> HTTPMessage {
        if Task.isCancelled { throw HAPError(.connection, "the request to \(host):\(port) was cancelled") }
        let bytes = request.encoded(host: "\(host):\(port)")
        let result = await withTaskCancellationHandler {
            await exchange(bytes, timeout: timeout)
        } onCancel: {
            fail(HAPError(.connection, "a request to \(host):\(port) was cancelled; the connection is closed"))
        }
        return try result.get()
    }

    private func exchange(_ bytes: [UInt8], timeout: Duration) async -> Result<HTTPMessage, HAPError> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPMessage, HAPError>, Never>) in
            let failure: HAPError? = state.withLock { state in
                if let failure = state.failure { return failure }
                state.pending.append(Pending(deadline: .now + timeout, continuation: continuation))
                let wire = state.sealer.map { sealer in
                    var sealer = sealer
                    defer { state.sealer = sealer }
                    return sealer.seal(bytes)
                } ?? bytes
                if let error = socket.writeAll(wire) {
                    state.pending.removeLast()
                    return HAPError(.connection, "could not send to the accessory at \(host):\(port): \(error)")
                }
                return nil
            }
            if let failure { continuation.resume(returning: .failure(failure)) }
        }
    }

    /// From now on, frames are encrypted with `keys` in both directions.
    func encrypt(with keys: SessionKeys) {
        state.withLock { state in
            state.sealer = FrameSealer(key: keys.controllerToAccessory)
            state.opener = FrameOpener(key: keys.accessoryToController)
        }
    }

    var isEncrypted: Bool { state.withLock { $0.sealer != nil } }

    /// Why the connection closed; nil while it is open.
    var failure: HAPError? { state.withLock { $0.failure } }

    /// Closes the connection; waiting requests fail. Idempotent.
    func close() {
        fail(HAPError(.connection, "the connection to \(host):\(port) was closed"))
    }

    /// Waits until the connection is closed, and tells why.
    func closed() async -> HAPError {
        await withCheckedContinuation { continuation in
            let failure: HAPError? = state.withLock { state in
                if state.failure == nil { state.closedWaiters.append(continuation) }
                return state.failure
            }
            if let failure { continuation.resume(returning: failure) }
        }
    }

    private func fail(_ error: HAPError) {
        let (pending, waiters, first) = state.withLock { state in
            let first = state.failure == nil
            if first { state.failure = error }
            defer { state.pending.removeAll(); state.closedWaiters.removeAll() }
            return (state.pending, state.closedWaiters, first)
        }
        if first { socket.shutdown() }
        for request in pending { request.continuation.resume(returning: .failure(error)) }
        for waiter in waiters { waiter.resume(returning: error) }
    }

    // MARK: Reading

    private func readUntilClosed() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while failure == nil {
            switch socket.read(into: &buffer, waitingAtMost: .milliseconds(100)) {
            case .data(let count):
                receive(buffer[0..<count])
            case .idle:
                failOverdueRequest()
            case .closed(let reason):
                fail(HAPError(.connection, "the accessory at \(host):\(port) closed the connection\(reason.map { ": \($0)" } ?? "")"))
            }
        }
        socket.close()
    }

    private func receive(_ bytes: ArraySlice<UInt8>) {
        let outcome: Result<([HTTPMessage], [Pending]), HAPError> = state.withLock { state in
            do {
                let plaintext: [UInt8]
                if var opener = state.opener {
                    plaintext = try opener.open(bytes)
                    state.opener = opener
                } else {
                    plaintext = Array(bytes)
                }
                let messages = try state.parser.feed(plaintext)
                var delivered: [HTTPMessage] = []
                var answered: [Pending] = []
                for message in messages {
                    if message.kind == .event {
                        delivered.append(message)
                    } else if !state.pending.isEmpty {
                        answered.append(state.pending.removeFirst())
                        delivered.append(message)
                    }
                }
                return .success((delivered, answered))
            } catch let error as FrameError {
                return .failure(HAPError(.malformed, "the accessory at \(host):\(port) sent a frame that does not decrypt: \(error)"))
            } catch {
                return .failure(HAPError(.malformed, "the accessory at \(host):\(port) sent a message that does not parse: \(error)"))
            }
        }
        switch outcome {
        case .success(let (messages, answered)):
            deliver(messages, to: answered)
        case .failure(let error):
            fail(error)
        }
    }

    /// Responses to their requests, in order; events to the handler.
    private func deliver(_ messages: [HTTPMessage], to answered: [Pending]) {
        var requests = answered[...]
        for message in messages {
            if message.kind == .event {
                onEvent(message)
            } else if let request = requests.popFirst() {
                request.continuation.resume(returning: .success(message))
            }
        }
    }

    private func failOverdueRequest() {
        let overdue = state.withLock { state in
            state.pending.first.map { $0.deadline < .now } ?? false
        }
        if overdue { fail(HAPError(.timeout, "the accessory at \(host):\(port) did not answer in time")) }
    }
}

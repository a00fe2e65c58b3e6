import HummingbirdWSClient
import Logging
import Synchronization
import Timing
import Wire

/// A client of the Matter Server's WebSocket API (`ws://HOST:5580/ws`): python-matter-server,
/// or the matter.js server that keeps its API.
///
/// ``withConnection(_:logger:_:)`` is the connection's scope: it connects, reads the server's
/// `server_info`, refuses a server of an API schema this client does not speak, and runs the
/// body with a ``Connection`` for commands and events; the connection ends when the body
/// returns or the server goes away.
public enum Client {
    /// Where the server is and how long its answers may take.
    public struct Configuration: Sendable {
        /// `ws://host:port/ws`.
        public var url: String
        /// The longest wait for an answer to a command (commissioning: ``commissionTimeout``).
        public var requestTimeout: Duration
        /// The longest wait for a commissioning (discovery, PASE, attestation, network, CASE, interview).
        public var commissionTimeout: Duration
        /// The largest message taken (the node list of a large home is several megabytes).
        public var maximumMessageSize: Int

        public init(url: String, requestTimeout: Duration = .seconds(30), commissionTimeout: Duration = .seconds(300),
                    maximumMessageSize: Int = 64 << 20) {
            self.url = url
            self.requestTimeout = requestTimeout
            self.commissionTimeout = commissionTimeout
            self.maximumMessageSize = maximumMessageSize
        }
    }

    /// Connects to the server and runs `body` with the connection; returns the body's result.
    /// The connection closes when the body returns or throws.
    /// - Throws: ``ServerError``: ``ServerError/unreachable(_:)`` when the server cannot be
    ///   reached or closes first, ``ServerError/incompatible(_:)`` for a server of another API
    ///   schema, ``ServerError/malformed(_:)``; or what the body threw.
    public static func withConnection<Result: Sendable>(_ configuration: Configuration, logger: Logger,
                                                        _ body: @escaping @Sendable (Connection) async throws -> Result) async throws -> Result {
        let outcome = Outcome<Result>()
        do {
            try await WebSocketClient.connect(url: configuration.url,
                                              configuration: .init(maxFrameSize: configuration.maximumMessageSize, autoPing: .disabled),
                                              logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var connection: Connection?
                    for try await message in inbound.messages(maxSize: configuration.maximumMessageSize) {
                        guard case .text(let text) = message else { continue }
                        let parsed: ServerMessage
                        do {
                            parsed = try ServerMessage(text: text)
                        } catch {
                            logger.warning("Matter Server: \(error)")
                            continue
                        }
                        if let connection {
                            connection.receive(parsed)
                            continue
                        }
                        guard case .serverInfo(let info) = parsed else {
                            throw ServerError.malformed("the first message is not the server's info")
                        }
                        guard info.isCompatible else { throw ServerError.incompatible(info) }
                        let made = Connection(info: info, configuration: configuration, outbound: outbound)
                        connection = made
                        group.addTask {
                            do {
                                let result = try await body(made)
                                outcome.set(.success(result))
                            } catch {
                                outcome.set(.failure(error))
                            }
                            try? await outbound.close(.normalClosure, reason: nil)
                        }
                    }
                    connection?.end(.unreachable("the server closed the connection"))
                    try await group.waitForAll()
                }
            }
        } catch let error as ServerError {
            throw error
        } catch {
            if let ended = outcome.value { return try ended.get() }
            throw ServerError.unreachable("\(error)")
        }
        guard let ended = outcome.value else { throw ServerError.unreachable("the server closed the connection") }
        return try ended.get()
    }
}

/// What a connection's body ended with, set once from its task.
private final class Outcome<Value: Sendable>: Sendable {
    private let result = Mutex<Swift.Result<Value, any Error>?>(nil)

    var value: Swift.Result<Value, any Error>? { result.withLock { $0 } }

    func set(_ value: Swift.Result<Value, any Error>) {
        result.withLock { $0 = value }
    }
}

/// One connection to the Matter Server: commands with their answers, and the server's events.
public final class Connection: Sendable {
    /// What the server said of itself.
    public let info: ServerInfo
    /// The server's events, in order, once ``startListening()`` asked for them; the stream ends
    /// with the connection.
    public let events: AsyncStream<ServerEvent>
    private let continuation: AsyncStream<ServerEvent>.Continuation
    private let configuration: Client.Configuration
    private let outbound: WebSocketOutboundWriter
    private let state = Mutex(State())

    private struct State {
        var nextID = 1
        var pending: [String: AsyncThrowingStream<JSON, any Error>.Continuation] = [:]
        var ended: ServerError?
    }

    init(info: ServerInfo, configuration: Client.Configuration, outbound: WebSocketOutboundWriter) {
        self.info = info
        self.configuration = configuration
        self.outbound = outbound
        (events, continuation) = AsyncStream.makeStream()
    }

    /// Sends command `name` with `arguments` and returns the server's result.
    /// - Throws: ``ServerError``: the server's refusal, a timeout (after `timeout`, by default the
    ///   configuration's request timeout), or the end of the connection.
    public func send(_ name: String, _ arguments: [String: JSON]? = nil, timeout: Duration? = nil) async throws(ServerError) -> JSON {
        let limit = timeout ?? configuration.requestTimeout
        let outcome = await withDeadline(ContinuousClock.now + limit, on: ContinuousClock()) { () async -> Swift.Result<JSON, ServerError> in
            do {
                return .success(try await self.exchange(name, arguments))
            } catch let error as ServerError {
                return .failure(error)
            } catch {
                return .failure(.unreachable("\(error)"))
            }
        }
        switch outcome {
        case .success(let result)?: return result
        case .failure(let error)?: throw error
        case nil: throw .timedOut("\(name) within \(limit)")
        }
    }

    /// `start_listening`: every node the server has; from now on its events arrive on ``events``.
    public func startListening() async throws(ServerError) -> [NodeData] {
        let result = try await send("start_listening")
        guard let nodes = result.array else { throw .malformed("start_listening's result is not a list of nodes") }
        var parsed: [NodeData] = []
        for node in nodes { parsed.append(try NodeData(json: node)) }
        return parsed
    }

    private func exchange(_ name: String, _ arguments: [String: JSON]?) async throws -> JSON {
        let (answer, waiting) = AsyncThrowingStream<JSON, any Error>.makeStream()
        let registered = state.withLock { state -> Swift.Result<String, ServerError> in
            if let ended = state.ended { return .failure(ended) }
            defer { state.nextID += 1 }
            state.pending[String(state.nextID)] = waiting
            return .success(String(state.nextID))
        }
        let id = try registered.get()
        defer { state.withLock { _ = $0.pending.removeValue(forKey: id) } }
        var message: [String: JSON] = ["message_id": .string(id), "command": .string(name)]
        if let arguments { message["args"] = .object(arguments) }
        do {
            try await outbound.write(.text(JSON.object(message).text))
        } catch {
            throw ServerError.unreachable("sending \(name): \(error)")
        }
        for try await result in answer { return result }
        try Task.checkCancellation()
        throw ServerError.unreachable("the connection ended before the answer to \(name)")
    }

    private func finish(_ id: String, with result: Swift.Result<JSON, ServerError>) {
        guard let waiting = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        switch result {
        case .success(let json): waiting.yield(json)
        case .failure(let error): waiting.finish(throwing: error)
        }
        waiting.finish()
    }

    func receive(_ message: ServerMessage) {
        switch message {
        case .result(let id, let result): finish(id, with: .success(result))
        case .error(let id, let code, let details): finish(id, with: .failure(.refused(code, details)))
        case .event(let event): continuation.yield(event)
        case .serverInfo: break
        }
    }

    /// The connection ended: waiting commands fail with `error`, the event stream ends.
    func end(_ error: ServerError) {
        let pending = state.withLock { state in
            state.ended = state.ended ?? error
            defer { state.pending = [:] }
            return state.pending
        }
        for (_, waiting) in pending { waiting.finish(throwing: error) }
        continuation.finish()
    }
}

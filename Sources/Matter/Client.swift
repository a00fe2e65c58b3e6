import HummingbirdWSClient
import Logging
import LoopExecutor
import NIOCore
import NIOPosix
import Synchronization
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
        // The connection lives on one event loop, and everything of it runs there: the answers
        // read, the commands written, the body (see ``Connection/send(_:_:timeout:)``).
        let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
        do {
            try await WebSocketClient.connect(url: configuration.url,
                                              configuration: .init(maxFrameSize: configuration.maximumMessageSize, autoPing: .disabled),
                                              eventLoopGroup: executor.loop, logger: logger) { inbound, outbound, _ in
                try await withTaskExecutorPreference(executor) {
                    try await serve(inbound: inbound, outbound: outbound, executor: executor, configuration: configuration, logger: logger,
                                    outcome: outcome, body)
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

    /// Reads the server's messages: the first is its info (refused when incompatible), then the
    /// body runs beside the reading with the ``Connection`` the rest is handed to.
    private static func serve<Result: Sendable>(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, executor: EventLoopTaskExecutor,
                                                configuration: Configuration, logger: Logger, outcome: Outcome<Result>,
                                                _ body: @escaping @Sendable (Connection) async throws -> Result) async throws {
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
                let made = Connection(info: info, configuration: configuration, outbound: outbound, executor: executor)
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
}

/// What a connection's body ended with, set once from its task.
final class Outcome<Value: Sendable>: Sendable {
    private let result = Mutex<Swift.Result<Value, any Error>?>(nil)

    var value: Swift.Result<Value, any Error>? { result.withLock { $0 } }

    func set(_ value: Swift.Result<Value, any Error>) {
        result.withLock { $0 = value }
    }
}

/// One connection to the Matter Server: commands with their answers, and the server's events.
///
/// The connection runs on one event loop (``taskExecutor``): a command is written, its answer
/// read and the waiting command resumed on that loop's thread, and its time limit is one of the
/// loop's scheduled tasks, so a command costs no thread switch beyond the caller's own.
public final class Connection: Sendable {
    /// What the server said of itself.
    public let info: ServerInfo
    /// The server's events, in order, once ``startListening()`` asked for them; the stream ends
    /// with the connection.
    public let events: AsyncStream<ServerEvent>
    /// The connection's event loop as a task executor: work run under it
    /// (`withTaskExecutorPreference`) sends commands without a thread switch.
    public var taskExecutor: any TaskExecutor { executor }
    private let continuation: AsyncStream<ServerEvent>.Continuation
    private let configuration: Client.Configuration
    private let outbound: WebSocketOutboundWriter
    private let executor: EventLoopTaskExecutor
    private let state = Mutex(State())

    /// A command waiting for its answer: completed once, by the answer, its time limit, its
    /// caller's cancellation or the end of the connection, whichever comes first.
    private struct Waiting {
        var answer: EventLoopPromise<JSON>
        var limit: Scheduled<Void>?
    }

    private struct State {
        var nextID = 1
        var pending: [String: Waiting] = [:]
        var ended: ServerError?
    }

    init(info: ServerInfo, configuration: Client.Configuration, outbound: WebSocketOutboundWriter, executor: EventLoopTaskExecutor) {
        self.info = info
        self.configuration = configuration
        self.outbound = outbound
        self.executor = executor
        (events, continuation) = AsyncStream.makeStream()
    }

    /// Sends command `name` with `arguments` and returns the server's result.
    /// - Throws: ``ServerError``: the server's refusal, a timeout (after `timeout`, by default the
    ///   configuration's request timeout), or the end of the connection.
    public func send(_ name: String, _ arguments: [String: JSON]? = nil, timeout: Duration? = nil) async throws(ServerError) -> JSON {
        let limit = timeout ?? configuration.requestTimeout
        let outcome = await withTaskExecutorPreference(executor) { () async -> Swift.Result<JSON, ServerError> in
            await self.exchange(name, arguments, within: limit)
        }
        return try outcome.get()
    }

    /// `start_listening`: every node the server has; from now on its events arrive on ``events``.
    public func startListening() async throws(ServerError) -> [NodeData] {
        let result = try await send("start_listening")
        guard let nodes = result.array else { throw .malformed("start_listening's result is not a list of nodes") }
        var parsed: [NodeData] = []
        for node in nodes { parsed.append(try NodeData(json: node)) }
        return parsed
    }

    private func exchange(_ name: String, _ arguments: [String: JSON]?, within limit: Duration) async -> Swift.Result<JSON, ServerError> {
        let loop = executor.loop
        let answer = loop.makePromise(of: JSON.self)
        let registered = state.withLock { state -> Swift.Result<String, ServerError> in
            if let ended = state.ended { return .failure(ended) }
            defer { state.nextID += 1 }
            state.pending[String(state.nextID)] = Waiting(answer: answer)
            return .success(String(state.nextID))
        }
        let id: String
        switch registered {
        case .success(let registeredID): id = registeredID
        case .failure(let error):
            answer.fail(error)
            return .failure(error)
        }
        let scheduled = loop.scheduleTask(in: TimeAmount(limit)) { self.finish(id, with: .failure(.timedOut("\(name) within \(limit)"))) }
        let waiting = state.withLock { state in
            state.pending[id]?.limit = scheduled
            return state.pending[id] != nil
        }
        if !waiting { scheduled.cancel() }
        var message: [String: JSON] = ["message_id": .string(id), "command": .string(name)]
        if let arguments { message["args"] = .object(arguments) }
        return await withTaskCancellationHandler {
            // Not sent when it ended before (the connection's end, a caller cancelled at once).
            if state.withLock({ $0.pending[id] != nil }) {
                do {
                    try await outbound.write(.text(JSON.object(message).text))
                } catch {
                    finish(id, with: .failure(.unreachable("sending \(name): \(error)")))
                }
            }
            do {
                return .success(try await answer.futureResult.get())
            } catch let error as ServerError {
                return .failure(error)
            } catch {
                return .failure(.unreachable("\(error)"))
            }
        } onCancel: {
            finish(id, with: .failure(.unreachable("\(name) was cancelled")))
        }
    }

    private func finish(_ id: String, with result: Swift.Result<JSON, ServerError>) {
        guard let waiting = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        waiting.limit?.cancel()
        waiting.answer.completeWith(result.mapError { $0 as any Error })
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
        for (_, waiting) in pending {
            waiting.limit?.cancel()
            waiting.answer.fail(error)
        }
        continuation.finish()
    }
}

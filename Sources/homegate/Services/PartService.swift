import Logging
import ServiceLifecycle

/// A long-running part of the gateway as a service of the group: it runs until the group shuts
/// down gracefully (then it is cancelled, in its turn), and a failure ends the whole group with a
/// clear log line naming the part, never vanishing. A part that finishes its work early (a
/// simulator without drifting sensors) stays in the group until the shutdown.
struct PartService: Service, CustomStringConvertible {
    /// What the part is, for the log (`engine`, `simulator`, `HAP devices`, ...).
    let name: String
    let logger: Logger
    let body: @Sendable () async throws -> Void

    init(_ name: String, logger: Logger, _ body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.logger = logger
        self.body = body
    }

    var description: String { name }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await body() }
            try await gracefulShutdown()
        } catch is CancellationError where Task.isShuttingDownGracefully || Task.isCancelled {
            // Stopped in its turn at shutdown: not a failure.
        } catch {
            logger.critical("the \(name) stopped with an error: \(error); the gateway shuts down")
            throw error
        }
    }
}

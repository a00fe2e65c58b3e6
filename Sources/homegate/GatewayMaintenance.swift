import Foundation
import Gateway
import HomeStore
import Logging
import ServiceLifecycle
import WebUI

import Glibc

/// The page's backup and restore (docs/web.md): a backup of the running gateway as
/// `homegate backup` takes it, and a restore checked whole, staged next to the data directory
/// as `homegate restore --force` stages it, and put in place once the gateway's services have
/// stopped; then the gateway starts again as the same binary with the same arguments
/// (``RestartService``, ``RunCommand``).
actor GatewayMaintenance {
    private let dataDirectory: String
    private let configurationFile: String
    private let logger: Logger
    /// The folder staged by an accepted restore, put in place at the restart.
    private(set) var staged: String?
    private let restartRequests: AsyncStream<Void>
    private let restartContinuation: AsyncStream<Void>.Continuation

    init(dataDirectory: String, configurationFile: String, logger: Logger) {
        self.dataDirectory = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        self.configurationFile = configurationFile
        self.logger = logger
        (restartRequests, restartContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// What the web page calls.
    nonisolated var forWebPage: Maintenance {
        Maintenance(backup: { await self.backup() }, restore: { await self.restore($0) })
    }

    /// The backup file's bytes: the store (online backup), the data directory's other files and
    /// the configuration file.
    func backup() -> Result<[UInt8], Maintenance.Refusal> {
        do {
            let scratch = try Backup.makeTemporaryDirectory(next: URL(fileURLWithPath: dataDirectory), tag: "backup")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let backup = try HomeStore.backup(directory: dataDirectory, configuration: configurationFile,
                                              homegateVersion: Gateway.version, scratch: scratch)
            return .success(backup.encoded())
        } catch {
            return .failure(.init(.unavailable, error.description))
        }
    }

    /// Checks `bytes` whole, stages the data directory they hold and asks for the restart.
    func restore(_ bytes: [UInt8]) -> Result<String, Maintenance.Refusal> {
        guard staged == nil else { return .failure(.init(.busy, "a restore is already under way; the gateway restarts")) }
        let backup: Backup
        do {
            backup = try Backup.decode(bytes, file: "the uploaded file")
        } catch {
            return .failure(.init(.invalidBackup, "\(error.description); nothing was restored"))
        }
        do {
            staged = try backup.stage(next: dataDirectory)
        } catch {
            let code: Maintenance.Refusal.Code = error.kind.isDamagedFile ? .invalidBackup : .unavailable
            return .failure(.init(code, "\(error.description); nothing was restored"))
        }
        restartContinuation.yield()
        let formatter = ISO8601DateFormatter()
        let files = backup.dataEntries.count
        return .success("the backup taken \(formatter.string(from: backup.created)) by HomeGate \(backup.homegateVersion) (\(files) file\(files == 1 ? "" : "s")) is staged; the gateway restarts on it (its configuration file stays as it is)")
    }

    /// Waits for an accepted restore (returns) or for the task's cancellation.
    func restartRequested() async -> Bool {
        for await _ in restartRequests { return true }
        return false
    }

    /// After the services stopped: puts the staged folder in place of the data directory. Nil
    /// when there is no restore to do; else whether the data directory is the restored one now.
    func finishRestore() -> Bool? {
        guard let staging = staged else { return nil }
        staged = nil
        do {
            try Backup.putInPlace(staging: staging, directory: dataDirectory)
            logger.notice("the restored backup is in place in \(dataDirectory)")
            return true
        } catch {
            logger.error("the restored backup could not be put in place: \(error); the gateway restarts on its data as it was")
            return false
        }
    }

    /// Removes a staged folder that will not be used (the gateway stops for another reason).
    func discardStaged() {
        guard let staging = staged else { return }
        staged = nil
        try? FileManager.default.removeItem(atPath: staging)
    }

    /// Starts this binary again with the same arguments (`/proc/self/exe`: the same file even if
    /// it was replaced on disk since); returns only if that fails.
    static func execAgain(logger: Logger) {
        logger.notice("HomeGate restarts: \(CommandLine.arguments.joined(separator: " "))")
        fflush(nil) // every output stream
        // What a new process would start with: the signals the service group ignored (to handle
        // them itself) back to their defaults, none blocked. (An exec keeps both.)
        for signal in [SIGTERM, SIGINT, SIGHUP] { Glibc.signal(signal, SIG_DFL) }
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        logger.critical("cannot start again (execv /proc/self/exe): \(String(cString: strerror(errno)))")
    }
}

/// A service that ends the gateway's group gracefully when a restore asks for the restart (the
/// group's `successTerminationBehavior: .gracefullyShutdownGroup`); at a shutdown it just ends.
struct RestartService: Service, CustomStringConvertible {
    let maintenance: GatewayMaintenance
    let logger: Logger

    var description: String { "restart on restore" }

    func run() async throws {
        let requested = await cancelWhenGracefulShutdown { await maintenance.restartRequested() }
        if requested { logger.notice("a backup was restored from the web page: the gateway stops its parts and starts again") }
    }
}

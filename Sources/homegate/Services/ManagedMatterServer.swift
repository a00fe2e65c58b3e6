import Foundation
import Logging

/// `matter: managed: true`: HomeGate runs the Matter Server itself, as a child process that
/// lives as long as the gateway. Its storage (fabric credentials, nodes) is under the data
/// directory (`matter/`, mode 0700), its log in `matter/server.log`; it listens on the loopback
/// interface only. A server that exits is started again after a pause (the driver's backoff
/// covers the gap: the Matter accessories are unreachable meanwhile).
struct ManagedMatterServer {
    let command: String
    let port: Int
    let storage: String
    let logger: Logger

    /// Runs the server until cancelled; then stops it (SIGTERM, SIGKILL after 10 s).
    func run() async throws {
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        while !Task.isCancelled {
            let (process, exited) = try start()
            logger.info("Matter Server started (\(command), pid \(process.processIdentifier), port \(port), storage \(storage))")
            await withTaskCancellationHandler {
                // Waits for the exit even once cancelled (the stop below ends it): the gateway
                // stops only after the server has.
                await Task { for await _ in exited {} }.value
            } onCancel: {
                stop(process)
            }
            if Task.isCancelled { break }
            logger.warning("the managed Matter Server exited with status \(process.terminationStatus); starting it again in 5 s (log: \(storage)/server.log)")
            try await Task.sleep(for: .seconds(5))
        }
    }

    /// Starts the server; the stream ends when it exits.
    private func start() throws -> (Process, AsyncStream<Void>) {
        let process = Process()
        let (exited, continuation) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in continuation.finish() }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command, "--storage-path", storage, "--port", String(port), "--listen-address", "127.0.0.1"]
        let logPath = storage + "/server.log"
        if !FileManager.default.fileExists(atPath: logPath),
           !FileManager.default.createFile(atPath: logPath, contents: nil, attributes: [.posixPermissions: 0o600]) {
            throw ManagedServerError(description: "cannot create the Matter Server's log \(logPath)")
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        try log.seekToEnd()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw ManagedServerError(description: "cannot start the Matter Server \"\(command)\": \(error) (scripts/setup --matter installs it)")
        }
        return (process, exited)
    }

    private func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
    }
}

struct ManagedServerError: Error, CustomStringConvertible {
    let description: String
}

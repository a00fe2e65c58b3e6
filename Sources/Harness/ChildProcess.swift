import Foundation

/// A child process started with a clean signal mask, its output recorded.
///
/// Foundation's `Process` starts children from a Dispatch thread whose mask blocks SIGTERM,
/// SIGINT and SIGHUP; the child inherits the mask and ignores those signals. A broker that
/// cannot be stopped, or a gateway whose shutdown cannot be tested, is no use to a test, so this
/// spawns with `posix_spawn`, an empty signal mask and default signal dispositions.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    /// Standard output and standard error, interleaved as they arrive (when not sent to a file).
    public let output = Recorder<String>("")
    /// The exit status once it exited, or minus the signal that ended it.
    public let exit = Recorder<Int32?>(nil)
    /// Whether all of the output has been read (the pipe reached its end).
    private let outputComplete = Recorder<Bool>(false)
    /// The write end of its standard input, when started with `input: true`.
    private let inputDescriptor: Int32?

    /// Starts `executable`; its output goes to `outputFile` if given, else into ``output``. With
    /// `input`, its standard input is a pipe that ``writeInput(_:)`` writes to; else `/dev/null`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], outputFile: String? = nil, input: Bool = false) throws {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        var pipeEnds: [Int32] = [-1, -1]
        if let outputFile {
            posix_spawn_file_actions_addopen(&fileActions, 1, outputFile, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&fileActions, 1, 2)
        } else {
            // Close-on-exec from the start (the child's own copies, made by dup2, are not): a child
            // another test spawns meanwhile must not hold the write end open, or this output never ends.
            guard pipe2(&pipeEnds, O_CLOEXEC) == 0 else { throw FixtureError("pipe2() failed") }
            posix_spawn_file_actions_adddup2(&fileActions, pipeEnds[1], 1)
            posix_spawn_file_actions_adddup2(&fileActions, pipeEnds[1], 2)
            posix_spawn_file_actions_addclose(&fileActions, pipeEnds[0])
        }
        var inputEnds: [Int32] = [-1, -1]
        if input {
            // Close-on-exec, so other children spawned meanwhile do not hold the write end open.
            guard pipe2(&inputEnds, O_CLOEXEC) == 0 else { throw FixtureError("pipe2() failed") }
            posix_spawn_file_actions_adddup2(&fileActions, inputEnds[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &fileActions, &attributes, argv, envp)
        if outputFile == nil { close(pipeEnds[1]) }
        if input { close(inputEnds[0]) }
        inputDescriptor = input ? inputEnds[1] : nil
        guard rc == 0 else {
            if input { close(inputEnds[1]) }
            if outputFile == nil { close(pipeEnds[0]) }
            throw FixtureError("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        if outputFile == nil { startReading(pipeEnds[0]) } else { outputComplete.update { $0 = true } }
        startWaiting()
    }

    deinit {
        if exit.value == nil { kill(pid, SIGKILL) }
        if let inputDescriptor { close(inputDescriptor) }
    }

    /// Writes `text` to the process's standard input (started with `input: true`).
    public func writeInput(_ text: String) throws {
        guard let inputDescriptor else { throw FixtureError("process \(pid) was started without an input pipe") }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(inputDescriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw FixtureError("cannot write to process \(pid): errno \(errno)") }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Sends a signal (SIGTERM, SIGINT, SIGKILL, ...).
    public func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Stops the process: SIGTERM, then SIGKILL if it has not ended within `grace`; returns once
    /// it has ended (or 5 s after the SIGKILL). Awaits without holding a thread, so a test may
    /// stop its children while others run.
    public func stop(grace: Duration = .seconds(10)) async {
        guard exit.value == nil else { return }
        signal(SIGTERM)
        if (try? await waitForExit(timeout: grace)) != nil { return }
        signal(SIGKILL)
        _ = try? await waitForExit(timeout: .seconds(5))
    }

    /// Waits for the process to end and its output to be read; returns its exit status, or minus
    /// the signal that ended it.
    public func waitForExit(timeout: Duration = HangGuard.standard) async throws -> Int32 {
        do {
            let status = try await exit.wait(timeout: timeout, for: "process \(pid) to exit") { $0 }
            _ = try await outputComplete.wait(timeout: timeout, for: "the output of process \(pid)") { $0 ? true : nil }
            return status
        } catch {
            throw FixtureError("process \(pid) did not exit within \(timeout); output:\n\(output.value)")
        }
    }

    private func startReading(_ descriptor: Int32) {
        let output = output
        let complete = outputComplete
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                output.update { $0 += String(decoding: buffer[0..<count], as: UTF8.self) }
            }
            close(descriptor)
            complete.update { $0 = true }
        }
        thread.start()
    }

    private func startWaiting() {
        let pid = pid
        let exit = exit
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let signal = status & 0x7F
            let code = signal == 0 ? (status >> 8) & 0xFF : -signal
            exit.update { $0 = code }
        }
        thread.start()
    }
}

/// glibc's `pipe2(2)`, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`): a pipe
/// whose ends are close-on-exec from the start, with no window for another thread's spawn.
@_silgen_name("pipe2")
private func pipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

import ArgumentParser
import Foundation
import HomeGateConfig
import MQTT

import Glibc

/// `homegate passwd --file FILE --user NAME`: adds a user to a Mosquitto password file, or
/// changes its password, with Debian's `mosquitto_passwd` (docs/roles.md).
///
/// The password never appears on a command line: it is read from a file, an environment
/// variable or the terminal, and handed to `mosquitto_passwd` on its standard input (it asks
/// twice; both lines are written), not with `-b`, which would show it in `/proc/<pid>/cmdline`.
struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Add a user to a Mosquitto password file, or change its password (runs mosquitto_passwd).",
        discussion: "The password comes from --password-file (its first line), --password-env, or, when neither is given, the terminal (asked twice, not echoed). A new file is created with mode 0600; an existing file keeps its mode and owner. Exit codes: 0 done, 64 bad command line, 1 anything else (mosquitto_passwd missing or failing)."
    )

    @Option(name: .long, help: ArgumentHelp("The Mosquitto password file (Mosquitto's password_file); created if missing.", valueName: "file"))
    var file: String

    @Option(name: .long, help: ArgumentHelp("The user name.", valueName: "name"))
    var user: String

    @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from the first line of this file.", valueName: "file"))
    var passwordFile: String?

    @Option(name: .customLong("password-env"), help: ArgumentHelp("Read the password from this environment variable.", valueName: "variable"))
    var passwordEnv: String?

    /// The longest password taken: well under mosquitto_passwd's line buffer (65,500 bytes).
    static let maximumPasswordBytes = 65_000

    func run() throws {
        if let problem = UsersFile.userNameProblem(user) {
            printError("--user: \(problem)")
            throw HomeGateExit.usage
        }
        if passwordFile != nil && passwordEnv != nil {
            printError("give either --password-file or --password-env, not both")
            throw HomeGateExit.usage
        }
        let password = try readPassword()
        if let problem = Self.passwordProblem(password) {
            printError(problem)
            throw HomeGateExit.usage
        }
        let tool: String
        do {
            tool = try MosquittoPasswd.locate()
        } catch {
            printError(error.description)
            throw ExitCode.failure
        }
        // mosquitto_passwd keeps a copy of the old file (FILE.tmp) while it works: private too.
        umask(0o077)
        let path = file.hasPrefix("-") ? "./" + file : file
        let existed = FileManager.default.fileExists(atPath: path)
        let hadUser = existed && Self.fileNames(path).contains(user)
        if !existed {
            // Created here with mode 0600, so the file is never readable by others, not even
            // for a moment; mosquitto_passwd -c then truncates it and keeps the mode.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard descriptor >= 0 else {
                printError("cannot create \(file): \(String(cString: strerror(errno)))")
                throw ExitCode.failure
            }
            close(descriptor)
        }
        do {
            try MosquittoPasswd.run(tool, arguments: (existed ? [] : ["-c"]) + [path, user], password: password)
        } catch {
            if !existed { unlink(path) }
            printError(error.description)
            throw ExitCode.failure
        }
        if !existed { chmod(path, 0o600) }
        print(hadUser ? "changed the password of \(user) in \(file)" : "added \(user) to \(file)\(existed ? "" : " (a new file, mode 0600)")")
        if !existed {
            print("Mosquitto reads it as its own user: chown mosquitto: \(file)")
        }
        print("Mosquitto reads it as password_file after a reload: systemctl reload mosquitto (or kill -HUP its pid).")
    }

    private func readPassword() throws -> String {
        do {
            if let passwordFile { return try Secret.fromFile(passwordFile).value }
            if let passwordEnv { return try Secret.fromEnvironment(passwordEnv).value }
        } catch {
            printError(error.description)
            throw HomeGateExit.usage
        }
        guard isatty(STDIN_FILENO) == 1 else {
            printError("no password given: use --password-file or --password-env, or run it on a terminal to be asked")
            throw HomeGateExit.usage
        }
        guard let first = HiddenInput.read(prompt: "Password for \(user): "), !first.isEmpty else {
            printError("the password must not be empty")
            throw HomeGateExit.usage
        }
        guard let second = HiddenInput.read(prompt: "Again: "), second == first else {
            printError("the passwords do not match")
            throw HomeGateExit.usage
        }
        return first
    }

    /// Why `password` cannot go through mosquitto_passwd's standard input; nil if it can.
    static func passwordProblem(_ password: String) -> String? {
        if password.isEmpty { return "the password must not be empty" }
        if password.utf8.contains(0) { return "the password contains a NUL character" }
        if password.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) { return "the password contains a line break" }
        if password.utf8.count > maximumPasswordBytes { return "the password is longer than \(maximumPasswordBytes) bytes" }
        return nil
    }

    /// The user names in a password file (`name:hash` lines).
    static func fileNames(_ path: String) -> Set<String> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return Set(text.split(whereSeparator: \.isNewline).compactMap { line in
            line.firstIndex(of: ":").map { String(line[..<$0]) }
        })
    }
}

/// Running Debian's `mosquitto_passwd`.
enum MosquittoPasswd {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Its path: on PATH, else in /usr/bin.
    static func locate() throws(Failure) -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin"]
        for folder in folders where !folder.isEmpty {
            let candidate = folder + "/mosquitto_passwd"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure(description: "mosquitto_passwd not found on PATH or in /usr/bin: install it with apt-get install mosquitto")
    }

    /// Runs it without `-b`: it asks for the password twice on its standard input, which gets
    /// the password twice, one per line. Its prompts are discarded; its errors are reported.
    static func run(_ tool: String, arguments: [String], password: String) throws(Failure) {
        // A mosquitto_passwd that exits before reading must not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot run \(tool): \(error.localizedDescription)")
        }
        var failure: String?
        do {
            try input.fileHandleForWriting.write(contentsOf: Data("\(password)\n\(password)\n".utf8))
        } catch {
            failure = "cannot hand the password to mosquitto_passwd: \(error.localizedDescription)"
        }
        try? input.fileHandleForWriting.close()
        let message = (try? errors.fileHandleForReading.readToEnd()).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        process.waitUntilExit()
        let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let how = process.terminationReason == .exit ? "exited with \(process.terminationStatus)" : "was killed by signal \(process.terminationStatus)"
            throw Failure(description: "mosquitto_passwd \(how)\(text.isEmpty ? "" : ": \(text)")")
        }
        if let failure { throw Failure(description: failure) }
    }
}

/// Reading a line from the terminal without echoing it.
enum HiddenInput {
    /// The terminal's settings while echo is off, to put back if a signal ends the process.
    nonisolated(unsafe) private static var saved: termios?

    /// Writes `prompt` to standard error and reads a line from standard input (a terminal) with
    /// echo off; nil at the end of the input.
    static func read(prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return readLine() }
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO)
        saved = original
        let handler: @convention(c) (Int32) -> Void = { signal in
            if var terminal = HiddenInput.saved { tcsetattr(STDIN_FILENO, TCSANOW, &terminal) }
            Glibc.signal(signal, SIG_DFL)
            raise(signal)
        }
        let previousInterrupt = signal(SIGINT, handler)
        let previousTerminate = signal(SIGTERM, handler)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        let line = readLine(strippingNewline: true)
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
        signal(SIGINT, previousInterrupt)
        signal(SIGTERM, previousTerminate)
        saved = nil
        FileHandle.standardError.write(Data("\n".utf8))
        return line
    }
}

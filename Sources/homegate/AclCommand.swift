import ArgumentParser
import Foundation
import HomeGateConfig

import Glibc

/// `homegate acl --users FILE --out FILE`: writes the Mosquitto ACL file that gives each user of
/// the users file its role (docs/roles.md).
struct AclCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "acl",
        abstract: "Write a Mosquitto ACL file from a users file: admins may do everything, guests may read values, set and get characteristics, identify and execute action sets.",
        discussion: "The file is written with mode 0640, atomically (a temporary file next to it, then a rename); an existing file's owner and group are kept. Reload Mosquitto (SIGHUP) to apply it. Exit codes: 0 written, 64 bad command line, 78 bad users file, 1 the file cannot be written."
    )

    @Option(name: .long, help: ArgumentHelp("The users file (YAML: base_topic, gateway_user, users with name and role).", valueName: "file"))
    var users: String

    @Option(name: .long, help: ArgumentHelp("Where to write the ACL file (Mosquitto's acl_file); - prints it instead.", valueName: "file"))
    var out: String

    @Option(name: .customLong("home-assistant-prefix"), help: ArgumentHelp("The Home Assistant discovery prefix the gateway publishes under.", valueName: "prefix"))
    var homeAssistantPrefix = "homeassistant"

    func run() throws {
        let file: UsersFile
        do {
            file = try UsersFile.load(path: users)
        } catch {
            printError(error.description)
            throw HomeGateExit.configuration
        }
        if let problem = file.homeAssistantPrefixProblem(homeAssistantPrefix) {
            printError("--home-assistant-prefix: \(problem)")
            throw HomeGateExit.usage
        }
        let text = file.mosquittoACL(homeAssistantPrefix: homeAssistantPrefix)
        if out == "-" {
            print(text, terminator: "")
            return
        }
        do {
            try AtomicFile.write(text, to: out, mode: 0o640)
        } catch {
            printError("cannot write \(out): \(error)")
            throw ExitCode.failure
        }
        let admins = file.users.filter { $0.role == .admin }.map(\.name)
        let guests = file.users.filter { $0.role == .guest }.map(\.name)
        let assistant = file.users.filter(\.homeAssistant).map(\.name)
        print("wrote \(out): the Mosquitto ACL for base topic \(file.baseTopic) (Home Assistant prefix \(homeAssistantPrefix))")
        print("  gateway: \(file.gatewayUser) (everything under \(file.baseTopic)/ and \(homeAssistantPrefix)/)")
        print("  admins:  \(admins.isEmpty ? "none" : admins.joined(separator: ", "))")
        print("  guests:  \(guests.isEmpty ? "none" : guests.joined(separator: ", "))")
        if !assistant.isEmpty {
            print("  also read \(homeAssistantPrefix)/# and write \(homeAssistantPrefix)/status: \(assistant.joined(separator: ", "))")
        }
        print("Mosquitto reads it as acl_file after a reload: systemctl reload mosquitto (or kill -HUP its pid).")
    }
}

/// Writing a file so that readers see the old contents or the new, never a part: a temporary
/// file in the same folder, flushed, then renamed over the target.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes `text` to `path` with `mode`. An existing file's owner and group are carried over
    /// (Mosquitto, which reads it as its own user, keeps its access).
    static func write(_ text: String, to path: String, mode: mode_t) throws(Failure) {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var existing = stat()
        let replacing = stat(path, &existing) == 0
        if replacing && (existing.st_mode & S_IFMT) == S_IFDIR { throw Failure(description: "it is a directory") }
        var template = Array(((folder.isEmpty ? "." : folder) + "/.\(name).tmp-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failure("cannot create a temporary file in \(folder.isEmpty ? "." : folder)") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var closed = false
        defer {
            if !closed { close(descriptor) }
        }
        do throws(Failure) {
            guard fchmod(descriptor, mode) == 0 else { throw failure("cannot set the mode") }
            if replacing, existing.st_uid != geteuid() || existing.st_gid != getegid() {
                guard fchown(descriptor, existing.st_uid, existing.st_gid) == 0 else {
                    throw failure("cannot give the new file the owner and group of the old one (uid \(existing.st_uid), gid \(existing.st_gid))")
                }
            }
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw failure("cannot write") }
                written += count
            }
            guard fsync(descriptor) == 0 else { throw failure("cannot flush") }
            closed = true
            guard close(descriptor) == 0 else { throw failure("cannot close") }
            guard rename(temporary, path) == 0 else { throw failure("cannot rename \(temporary) to it") }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// A failure of the system call just made: `what`, then errno's text.
    private static func failure(_ what: @autoclosure () -> String) -> Failure {
        let code = errno
        return Failure(description: "\(what()): \(String(cString: strerror(code)))")
    }
}

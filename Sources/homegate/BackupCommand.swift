import ArgumentParser
import Foundation
import Gateway
import HomeStore

import Glibc

/// `homegate backup --data-dir DIR [--config FILE] OUTPUT`: the store, the pairing keys and the
/// configuration in one file, taken while the gateway runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write the data directory (store and pairing keys) and the configuration file to one backup file.",
        discussion: "Safe while the gateway runs: the database is copied with SQLite's online backup. OUTPUT is created with mode 0600 (it holds the pairing keys); an existing OUTPUT is replaced only once the new backup is complete. Exit codes: 66 no data directory or store, 74 a file cannot be read or written."
    )

    @Option(name: .customLong("data-dir"), help: "The data directory to back up.")
    var dataDirectory: String

    @Option(name: .long, help: "A configuration file to put in the backup too.")
    var config: String?

    @Argument(help: "The backup file to write.")
    var output: String

    func run() throws {
        let directory = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        let target = URL(fileURLWithPath: output).standardizedFileURL
        let backup: Backup
        let bytes: [UInt8]
        do {
            let scratch = try Backup.makeTemporaryDirectory(next: target, tag: "backup")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            backup = try HomeStore.backup(directory: directory, configuration: config, homegateVersion: Gateway.version, scratch: scratch)
            bytes = backup.encoded()
            // Written whole beside OUTPUT with mode 0600 from its creation, then renamed over it.
            let partial = URL(fileURLWithPath: scratch).appendingPathComponent("backup").path
            try Backup.writeFile(partial, contents: bytes, mode: 0o600, exclusive: true)
            guard rename(partial, target.path) == 0 else {
                printError("\(target.path): cannot write it: \(String(cString: strerror(errno)))")
                throw HomeGateExit.ioError
            }
        } catch let error as BackupError {
            printError(error.description)
            throw error.kind == .missing ? HomeGateExit.noInput : HomeGateExit.ioError
        }
        let files = backup.dataEntries.count
        let configuration = backup.configuration.map { ", the configuration file \($0.name)" } ?? ", no configuration file"
        print("backed up \(directory) (\(files) file\(files == 1 ? "" : "s")\(configuration)) to \(target.path), \(bytes.count) bytes")
    }
}

/// `homegate restore INPUT --data-dir DIR [--force] [--config-out FILE]`: puts a backup back.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup back into a data directory (and its configuration file where --config-out says).",
        discussion: "The whole file is checked (magic, version, checksums, sizes) before anything is written. A non-empty data directory is refused without --force. The files are written into a new folder next to DIR, the database is opened and checked there, and the folder then takes DIR's place in one step: a failed restore changes nothing. A DIR a running gateway uses is refused: stop it first. Exit codes: 65 a damaged backup, 66 no such file, 73 DIR (or the --config-out file) is not empty without --force, 74 a file cannot be written, 75 a gateway runs on DIR."
    )

    @Argument(help: "The backup file.")
    var input: String

    @Option(name: .customLong("data-dir"), help: "The data directory to restore into.")
    var dataDirectory: String

    @Flag(name: .long, help: "Replace a non-empty data directory (and an existing --config-out file).")
    var force = false

    @Option(name: .customLong("config-out"), help: "Where to write the configuration file the backup holds.")
    var configOut: String?

    func run() throws {
        let file = URL(fileURLWithPath: input).standardizedFileURL.path
        let directory = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        guard let data = FileManager.default.contents(atPath: file) else {
            let reason = FileManager.default.fileExists(atPath: file) ? "cannot read it" : "no such file"
            printError("\(file): \(reason)")
            throw HomeGateExit.noInput
        }
        do {
            let backup = try Backup.decode([UInt8](data), file: file)
            if !force, Backup.isNonEmptyDirectory(directory) { // before anything is written, the lock file included
                throw BackupError.notEmpty(directory)
            }
            var configurationFile: (path: String, partial: String)?
            if let configOut {
                let path = URL(fileURLWithPath: configOut).standardizedFileURL
                guard let configuration = backup.configuration else {
                    printError("\(file): the backup has no configuration file (it was taken without --config); nothing was restored")
                    throw HomeGateExit.noInput
                }
                if FileManager.default.fileExists(atPath: path.path), !force {
                    printError("\(path.path): exists; --force replaces it; nothing was restored")
                    throw HomeGateExit.targetNotEmpty
                }
                let partial = path.deletingLastPathComponent().appendingPathComponent(".\(path.lastPathComponent).restore-\(getpid())").path
                try Backup.writeFile(partial, contents: configuration.contents, mode: configuration.mode, exclusive: false)
                configurationFile = (path.path, partial)
            }
            do {
                let lock = try lockIfThere(directory)
                defer { withExtendedLifetime(lock) {} }
                try backup.restore(into: directory, replacing: force)
            } catch {
                if let configurationFile { unlink(configurationFile.partial) }
                throw error
            }
            if let configurationFile, rename(configurationFile.partial, configurationFile.path) != 0 {
                printError("\(configurationFile.path): cannot write it: \(String(cString: strerror(errno))) (the data directory was restored)")
                unlink(configurationFile.partial)
                throw HomeGateExit.ioError
            }
            let formatter = ISO8601DateFormatter()
            var summary = "restored \(backup.dataEntries.count) file\(backup.dataEntries.count == 1 ? "" : "s") into \(directory) from \(file) (taken \(formatter.string(from: backup.created)) by HomeGate \(backup.homegateVersion))"
            if let configurationFile {
                summary += "; the configuration file into \(configurationFile.path)"
            } else if let configuration = backup.configuration {
                summary += "; the backup also holds the configuration file \(configuration.name): --config-out FILE writes it"
            }
            print(summary)
        } catch let error as DataDirectoryLock.Failure {
            printError("\(error.description); nothing was restored")
            throw error.isHeld ? HomeGateExit.dataDirectoryInUse : HomeGateExit.ioError
        } catch let error as BackupError {
            printError(error.kind == .notEmpty ? "\(error.description); nothing was restored" : error.description)
            if error.kind.isDamagedFile { throw HomeGateExit.damagedBackup }
            if error.kind == .notEmpty { throw HomeGateExit.targetNotEmpty }
            throw error.kind == .missing ? HomeGateExit.noInput : HomeGateExit.ioError
        }
    }

    /// The lock of `directory` if it exists, held while the restore replaces it: a gateway
    /// running on it is refused (it would go on with the old store, then write over the
    /// restored one), and none can start on it meanwhile.
    private func lockIfThere(_ directory: String) throws(DataDirectoryLock.Failure) -> DataDirectoryLock? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
        return try DataDirectoryLock.acquire(directory)
    }
}

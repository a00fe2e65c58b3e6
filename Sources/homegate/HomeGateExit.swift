import ArgumentParser
import Foundation
import HomeGateConfig

/// The exit codes `homegate` uses (BSD `sysexits.h` values, as daemons and systemd expect).
enum HomeGateExit {
    /// The command line is wrong (`EX_USAGE`); argument-parser uses it too.
    static let usage = ExitCode(64)
    /// The broker refused the connection for a reason retrying cannot fix (`EX_UNAVAILABLE`).
    static let refused = ExitCode(69)
    /// The broker refused the credentials or authorisation (`EX_NOPERM`).
    static let notAuthorized = ExitCode(77)
    /// The configuration is wrong (`EX_CONFIG`).
    static let configuration = ExitCode(78)
    /// A backup file is damaged, truncated, not a HomeGate backup, or from a newer HomeGate
    /// (`EX_DATAERR`).
    static let damagedBackup = ExitCode(65)
    /// What was to be backed up or restored is not there: no backup file, no store (`EX_NOINPUT`).
    static let noInput = ExitCode(66)
    /// `restore` refuses a non-empty data directory (or an existing `--config-out` file)
    /// without `--force` (`EX_CANTCREAT`).
    static let targetNotEmpty = ExitCode(73)
    /// Reading or writing a file failed (`EX_IOERR`).
    static let ioError = ExitCode(74)
    /// The data directory is in use by a running gateway (`EX_TEMPFAIL`): `run` finds another
    /// gateway on it, `restore` a gateway to stop first.
    static let dataDirectoryInUse = ExitCode(75)
}

/// Writes `homegate: error: <message>` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("homegate: error: \(message)\n".utf8))
}

/// Loads the configuration file, or prints what is wrong with it and exits 78.
func loadConfigFileOrExit(_ path: String, overrides: ConfigFile.Overrides = .init()) throws -> ConfigFile {
    do {
        return try ConfigFile.load(path: path, overrides: overrides)
    } catch {
        printError(error.description)
        throw HomeGateExit.configuration
    }
}

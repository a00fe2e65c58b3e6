import ArgumentParser
import Gateway

import Glibc

/// The process entry point.
@main
enum Entry {
    static func main() async {
        prepareSignals()
        await HomeGateCommand.main()
    }

    /// A parent may start us with SIGTERM, SIGINT or SIGHUP blocked (Foundation's `Process`
    /// does, from a Dispatch thread); the mask is inherited and graceful shutdown would never be
    /// triggered, so a daemon resets it first thing. SIGHUP is ignored until `run` listens for
    /// it (it reloads the configuration): it must never kill the gateway.
    private static func prepareSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        signal(SIGHUP, SIG_IGN)
    }
}

/// `homegate`: the HomeKit-to-MQTT gateway's command line.
struct HomeGateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homegate",
        abstract: "A HomeKit-to-MQTT gateway.",
        discussion: "Exit codes: 0 stopped cleanly, 64 bad command line, 77 the broker refused the credentials, 69 the broker refused the connection for another reason, 78 bad configuration, 65 a damaged backup, 66 no backup or store to read, 73 restore into a non-empty directory without --force, 74 a file cannot be read or written, 1 anything else.",
        version: Gateway.version,
        subcommands: [RunCommand.self, CheckConfigCommand.self, TopicsCommand.self, PairCommand.self, PairingsCommand.self, UnpairCommand.self, DiscoverCommand.self, AclCommand.self, PasswdCommand.self, BackupCommand.self, RestoreCommand.self]
    )
}

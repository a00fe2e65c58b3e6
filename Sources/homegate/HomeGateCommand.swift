import ArgumentParser

/// `homegate`: the HomeKit-to-MQTT gateway's command line.
@main
struct HomeGateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homegate",
        abstract: "A HomeKit-to-MQTT gateway.",
        discussion: "Exit codes: 0 stopped cleanly, 64 bad command line, 77 the broker refused the credentials, 69 the broker refused the connection for another reason, 78 bad configuration, 1 anything else.",
        subcommands: [RunCommand.self, CheckConfigCommand.self]
    )
}

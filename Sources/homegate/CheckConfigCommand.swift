import ArgumentParser
import HomeGateConfig
import HomeModel

/// `homegate check-config --config FILE`: loads and checks the configuration without connecting.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a configuration file and print what it resolves to; exits 78 if it is wrong."
    )

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    func run() throws {
        let file = try loadConfigFileOrExit(config)
        print("\(config): OK")
        print("  broker:     \(file.mqtt.url) (MQTT \(file.mqtt.protocolVersion.rawValue), client id \(file.mqtt.clientID))")
        print("  base topic: \(file.baseTopic)")
        print("  data dir:   \(file.dataDirectory)")
        print("  log level:  \(file.logLevel)")
        if let ui = file.ui {
            let scheme = ui.tls == nil ? "http" : "https"
            let host = ui.host.contains(":") ? "[\(ui.host)]" : ui.host
            print("  web page:   \(scheme)://\(host):\(ui.port)/ (\(ui.usersFile == nil ? "no sign-in" : "sign-in: \(ui.usersFile!)"))")
        }
        for home in file.homes {
            let bridges = home.accessories.filter { accessory in home.accessories.contains { $0.bridgeID == accessory.id } }.count
            let counts = [(home.rooms.count, "room"), (home.zones.count, "zone"), (home.accessories.count, "accessory")]
                .map { count, noun in "\(count) \(count == 1 ? noun : (noun == "accessory" ? "accessories" : noun + "s"))" }
            print("  home:       \(home.name)\(home.isPrimary ? " (primary)" : ""): \(counts.joined(separator: ", ")) (\(bridges) \(bridges == 1 ? "bridge" : "bridges"))")
        }
    }
}

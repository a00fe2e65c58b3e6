import Accessories
import ArgumentParser
import Foundation
import HAP
import HomeModel
import Wire

/// `homegate discover [--timeout SECONDS] [--json]`: lists the HomeKit accessories that answer an
/// mDNS browse for `_hap._tcp.local`.
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "Browse the network for HomeKit accessories (mDNS, _hap._tcp)."
    )

    @Option(name: .long, help: ArgumentHelp("How long to wait for answers, in seconds: more than 0, at most 60", valueName: "seconds"))
    var timeout: Double = 3

    @Flag(name: .long, help: "Print one JSON object per accessory, one per line.")
    var json = false

    @Option(name: .long, help: "A configuration file with a matter: section: Matter devices in commissioning mode are listed too (the Matter Server's discover).")
    var config: String?

    func validate() throws {
        guard timeout > 0, timeout <= 60 else {
            throw ValidationError("--timeout must be more than 0 and at most 60 seconds, not \(DiscoveryListing.seconds(timeout))")
        }
    }

    func run() async throws {
        let accessories: [DiscoveredAccessory]
        do {
            accessories = try await Discovery.browse(for: .milliseconds(Int64((timeout * 1000).rounded())))
        } catch {
            printError(error.description)
            throw ExitCode.failure
        }
        let matter = try await config.asyncMap { try await MatterCommissioning.commissionable(config: $0) } ?? []
        if accessories.isEmpty && matter.isEmpty {
            let note = "no HomeKit accessories answered within \(DiscoveryListing.seconds(timeout))s" + (config == nil ? "" : ", no Matter device is in commissioning mode")
            if json {
                FileHandle.standardError.write(Data("\(note)\n".utf8))
            } else {
                print(note)
            }
            return
        }
        let lines = json ? accessories.map(DiscoveryListing.jsonLine) + matter.map(DiscoveryListing.jsonLine) : DiscoveryListing.table(accessories, matter: matter)
        for line in lines {
            print(line)
        }
    }
}

/// The text forms of discovered accessories.
enum DiscoveryListing {
    /// `3` for 3.0, else the number as given (`2.5`).
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// The kebab-case category name (`garage-door-opener`), the number for one HomeModel does
    /// not know, `-` when the accessory gave none.
    static func categoryName(_ identifier: Int?) -> String {
        guard let identifier else { return "-" }
        return HomeModel.Category(rawValue: identifier)?.name ?? String(identifier)
    }

    /// `host:port`, an IPv6 address in brackets.
    static func address(_ accessory: DiscoveredAccessory) -> String {
        accessory.host.contains(":") ? "[\(accessory.host)]:\(accessory.port)" : "\(accessory.host):\(accessory.port)"
    }

    /// A header line and one line per accessory, columns padded to their widest entry.
    static func table(_ accessories: [DiscoveredAccessory], matter: [FoundAccessory] = []) -> [String] {
        let header = ["NAME", "ID", "MODEL", "CATEGORY", "PAIRED", "TRANSPORT", "ADDRESS"]
        let rows = accessories.map { accessory in
            [
                accessory.name, accessory.deviceID.isEmpty ? "-" : accessory.deviceID, accessory.model.isEmpty ? "-" : accessory.model,
                categoryName(accessory.categoryIdentifier), accessory.isPaired ? "yes" : "no", accessory.transport.rawValue, address(accessory),
            ]
        } + matter.map { device in
            [device.name, device.deviceID, device.model, "-", "no", device.transport,
             device.host.contains(":") ? "[\(device.host)]:\(device.port)" : "\(device.host):\(device.port)"]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.indices.map { column in
                column == row.count - 1 ? row[column] : row[column] + String(repeating: " ", count: widths[column] - row[column].count)
            }.joined(separator: "  ")
        }
    }

    /// A Matter device in commissioning mode as a JSON object on one line, keys sorted: `name`,
    /// `id` (its mDNS instance name), `model` (vendor and product id, discriminator), `paired`
    /// (false), `host`, `port`, `transport` (`matter`).
    static func jsonLine(_ device: FoundAccessory) -> String {
        JSON.object(["name": .string(device.name), "id": .string(device.deviceID), "model": .string(device.model), "paired": false,
                     "host": .string(device.host), "port": .int(device.port), "transport": .string(device.transport)]).text
    }

    /// One accessory as a JSON object on one line, keys sorted: `name`, `id`, `model`,
    /// `category` (the number or null), `category_name` (or null), `paired`, `host`, `port`,
    /// `config_number` (or null), `transport` (`ip` or `coap`) and `txt` (every TXT entry).
    static func jsonLine(_ accessory: DiscoveredAccessory) -> String {
        JSON.object([
            "name": .string(accessory.name),
            "id": .string(accessory.deviceID),
            "model": .string(accessory.model),
            "category": accessory.categoryIdentifier.map(JSON.int) ?? .null,
            "category_name": accessory.categoryIdentifier.flatMap { HomeModel.Category(rawValue: $0)?.name }.map(JSON.string) ?? .null,
            "paired": .bool(accessory.isPaired),
            "host": .string(accessory.host),
            "port": .int(accessory.port),
            "transport": .string(accessory.transport.rawValue),
            "config_number": accessory.configurationNumber.map(JSON.int) ?? .null,
            "txt": .object(accessory.txt.mapValues(JSON.string)),
        ]).text
    }
}

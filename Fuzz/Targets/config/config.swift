// libFuzzer target: the YAML configuration file and the users file (Sources/HomeGateConfig, with
// Yams), built by SwiftPM in .build-fuzz (HOMEGATE_FUZZ=1; see scripts/fuzz). The input is the
// file's text (bytes that are not UTF-8 become U+FFFD, as a file read as UTF-8 could not hold
// them), read as a configuration and, when it names `gateway_user` (without it, a users file is refused
// after its YAML and base_topic), also as a users file.
// Properties: any text parses or throws a ConfigError, never crashes, hangs or leaks; a users file
// that parses has valid, distinct user names and writes its Mosquitto ACL.
import Foundation
import HomeGateConfig

/// Relative paths in the text (mqtt.password_file, mqtt.tls.*) resolve inside a folder that does
/// not exist, so they are all missing files.
enum Paths {
    static let config = "/nonexistent-homegate-fuzz/homegate.yml"
    static let users = "/nonexistent-homegate-fuzz/users.yml"
}

// SwiftPM gives the executable its own `main` (so libFuzzer's is not linked): run libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runLibFuzzer(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt
var argumentCount = CommandLine.argc
var argumentValues = CommandLine.unsafeArgv
exit(runLibFuzzer(&argumentCount, &argumentValues, fuzzConfig))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        _ = try ConfigFile.parse(text, file: Paths.config)
    } catch {
        _ = error.description
    }
    guard text.contains("gateway_user") else { return 0 }
    do {
        let users = try UsersFile.parse(text, file: Paths.users)
        let names = [users.gatewayUser] + users.users.map(\.name)
        if let bad = names.first(where: { UsersFile.userNameProblem($0) != nil }) {
            fatalError("the users file was accepted with the user name \(bad.debugDescription)")
        }
        if Set(names).count != names.count { fatalError("the users file was accepted with a name twice: \(names)") }
        _ = users.mosquittoACL()
    } catch {
        _ = error.description
    }
    return 0
}

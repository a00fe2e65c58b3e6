import Foundation
import Testing
@testable import HomeGateConfig

/// The `ui:` section: the web page's port, sign-in files and TLS, and the mistakes it names.
@Suite("ui section")
struct UISectionTests {
    /// A folder with a users file, a password file and a config file path in it.
    func folder(users: String = "gateway_user: homegate\nusers:\n  - name: alice\n    role: admin\n") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hg-ui-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try users.write(to: folder.appendingPathComponent("users.yml"), atomically: true, encoding: .utf8)
        try "alice:$7$101$UXdrkZThK/n/L59t$gDeYJ2+tAbw2Lnfnu03rR/DygSEzzLB/gFfbxuyN+dGAhk2Rw2zdFwJLExFO9xruLO2CYJrEzsyEkuc9AAAi7A==\n"
            .write(to: folder.appendingPathComponent("homegate.passwd"), atomically: true, encoding: .utf8)
        return folder
    }

    func problem(_ text: String, in folder: URL) -> String {
        do {
            _ = try ConfigFile.parse(text, file: folder.appendingPathComponent("homegate.yml").path)
            return "no error"
        } catch {
            return error.description.replacingOccurrences(of: folder.path + "/", with: "")
        }
    }

    @Test func readsEveryKeyWithPathsFromTheConfigFilesFolder() throws {
        let folder = try folder()
        let text = "ui:\n  port: 8080\n  host: 0.0.0.0\n  users: users.yml\n  passwords: homegate.passwd\n  session_timeout: 3600\n"
        let ui = try #require(try ConfigFile.parse(text, file: folder.appendingPathComponent("homegate.yml").path).ui)
        #expect(ui.port == 8080 && ui.host == "0.0.0.0" && ui.sessionTimeout == .seconds(3600) && ui.tls == nil)
        #expect(ui.usersFile == folder.appendingPathComponent("users.yml").path)
        #expect(ui.passwordFile == folder.appendingPathComponent("homegate.passwd").path)
        let plain = try #require(try ConfigFile.parse("ui:\n  port: 8080\n", file: "/etc/homegate/homegate.yml").ui)
        #expect(plain.host == "127.0.0.1" && plain.usersFile == nil && plain.passwordFile == nil)
    }

    @Test func namesEachMistake() throws {
        let folder = try folder()
        #expect(problem("ui:\n  host: 0.0.0.0\n", in: folder) == "homegate.yml:2: ui: \"port\" is required here")
        #expect(problem("ui:\n  port: 8080\n  users: users.yml\n", in: folder)
            == "homegate.yml:2: ui: \"passwords\" is required with \"users\": the Mosquitto password file people sign in against")
        #expect(problem("ui:\n  port: 8080\n  passwords: homegate.passwd\n", in: folder)
            == "homegate.yml:3: ui.passwords: \"users\" is required with \"passwords\": the users file that gives each account its role")
        #expect(problem("ui:\n  port: 8080\n  users: nobody.yml\n  passwords: homegate.passwd\n", in: folder) == "nobody.yml: no such file")
        #expect(problem("ui:\n  port: 8080\n  tls:\n    cert_file: server.crt\n    key_file: server.key\n", in: folder)
            == "homegate.yml:4: ui.tls.cert_file: no such file: server.crt")
        #expect(problem("metrics:\n  port: 9000\nui:\n  port: 9000\n", in: folder)
            == "homegate.yml:4: ui: the web page and the metrics endpoint cannot share port 9000")
        #expect(problem("ui:\n  port: 8080\n  colour: blue\n", in: folder).hasPrefix("homegate.yml:3: ui.colour: unknown key"))
    }

    @Test func theUsersFileMustSpeakOfTheSameBaseTopic() throws {
        let folder = try folder(users: "base_topic: elsewhere\ngateway_user: homegate\nusers: []\n")
        #expect(problem("ui:\n  port: 8080\n  users: users.yml\n  passwords: homegate.passwd\n", in: folder)
            == "homegate.yml:3: ui.users: the users file's base_topic \"elsewhere\" is not the gateway's \"homegate\"")
    }
}

import Foundation

extension ConfigFile {
    /// The `ui:` section: the web page (docs/web.md).
    public struct UI: Sendable, Equatable {
        /// The port (`port`, required).
        public var port: Int
        /// The address to listen on (`host`, default 127.0.0.1: this machine only).
        public var host = "127.0.0.1"
        /// The users file of `homegate acl` (`users`): who may sign in, in which role. Nil: no
        /// sign-in; whoever reaches the page is an admin.
        public var usersFile: String?
        /// The Mosquitto password file (`passwords`), required with `users`: a person signs in with
        /// their MQTT account's name and password.
        public var passwordFile: String?
        /// HTTPS (`tls`): the certificate chain and private key, PEM files. Nil: plain HTTP.
        public var tls: TLS?
        /// How long a sign-in lasts without use (`session_timeout`, default 24 hours).
        public var sessionTimeout: Duration = .seconds(24 * 3600)

        /// `ui.tls`.
        public struct TLS: Sendable, Equatable {
            public var certificateFile: String
            public var keyFile: String

            public init(certificateFile: String, keyFile: String) {
                self.certificateFile = certificateFile
                self.keyFile = keyFile
            }
        }

        public init(port: Int) {
            self.port = port
        }
    }

    /// The `ui:` section: `port` (required), `host`, `users` with `passwords`, `tls`
    /// (`cert_file`, `key_file`), `session_timeout`. The users and password files are read here,
    /// so a mistake in them stops the start with its file and line.
    static func ui(_ node: ConfigNode, baseTopic: String) throws(ConfigError) -> UI {
        let keys = try node.mapping(allowed: ["port", "host", "users", "passwords", "tls", "session_timeout"])
        guard let portNode = keys["port"] else { throw node.error("\"port\" is required here") }
        var settings = UI(port: try portNode.int(in: 1...65_535))
        if let host = keys["host"] { settings.host = try host.nonEmptyString() }
        if let timeout = keys["session_timeout"] { settings.sessionTimeout = try timeout.seconds(in: 60...(366 * 86_400)) }
        switch (keys["users"], keys["passwords"]) {
        case (nil, nil):
            break
        case (let usersNode?, let passwordsNode?):
            let usersPath = try usersNode.path()
            let users = try UsersFile.load(path: usersPath)
            guard users.baseTopic == baseTopic else {
                throw usersNode.error("the users file's base_topic \"\(users.baseTopic)\" is not the gateway's \"\(baseTopic)\"")
            }
            let passwordsPath = try passwordsNode.path()
            _ = try PasswordFile.load(path: passwordsPath)
            settings.usersFile = usersPath
            settings.passwordFile = passwordsPath
        case (.some, nil):
            throw node.error("\"passwords\" is required with \"users\": the Mosquitto password file people sign in against")
        case (nil, .some(let passwordsNode)):
            throw passwordsNode.error("\"users\" is required with \"passwords\": the users file that gives each account its role")
        }
        if let tlsNode = keys["tls"] { settings.tls = try tls(tlsNode) }
        return settings
    }

    private static func tls(_ node: ConfigNode) throws(ConfigError) -> UI.TLS {
        let keys = try node.mapping(allowed: ["cert_file", "key_file"])
        guard let certificateNode = keys["cert_file"] else { throw node.error("\"cert_file\" is required here") }
        guard let keyNode = keys["key_file"] else { throw node.error("\"key_file\" is required here") }
        var paths: [String] = []
        for entry in [certificateNode, keyNode] {
            let path = try entry.path()
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw entry.error(FileManager.default.fileExists(atPath: path) ? "cannot read \(path)" : "no such file: \(path)")
            }
            paths.append(path)
        }
        return UI.TLS(certificateFile: paths[0], keyFile: paths[1])
    }
}

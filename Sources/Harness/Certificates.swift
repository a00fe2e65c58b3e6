import Foundation

/// A throw-away certificate authority, server certificate (for `localhost` and 127.0.0.1) and
/// client certificate, made with `openssl` at test time.
public struct Certificates: Sendable {
    public let caFile: String
    public let serverCertificateFile: String
    public let serverKeyFile: String
    public let clientCertificateFile: String
    public let clientKeyFile: String

    /// Generates everything in `directory`.
    public static func generate(in directory: URL) async throws -> Certificates {
        let openssl = try Executable.locate("openssl", install: "run scripts/setup (or: apt-get install openssl)")
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await run(openssl, ["req", "-x509"] + key + ["-keyout", path("ca.key"), "-out", path("ca.crt"), "-days", "2", "-subj", "/CN=HomeGate Test CA"])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        for (name, extensions) in [("server", ["-extfile", path("server.ext")]), ("client", [])] {
            try await run(openssl, ["req"] + key + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", "/CN=homegate-test-\(name)"])
            try await run(openssl, ["x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                              "-CAcreateserial", "-out", path("\(name).crt"), "-days", "2"] + extensions)
        }
        return Certificates(caFile: path("ca.crt"), serverCertificateFile: path("server.crt"), serverKeyFile: path("server.key"),
                            clientCertificateFile: path("client.crt"), clientKeyFile: path("client.key"))
    }

    /// Mosquitto listener lines for TLS with these files.
    public func listenerConfiguration(requireClientCertificate: Bool) -> [String] {
        ["cafile \(caFile)", "certfile \(serverCertificateFile)", "keyfile \(serverKeyFile)",
         "require_certificate \(requireClientCertificate)"]
    }
}

/// Runs a program to completion; fails with its output if it fails.
public func run(_ executable: String, _ arguments: [String]) async throws {
    let child = try ChildProcess(executable, arguments)
    let status = try await child.waitForExit(timeout: .seconds(60))
    guard status == 0 else {
        throw FixtureError("\(executable) \(arguments.joined(separator: " ")) failed (\(status)): \(child.output.value)")
    }
}

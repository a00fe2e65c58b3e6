import Foundation
import Testing
@testable import MQTT

@Suite("Broker URLs")
struct BrokerURLTests {
    @Test("valid URLs", arguments: [
        ("mqtt://127.0.0.1:1883", BrokerURL.Scheme.mqtt, "127.0.0.1", 1883, nil as String?),
        ("mqtt://broker.local", .mqtt, "broker.local", 1883, nil),
        ("mqtts://broker.example.com", .mqtts, "broker.example.com", 8883, nil),
        ("mqtts://broker:9999", .mqtts, "broker", 9999, nil),
        ("MQTT://Broker:1", .mqtt, "Broker", 1, nil),
        ("mqtt://[::1]:1884", .mqtt, "::1", 1884, nil),
        ("mqtt://[fe80::1]", .mqtt, "fe80::1", 1883, nil),
        ("mqtt://alice@broker:1883", .mqtt, "broker", 1883, "alice"),
        ("  mqtt://broker/  ", .mqtt, "broker", 1883, nil),
    ])
    func valid(_ text: String, scheme: BrokerURL.Scheme, host: String, port: Int, username: String?) throws {
        let url = try BrokerURL(parsing: text)
        #expect(url.scheme == scheme)
        #expect(url.host == host)
        #expect(url.port == port)
        #expect(url.username == username)
        #expect(url.usesTLS == (scheme == .mqtts))
    }

    @Test("invalid URLs say what is wrong", arguments: [
        ("127.0.0.1:1883", "expected mqtt://host[:port]"),
        ("http://broker", "unsupported scheme \"http\""),
        ("ws://broker:9001", "unsupported scheme \"ws\""),
        ("mqtt://", "no host"),
        ("mqtt://:1883", "no host"),
        ("mqtt://broker:0", "port \"0\" is not a number from 1 to 65535"),
        ("mqtt://broker:65536", "port \"65536\""),
        ("mqtt://broker:abc", "port \"abc\""),
        ("mqtt://broker:", "port \"\""),
        ("mqtt://alice:secret@broker", "a password may not be given in the URL"),
        ("mqtt://@broker", "empty user name"),
        ("mqtt://broker/topic", "no path"),
        ("mqtt://broker?x=1", "no query"),
        ("mqtt://[::1", "is not a host name"),
        ("mqtt://a:b:c", "is not a host name"),
    ])
    func invalid(_ text: String, reason: String) {
        #expect {
            try BrokerURL(parsing: text)
        } throws: { error in
            let description = (error as? BrokerURLError)?.description ?? ""
            return description.contains(reason) && description.contains(text)
        }
    }

    @Test("the description round-trips and never shows a password")
    func description() throws {
        #expect(try BrokerURL(parsing: "mqtt://broker").description == "mqtt://broker:1883")
        #expect(try BrokerURL(parsing: "mqtts://[::1]:8884").description == "mqtts://[::1]:8884")
        #expect(try BrokerURL(parsing: "mqtt://bob@h:2").description == "mqtt://bob@h:2")
    }

    @Test("a password file: the first line, whatever the line ending", arguments: [
        ("pass word\n", "pass word"), ("pass word", "pass word"), ("crlf\r\nsecond", "crlf"), ("cr\rsecond", "cr"),
        ("  spaced  \n", "  spaced  "),
    ])
    func passwordFile(_ contents: String, expected: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hg-secret-\(UUID().uuidString)").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Secret.fromFile(path).value == expected)
    }

    @Test("an empty password file or first line is refused", arguments: ["", "\n", "\r\nsecond"])
    func emptyPasswordFile(_ contents: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hg-secret-\(UUID().uuidString)").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) { try Secret.fromFile(path) }
    }

    @Test("a secret never prints")
    func secretRedacted() {
        let secret = Secret("hunter2")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
    }
}

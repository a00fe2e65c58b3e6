import Foundation
import Testing
import TestSupport

/// Every example of docs/mqtt-api.md, run verbatim against the demo home, in order: each `sh`
/// block's command runs, and its output must match the `output` block that follows it (the
/// `ms` figures aside). The mosquitto clients find the test's broker through shell functions
/// that add `-h` and `-p`, so the commands are exactly as a user types them.
@Suite("docs/mqtt-api.md examples", .startsProcesses)
struct DocumentationExamplesTests {
    struct Example {
        let command: String
        let output: String?
    }

    static func examples() throws -> [Example] {
        let text = try String(contentsOf: PackageRoot.url.appendingPathComponent("docs/mqtt-api.md"), encoding: .utf8)
        var examples: [Example] = []
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).makeIterator()
        var pending: String?
        while let line = lines.next() {
            guard line == "```sh" || line == "```output" else { continue }
            var block: [Substring] = []
            while let inner = lines.next(), inner != "```" { block.append(inner) }
            if line == "```sh" {
                if let pending { examples.append(Example(command: pending, output: nil)) }
                pending = block.joined(separator: "\n")
            } else if let command = pending {
                examples.append(Example(command: command, output: block.joined(separator: "\n")))
                pending = nil
            }
        }
        if let pending { examples.append(Example(command: pending, output: nil)) }
        return examples
    }

    /// Shell functions named mosquitto_pub, _sub and _rr that run the real clients against the
    /// test's broker. Functions, not wrapper scripts on PATH: a script this process writes while
    /// another test spawns a child can be "text file busy" (the child inherits the open file), and
    /// sh then runs the next one on PATH, the real client on port 1883.
    static func prelude(port: Int) throws -> String {
        try ["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"].map { tool in
            let real = try Executable.locate(tool, install: "run scripts/setup (or: apt-get install mosquitto-clients)")
            let extra = tool == "mosquitto_pub" ? "" : " -W 10"
            return "\(tool)() { \(real) -h 127.0.0.1 -p \(port)\(extra) \"$@\"; }"
        }.joined(separator: "\n") + "\n"
    }

    static func normalise(_ text: String) -> String {
        text.replacingOccurrences(of: #""ms":[0-9.]+"#, with: "\"ms\":_", options: .regularExpression)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the examples run and print what the page says")
    func examplesRun() async throws {
        let examples = try Self.examples()
        #expect(examples.count >= 8, "the page has its examples")
        let fixture = try await GatewayFixture.demo()
        let prelude = try Self.prelude(port: fixture.broker.port)
        let shell = try Executable.locate("sh", install: "a POSIX shell is part of every Debian system")
        for example in examples {
            let child = try ChildProcess(shell, ["-c", prelude + example.command])
            let status = try await child.waitForExit(timeout: HangGuard.standard)
            #expect(status == 0, "\(example.command)\n\(child.output.value)")
            if let expected = example.output {
                #expect(Self.normalise(child.output.value) == Self.normalise(expected), "\(example.command)")
            }
        }
        try await fixture.stop()
    }
}

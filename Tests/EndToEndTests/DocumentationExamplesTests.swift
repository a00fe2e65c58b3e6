import Foundation
import Testing
import TestSupport

/// Every example of docs/mqtt-api.md, run verbatim against the demo home, in order: each `sh`
/// block's command runs, and its output must match the `output` block that follows it (the
/// `ms` figures aside). The mosquitto clients find the test's broker through small wrappers
/// that add `-h` and `-p`, so the commands are exactly as a user types them.
@Suite("docs/mqtt-api.md examples")
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

    /// Wrappers for mosquitto_pub, _sub and _rr that point at the test's broker.
    static func wrappers(port: Int) throws -> URL {
        let folder = try TemporaryDirectory.make(prefix: "doc-bin")
        for tool in ["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"] {
            let real = try Executable.locate(tool, install: "run scripts/setup (or: apt-get install mosquitto-clients)")
            let extra = tool == "mosquitto_rr" ? " -W 10" : (tool == "mosquitto_sub" ? " -W 10" : "")
            let script = "#!/bin/sh\nexec \(real) -h 127.0.0.1 -p \(port)\(extra) \"$@\"\n"
            let path = folder.appendingPathComponent(tool).path
            try script.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
        return folder
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
        let bin = try Self.wrappers(port: fixture.broker.port)
        let shell = try Executable.locate("sh", install: "a POSIX shell is part of every Debian system")
        for example in examples {
            let child = try ChildProcess(shell, ["-c", example.command],
                                         environment: ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
            let status = try await child.waitForExit(timeout: .seconds(20))
            #expect(status == 0, "\(example.command)\n\(child.output.value)")
            if let expected = example.output {
                #expect(Self.normalise(child.output.value) == Self.normalise(expected), "\(example.command)")
            }
        }
        try await fixture.stop()
    }
}

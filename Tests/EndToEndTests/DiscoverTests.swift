import Foundation
import Testing
import TestSupport

/// `homegate discover` against python-zeroconf, end to end, inside network namespaces the tests
/// make: multicast never touches the machine's real interfaces. Needs root and iproute2 (`ip
/// netns`), and the venv scripts/setup makes (python-zeroconf comes with HAP-python); without
/// them the tests fail saying so.
@Suite("homegate discover", .startsProcesses)
struct DiscoverTests {
    static let advertiser = PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/mdns_advertiser.py").path

    /// Runs `body` in a namespace of its own with a multicast route, while `mdns_advertiser.py`
    /// announces the bridge on 51826, the lamp on 51827 and what `extra` adds; stops the
    /// advertiser and deletes the namespace after it.
    static func withAdvertiser(suffix: String, extra: [String] = [], _ body: (DiscoverNamespace) async throws -> Void) async throws {
        try await DiscoverNamespace.with(suffix: suffix) { namespace in
            try await namespace.addMulticastRoute()
            let python = try DiscoverNamespace.venvPython()
            let advertiser = try namespace.start(python, [Self.advertiser, "--bridge-port", "51826", "--lightbulb-port", "51827"] + extra)
            try await withCleanup {
                _ = try await advertiser.output.wait(timeout: .seconds(30), for: "the mDNS advertiser to be ready") { output in
                    output.contains("\"event\": \"ready\"") ? output : nil
                }
                try await body(namespace)
            } cleanup: {
                await advertiser.stop(grace: .seconds(5))
            }
        }
    }

    @Test("lists the two advertised accessories as JSON lines and as a table")
    func discoversAdvertisedAccessories() async throws {
        try await Self.withAdvertiser(suffix: "") { namespace in try await Self.listsAdvertisedAccessories(namespace) }
    }

    static func listsAdvertisedAccessories(_ namespace: DiscoverNamespace) async throws {
        let json = try await namespace.run(HomeGateProcess.binary(), ["discover", "--timeout", "2", "--json"])
        #expect(json.status == 0, "output:\n\(json.output)")
        let objects = json.output.split(separator: "\n").compactMap { line -> [String: Any]? in
            guard line.hasPrefix("{") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        #expect(objects.count == 2, "output:\n\(json.output)")
        #expect(json.output.split(separator: "\n").count == 2, "nothing but the JSON lines; output:\n\(json.output)")
        let bridge = try #require(objects.first { $0["name"] as? String == "HomeGate Test Bridge" }, "output:\n\(json.output)")
        #expect(bridge["id"] as? String == "AA:BB:CC:00:11:22")
        #expect(bridge["model"] as? String == "HG Bridge 1")
        #expect(bridge["category"] as? Int == 2)
        #expect(bridge["category_name"] as? String == "bridge")
        #expect(bridge["paired"] as? Bool == false)
        #expect(bridge["host"] as? String == "127.0.0.1")
        #expect(bridge["port"] as? Int == 51826)
        #expect(bridge["config_number"] as? Int == 3)
        #expect((bridge["txt"] as? [String: String])?["sh"] == "Ab3dEQ==")
        #expect((bridge["txt"] as? [String: String])?["pv"] == "1.1")
        let lamp = try #require(objects.first { $0["name"] as? String == "Küche Lamp" }, "output:\n\(json.output)")
        #expect(lamp["id"] as? String == "DE:AD:BE:EF:00:05")
        #expect(lamp["model"] as? String == "Lamp Model 5")
        #expect(lamp["category"] as? Int == 5)
        #expect(lamp["category_name"] as? String == "lightbulb")
        #expect(lamp["paired"] as? Bool == true)
        #expect(lamp["host"] as? String == "127.0.0.1")
        #expect(lamp["port"] as? Int == 51827)
        #expect(lamp["config_number"] as? Int == 12)
        #expect(lamp["transport"] as? String == "ip")
        #expect(objects.map { $0["name"] as? String } == ["HomeGate Test Bridge", "Küche Lamp"], "sorted by name")

        let table = try await namespace.run(HomeGateProcess.binary(), ["discover", "--timeout", "1.5"])
        #expect(table.status == 0, "output:\n\(table.output)")
        #expect(table.output.split(separator: "\n").map(String.init) == [
            "NAME                  ID                 MODEL         CATEGORY   PAIRED  TRANSPORT  ADDRESS",
            "HomeGate Test Bridge  AA:BB:CC:00:11:22  HG Bridge 1   bridge     no      ip         127.0.0.1:51826",
            "Küche Lamp            DE:AD:BE:EF:00:05  Lamp Model 5  lightbulb  yes     ip         127.0.0.1:51827",
        ], "output:\n\(table.output)")
    }

    @Test("a Thread accessory announced on _hap._udp (HAP over CoAP) is listed with transport coap beside the _hap._tcp ones")
    func discoversThreadAccessory() async throws {
        try await Self.withAdvertiser(suffix: "-coap", extra: ["--coap-port", "5683"]) { namespace in try await Self.listsThreadAccessory(namespace) }
    }

    static func listsThreadAccessory(_ namespace: DiscoverNamespace) async throws {
        let json = try await namespace.run(HomeGateProcess.binary(), ["discover", "--timeout", "2", "--json"])
        #expect(json.status == 0, "output:\n\(json.output)")
        let objects = json.output.split(separator: "\n").compactMap { line -> [String: Any]? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        #expect(objects.map { $0["name"] as? String } == ["Eve Energy 20EBU", "HomeGate Test Bridge", "Küche Lamp"], "output:\n\(json.output)")
        let eve = try #require(objects.first { $0["name"] as? String == "Eve Energy 20EBU" })
        #expect(eve["transport"] as? String == "coap")
        #expect(eve["id"] as? String == "E1:E2:E3:E4:E5:E6")
        #expect(eve["port"] as? Int == 5683)
        #expect(eve["paired"] as? Bool == false)
        #expect(["::1", "127.0.0.1"].contains(eve["host"] as? String ?? ""), "its IPv6 address when announced, else its IPv4 one: \(eve)")
        #expect(objects.filter { $0["transport"] as? String == "ip" }.count == 2)
    }

    @Test("nobody answering: says so and exits 0 (the note goes to standard error with --json)")
    func nobodyAnswers() async throws {
        try await DiscoverNamespace.with(suffix: "-quiet") { namespace in
            try await namespace.addMulticastRoute()
            let table = try await namespace.run(HomeGateProcess.binary(), ["discover", "--timeout", "0.5"])
            #expect(table.status == 0)
            #expect(table.output == "no HomeKit accessories answered within 0.5s\n")
            let json = try await namespace.run(HomeGateProcess.binary(), ["discover", "--timeout", "1", "--json"], stdoutOnly: true)
            #expect(json.status == 0)
            #expect(json.output == "", "standard output stays empty")
        }
    }

    @Test("no route to the multicast group: a clear error, exit 1")
    func noMulticastRoute() async throws {
        try await DiscoverNamespace.with(suffix: "-noroute") { namespace in
            let result = try await namespace.run(HomeGateProcess.binary(), ["discover", "--timeout", "1"])
            #expect(result.status == 1)
            #expect(result.output == "homegate: error: cannot send the mDNS query to 224.0.0.251:5353: Network is unreachable\n")
        }
    }

    @Test("--timeout must be more than 0: exit 64")
    func badTimeout() async throws {
        let command = try HomeGateProcess(["discover", "--timeout", "0"])
        #expect(try await command.waitForExit() == 64)
        #expect(command.output.contains("--timeout must be more than 0 and at most 60 seconds, not 0"), "output:\n\(command.output)")
    }
}

/// A network namespace of the test's own (`homegate-discover-<pid><suffix>`), with `lo` up.
/// Processes started in it see only its loopback interface.
struct DiscoverNamespace {
    let name: String
    let ip: String

    /// Runs `body` in a namespace of its own, and deletes it afterwards (also when `body`
    /// throws). `body` stops the processes it started in it.
    static func with<T>(suffix: String, _ body: (DiscoverNamespace) async throws -> T) async throws -> T {
        let namespace = try await create(suffix: suffix)
        return try await withCleanup { try await body(namespace) } cleanup: { await namespace.delete() }
    }

    /// Makes the namespace, or fails saying what is needed (root and iproute2).
    static func create(suffix: String) async throws -> DiscoverNamespace {
        guard geteuid() == 0 else {
            throw FixtureError("homegate discover's tests need root to make a network namespace (ip netns add); run them as root, e.g. in the project's container or with sudo")
        }
        let ip = try Executable.locate("ip", extraFolders: ["/usr/sbin", "/sbin", "/usr/bin", "/bin"], install: "apt-get install iproute2 (the tests make a network namespace with ip netns add)")
        let namespace = DiscoverNamespace(name: "homegate-discover-\(getpid())\(suffix)", ip: ip)
        var added = try await runChild(ip, ["netns", "add", namespace.name])
        if added.status != 0 && added.output.contains("exists") {
            // Left over from an earlier run that had the same process id and was killed.
            await namespace.delete()
            added = try await runChild(ip, ["netns", "add", namespace.name])
        }
        guard added.status == 0 else {
            throw FixtureError("ip netns add \(namespace.name) failed (exit \(added.status)); the tests need root with CAP_SYS_ADMIN and iproute2: \(added.output)")
        }
        do {
            try await namespace.check(["link", "set", "lo", "up"])
        } catch {
            await namespace.delete()
            throw error
        }
        return namespace
    }

    /// `ip route add 224.0.0.0/4 dev lo` inside the namespace: multicast goes out on loopback.
    func addMulticastRoute() async throws {
        try await check(["route", "add", "224.0.0.0/4", "dev", "lo"])
    }

    private func check(_ arguments: [String]) async throws {
        let result = try await runChild(ip, ["netns", "exec", name, ip] + arguments)
        guard result.status == 0 else {
            throw FixtureError("ip \(arguments.joined(separator: " ")) in namespace \(name) failed (exit \(result.status)): \(result.output)")
        }
    }

    /// Starts `executable` inside the namespace (`ip netns exec` execs it: the child's pid is
    /// the program's own).
    func start(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(ip, ["netns", "exec", name, executable] + arguments)
    }

    /// Runs `executable` inside the namespace to its end; its exit status and output (standard
    /// output and error together, or standard output alone).
    func run(_ executable: String, _ arguments: [String], stdoutOnly: Bool = false) async throws -> (status: Int32, output: String) {
        if stdoutOnly {
            return try await runChild("/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>/dev/null", ip, "netns", "exec", name, executable] + arguments)
        }
        return try await runChild(ip, ["netns", "exec", name, executable] + arguments)
    }

    /// Deletes the namespace. Processes still in it keep it alive until they end, so stop them
    /// first. Awaits `ip netns delete` without holding a thread: a cleanup that blocked would
    /// starve every other test of the process (the cooperative pool has a thread per core).
    func delete() async {
        guard let child = try? ChildProcess(ip, ["netns", "delete", name]) else { return }
        _ = try? await child.waitForExit(timeout: .seconds(10))
    }

    /// The venv's python (scripts/setup makes `<repo>/.venv` with HAP-python, which brings
    /// python-zeroconf).
    static func venvPython() throws -> String {
        let python = PackageRoot.url.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw FixtureError("\(python) not found: run scripts/setup (it makes the venv with HAP-python and python-zeroconf)")
        }
        return python
    }

    private static func runChild(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let child = try ChildProcess(executable, arguments)
        let status = try await child.waitForExit(timeout: HangGuard.standard)
        return (status, child.output.value)
    }

    private func runChild(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await Self.runChild(executable, arguments)
    }
}

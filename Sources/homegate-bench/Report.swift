import Foundation

/// Writes a run's figures into BENCHMARKS.md: a Markdown table and the JSON, replacing the
/// previous run's; everything from the `<!-- notes -->` line on is kept.
enum Report {
    static let notesMarker = "<!-- notes -->"

    static func write(_ results: Results, options: Bench.Options) throws {
        let text = markdown(results, options: options)
        guard options.output != "-" else {
            print(text)
            return
        }
        let existing = (try? String(contentsOfFile: options.output, encoding: .utf8)) ?? ""
        let notes = existing.range(of: notesMarker).map { String(existing[$0.lowerBound...]) } ?? "\(notesMarker)\n"
        try (text + "\n" + notes).write(toFile: options.output, atomically: true, encoding: .utf8)
        Bench.log("wrote \(options.output)")
    }

    static func markdown(_ results: Results, options: Bench.Options) -> String {
        let echo = results.echo
        let set = results.setRoundTrip
        var lines = [
            "# Benchmarks",
            "",
            "Measured by `scripts/bench` (`homegate-bench`, release build): it starts its own Mosquitto with",
            "`config/mosquitto.conf` on a free port and the real `homegate` binary, and compares every figure",
            "with a baseline measured in the same run. This machine is shared and noisy: absolute times drift,",
            "ratios hold. Reproduce with `scripts/bench` (a quick run: `scripts/bench --quick --output -`).",
            "",
            "## Latest run",
            "",
            "- date: \(ISO8601DateFormatter().string(from: Date()))",
            "- machine: \(machine())",
            "- commit: \(ProcessInfo.processInfo.environment["HOMEGATE_COMMIT"] ?? "unknown")",
            "- counts: \(options.messages) round trips per series after \(options.warmUp) warm-up, \(options.cpuSets) sets for CPU time, \(options.fanOut) messages per fan-out series, \(options.scaleMessages) round trips per home size",
            "",
            "| what | p50 | p90 | p99 | ratio to the broker echo (p50 / p99) | target | met |",
            "|---|---|---|---|---|---|---|",
            "| broker echo round trip, QoS 1 (baseline) | \(us(echo.p50)) | \(us(echo.p90)) | \(us(echo.p99)) | 1 / 1 | | |",
            "| set -> acknowledgement through the gateway, QoS 1 | \(us(set.p50)) | \(us(set.p90)) | \(us(set.p99)) | \(ratio(set.p50, echo.p50)) / \(ratio(set.p99, echo.p99)) | p50 <= 1.3x | \(met(set.p50 <= 1.3 * echo.p50)) |",
        ]
        let own = results.gatewayOwnTime
        let ownP50 = own["p50Microseconds"] ?? 0
        lines.append("| the gateway's own time per set (arrival -> acknowledgement handed to the client) | \(us(ownP50)) | \(us(own["p90Microseconds"] ?? 0)) | \(us(own["p99Microseconds"] ?? 0)) | | p50 <= 20 µs | \(met(ownP50 <= 20)) |")
        if let cpu = results.cpu {
            func share(_ share: CPUPerSet.Share) -> String {
                String(format: "%.1f µs (user %.1f, system %.1f; %.1f context switches)", share.microseconds, share.userMicroseconds, share.systemMicroseconds, share.contextSwitches)
            }
            lines += ["", "| CPU time per set (/proc/<pid>/stat, \(cpu.sets) sets one at a time) | gateway | broker (baseline) | ratio | target | met |", "|---|---|---|---|---|---|",
                      "| one set: arrival, device write, value, acknowledgement | \(share(cpu.gateway)) | \(share(cpu.broker)) | \(String(format: "%.2f", cpu.ratio)) | <= 1.00 | \(met(cpu.ratio <= 1)) |"]
        }
        lines += ["", "| fan-out | plain publisher (msg/s) | through the gateway (msg/s) | ratio | target | met |", "|---|---|---|---|---|---|"]
        for key in results.fanOut.keys.sorted() {
            guard let fan = results.fanOut[key] else { continue }
            lines.append("| \(key == "qos0" ? "QoS 0" : "QoS 1") | \(Int(fan.plainPerSecond)) | \(Int(fan.gatewayPerSecond)) | \(String(format: "%.2f", fan.ratio)) | >= 0.80 | \(met(fan.ratio >= 0.8)) |")
        }
        lines += ["", "| home size | characteristics | start -> every value retained (seen by a watching subscriber) | a plain client retaining as many (baseline) | ratio | resident memory (after start-up and the sets) | set round trip p50 / p99 | p50 vs 100-accessory home |", "|---|---|---|---|---|---|---|---|"]
        let smallest = results.scale.first { $0.accessories == 100 } ?? results.scale.first
        for scale in results.scale {
            let versus = smallest.map { ratio(scale.setRoundTrip.p50, $0.setRoundTrip.p50) } ?? ""
            lines.append("| \(scale.accessories)\(scale.characteristicMeta ? " (with characteristic `$meta`)" : "") | \(scale.characteristics) | \(String(format: "%.2f", scale.readySeconds)) s | \(String(format: "%.2f", scale.plainRetainedSeconds)) s | \(String(format: "%.2fx", scale.readyRatio)) | \(scale.residentMegabytes) MB | \(us(scale.setRoundTrip.p50)) / \(us(scale.setRoundTrip.p99)) | \(versus) |")
        }
        for largest in results.scale where largest.accessories >= 10_000 {
            lines += ["", "10,000 accessories\(largest.characteristicMeta ? " with per-characteristic `$meta`" : ""): all retained within 2 s: \(met(largest.readySeconds <= 2)); within 1.5x a plain client: \(met(largest.readyRatio <= 1.5)); memory <= 100 MB: \(met(largest.residentMegabytes <= 100)); set round trip within 10% of the 100-accessory home: \(met(smallest.map { largest.setRoundTrip.p50 <= 1.1 * $0.setRoundTrip.p50 } ?? false))"]
        }
        if let hap = results.hap { lines += hapLines(hap) }
        if let coap = results.coap { lines += coapLines(coap) }
        if let many = results.many { lines += manyLines(many) }
        if let matter = results.matter { lines += matterLines(matter) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let json = (try? encoder.encode(results)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        lines += ["", "```json", json, "```", ""]
        return lines.joined(separator: "\n")
    }

    /// The HAP section: ours against aiohomekit on the same peer, in the same run.
    private static func hapLines(_ hap: HAPBench.Figures) -> [String] {
        let ours = hap.ours
        let theirs = hap.aiohomekit
        func row(_ what: String, _ mine: HAPBench.Summary, _ other: HAPBench.Summary, target: String, met condition: Bool) -> String {
            "| \(what) | \(ms(mine.p50)) / \(ms(mine.p99)) | \(ms(other.p50)) / \(ms(other.p99)) | \(String(format: "%.2f", mine.p50 / max(other.p50, 0.001))) | \(target) | \(met(condition)) |"
        }
        return [
            "", "HAP controller against HAP-python 5.0.0 on loopback (a fresh peer per controller):", "",
            "| what | ours p50 / p99 | aiohomekit 4.0.1 p50 / p99 | ratio (p50) | target | met |", "|---|---|---|---|---|---|",
            "| pair-setup (one) | \(ours.pairSetupMilliseconds.map { ms($0) } ?? "-") | \(theirs.pairSetupMilliseconds.map { ms($0) } ?? "-") | | ours <= 150 ms | \(met((ours.pairSetupMilliseconds ?? .infinity) <= 150)) |",
            row("connect + pair-verify", ours.pairVerify, theirs.pairVerify, target: "<= 0.6x", met: ours.pairVerify.p50 <= 0.6 * theirs.pairVerify.p50),
            row("read round trip", ours.read, theirs.read, target: "<= 0.8x", met: ours.read.p50 <= 0.8 * theirs.read.p50),
            row("write round trip", ours.write, theirs.write, target: "<= 0.8x", met: ours.write.p50 <= 0.8 * theirs.write.p50),
        ] + peerLines(ours, theirs)
    }

    /// The Matter section: a set through HomeGate and the Matter Server against the server's own client.
    private static func matterLines(_ matter: MatterBench.Figures) -> [String] {
        var lines = [
            "", "Matter: set -> acknowledgement through HomeGate and python-matter-server 8.1.2 to a CircuitMatter on/off light (the live lab), "
                + "against the server's own Python client sending the same On/Off commands to the same node (the floor), same run:", "",
            "| what | p50 | p90 | p99 |", "|---|---|---|---|",
            "| through HomeGate (MQTT set -> acknowledgement) | \(us(matter.homegate.p50)) | \(us(matter.homegate.p90)) | \(us(matter.homegate.p99)) |",
            "| the server's own client (device_command -> result) | \(us(matter.serverClient.p50)) | \(us(matter.serverClient.p90)) | \(us(matter.serverClient.p99)) |",
            "| HomeGate's own Matter client alone (the same commands) | \(us(matter.ownClient.p50)) | \(us(matter.ownClient.p90)) | \(us(matter.ownClient.p99)) |",
            "", "The gateway's own time per set (gateway/statistics, p50 of each turn, the device's answer included): "
                + matter.gatewayTime.map { us($0) }.joined(separator: ", "),
        ]
        if let cpu = matter.cpu {
            lines.append("")
            lines.append("CPU per set through HomeGate (both turns' measured sets): the gateway \(share(cpu.gateway)), the broker \(share(cpu.broker))")
        }
        lines += ["", "Ratio (p50): \(String(format: "%.2f", matter.ratio)); target <= 1.2: \(met(matter.ratio <= 1.2))"]
        return lines
    }

    private static func share(_ share: CPUPerSet.Share) -> String {
        String(format: "%.0f µs (user %.0f, system %.0f), %.1f context switches", share.microseconds, share.userMicroseconds, share.systemMicroseconds,
               share.contextSwitches)
    }

    /// The CoAP section: ours against aiohomekit's CoAP controller on the same Thread peer.
    private static func coapLines(_ coap: HAPBench.Figures) -> [String] {
        let ours = coap.ours
        let theirs = coap.aiohomekit
        func row(_ what: String, _ mine: HAPBench.Summary, _ other: HAPBench.Summary) -> String {
            "| \(what) | \(ms(mine.p50)) / \(ms(mine.p99)) | \(ms(other.p50)) / \(ms(other.p99)) | \(String(format: "%.2f", mine.p50 / max(other.p50, 0.001))) |"
        }
        return [
            "", "HAP over CoAP (Thread) against coap_peer.py serving the Nanoleaf bulb on IPv6 loopback (a fresh peer per controller; no target set):", "",
            "| what | ours p50 / p99 | aiohomekit 4.0.1 (CoAP) p50 / p99 | ratio (p50) |", "|---|---|---|---|",
            "| pair-setup (one) | \(ours.pairSetupMilliseconds.map { ms($0) } ?? "-") | \(theirs.pairSetupMilliseconds.map { ms($0) } ?? "-") | |",
            row("pair-verify (a new socket each)", ours.pairVerify, theirs.pairVerify),
            row("read round trip", ours.read, theirs.read),
            row("write round trip", ours.write, theirs.write),
        ]
    }

    /// What HAP-python itself spends per request, the floor under either controller's round trip.
    private static func peerLines(_ ours: HAPBench.Side, _ theirs: HAPBench.Side) -> [String] {
        guard let peer = ours.peer else { return [] }
        func share(_ value: Double, of whole: Double) -> String { String(format: "%.2f", value / max(whole, 0.001)) }
        var lines = ["", "HAP-python's own handling per request (its `data_received`: from the request's arrival until it returns to its event loop, "
                     + "the answer written on the way), during our reads and writes: p50 \(ms(peer.p50)), p99 \(ms(peer.p99)). "
                     + "Read round trips are \(share(ours.read.p50, of: peer.p50))x of it with ours and \(share(theirs.read.p50, of: peer.p50))x with aiohomekit: "
                     + "a controller that took no time at all would still wait for it, so against this peer the read ratio cannot go much below "
                     + "\(share(peer.p50, of: theirs.read.p50))x."]
        if let verify = ours.peerVerify {
            lines += ["", "HAP-python's own handling per pair-verify (its two requests): p50 \(ms(verify.p50)); connect + pair-verify takes "
                      + "\(ms(ours.pairVerify.p50 - verify.p50)) beyond it with ours and \(ms(theirs.pairVerify.p50 - verify.p50)) with aiohomekit, "
                      + "so that ratio cannot go much below \(share(verify.p50, of: theirs.pairVerify.p50))x."]
        }
        return lines
    }

    /// The many-devices section: N HAP devices on one gateway, against the same gateway with none.
    private static func manyLines(_ many: ManyBench.Figures) -> [String] {
        let set = many.setRoundTrip
        return [
            "", "\(many.devices) HAP devices on one gateway (HAP-python 5.0.0 accessory servers in one process, each its own port and pairing; the gateway started on them after pairing, against a fresh broker; baseline: the same gateway with no device, in the same run):", "",
            "| what | figure | target | met |", "|---|---|---|---|",
            "| gateway start -> every device reachable (`$reachable` seen by a subscriber) | \(String(format: "%.2f", many.reachableSeconds)) s | <= 10 s | \(met(many.reachableSeconds <= 10)) |",
            "| set -> acknowledgement, one at a time across the devices (\(set.count) sets) | p50 \(us(set.p50)), p90 \(us(set.p90)), p99 \(us(set.p99)) | | |",
            "| every device changes a value at once -> every change published | \(String(format: "%.2f", many.eventsSeconds)) s | | |",
            "| threads: no device / all reachable / after the sets | \(many.baselineThreads) / \(many.threads) / \(many.threadsAfterSets) | <= 16 with \(many.devices) devices | \(met(max(many.threads, many.threadsAfterSets) <= 16)) |",
            "| resident memory: no device / all reachable / after the sets | \(many.baselineResidentMegabytes) MB / \(many.residentMegabytes) MB / \(many.residentMegabytesAfterSets) MB | | |",
            "| resident memory per device ((after the sets - no device) / \(many.devices)) | \(String(format: "%.2f", many.residentMegabytesPerDevice * 1024)) kB | | |",
        ]
    }

    private static func ms(_ value: Double) -> String {
        String(format: "%.2f ms", value)
    }

    private static func us(_ value: Double) -> String {
        value >= 1000 ? String(format: "%.2f ms", value / 1000) : String(format: "%.0f µs", value)
    }

    private static func ratio(_ value: Double, _ baseline: Double) -> String {
        String(format: "%.2fx", value / max(baseline, 0.001))
    }

    private static func met(_ condition: Bool) -> String { condition ? "yes" : "no" }

    private static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB"
    }
}

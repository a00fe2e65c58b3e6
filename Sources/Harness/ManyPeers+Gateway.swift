import Foundation
import MQTT

/// What the many-devices test and benchmark do with a running gateway and ``ManyPeers``.
extension ManyPeers {
    /// Pairs every peer with the running gateway under `base` through `$request/accessory/pair`
    /// (the management request), `inFlight` requests at a time, in room `room`. A pair-setup
    /// refused by HAP-python's padding quirk (about 1 in 85, field notes) is tried again, up to
    /// 5 times per peer; any other failure throws.
    public func pairAll(broker: Mosquitto, base: String, room: String? = nil, inFlight: Int = 4, timeout: Duration = .seconds(60)) async throws {
        let client = try await TestClient.connect(TestClient.configuration(broker.url, id: "many-pair"))
        do {
            try await pairAll(client: client, base: base, room: room, inFlight: inFlight, timeout: timeout)
        } catch {
            await client.stop()
            throw error
        }
        await client.stop()
    }

    private func pairAll(client: TestClient, base: String, room: String?, inFlight: Int, timeout: Duration) async throws {
        let responses = "\(base)/$response/accessory/pair"
        try await client.subscribe(responses)
        var waiting = Array(peers.indices.reversed())
        var attempts: [Int: Int] = [:]
        var running = 0
        var answered = 0
        let roomField = room.map { ", \"room\": \"\($0)\"" } ?? ""
        while !waiting.isEmpty || running > 0 {
            while running < inFlight, let index = waiting.popLast() {
                attempts[index, default: 0] += 1
                let peer = peers[index]
                try await client.publish("\(base)/$request/accessory/pair",
                                         "{\"host\": \"\(host)\", \"port\": \(peer.port), \"code\": \"\(pincode)\"\(roomField), \"transaction\": \"many-\(index)\"}")
                running += 1
            }
            let seen = answered
            let answer = try await client.inbox.wait(timeout: timeout, for: "an answer to accessory/pair") { messages -> Message? in
                let answers = messages.filter { $0.topic.string == responses }
                return answers.count > seen ? answers[seen] : nil
            }
            answered += 1
            running -= 1
            guard let object = try JSONSerialization.jsonObject(with: Data(answer.payload)) as? [String: Any],
                  let transaction = object["transaction"] as? String, transaction.hasPrefix("many-"),
                  let index = Int(transaction.dropFirst("many-".count)) else {
                throw FixtureError("an unexpected answer to accessory/pair: \(answer.payloadString)")
            }
            if object["ok"] as? Bool == true { continue }
            let message = object["message"] as? String ?? ""
            guard message.contains("refused the setup code"), attempts[index, default: 0] < 5 else {
                throw FixtureError("pairing \(peers[index].name) failed: \(answer.payloadString)")
            }
            waiting.append(index)
        }
    }

    /// The accessory topics (`<base>/<home>/<room>/<accessory>`) that `messages` last said are
    /// reachable (`<accessory>/$reachable` = `true`); only messages published while subscribed
    /// (retain flag off: the broker marks those it sends for the subscription) when `live`.
    public static func reachable(in messages: [Message], live: Bool) -> Set<String> {
        var latest: [String: Bool] = [:]
        for message in messages where message.topic.string.hasSuffix("/$reachable") && !(live && message.retain) {
            latest[String(message.topic.string.dropLast("/$reachable".count))] = message.payloadString == "true"
        }
        return Set(latest.filter(\.value).keys)
    }

    /// The peer an accessory topic belongs to: the number its last level ends with (`lamp-007`: 7).
    public static func index(ofAccessoryTopic topic: String) -> Int? {
        guard let level = topic.split(separator: "/").last, let number = level.split(separator: "-").last else { return nil }
        return Int(number)
    }
}

/// A process's thread count and resident memory, from `/proc/<pid>/status`.
public struct ProcessStatus: Sendable {
    /// `Threads:`.
    public let threads: Int
    /// `VmRSS:`, in kB.
    public let residentKilobytes: Int

    public var residentMegabytes: Double { (Double(residentKilobytes) / 1024 * 10).rounded() / 10 }

    public static func read(_ pid: pid_t) throws -> ProcessStatus {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix("\(name):") }?
                .split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) }
        }
        guard let threads = field("Threads"), let resident = field("VmRSS") else {
            throw FixtureError("/proc/\(pid)/status has no Threads or VmRSS line")
        }
        return ProcessStatus(threads: threads, residentKilobytes: resident)
    }
}

import Foundation
import HomeModel
import HomeStore
import Testing
import TestSupport

/// The history through the real binary and a real Mosquitto: values set and changed by the
/// simulator come back from `$request/history/get` in order, a bad request is refused and
/// changes nothing, a rename keeps the history, `history: {enabled: false}` answers
/// `history-off`, and `homegate backup` carries the history.
@Suite(.serialized, .startsProcesses) struct HistoryEndToEndTests {
    static let brightness = "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness"
    static let temperature = "homegate/demo-home/kitchen/kitchen-sensor/temperature-sensor/current-temperature"

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The answer's points as (time, value) pairs.
    static func points(_ answer: [String: Any]) -> [(time: Int64, value: Any)] {
        let data = answer["data"] as? [String: Any] ?? [:]
        return (data["points"] as? [[Any]] ?? []).compactMap { pair in
            guard pair.count == 2, let time = (pair[0] as? NSNumber)?.int64Value else { return nil }
            return (time, pair[1])
        }
    }

    static func numbers(_ answer: [String: Any]) -> [Double] {
        points(answer).compactMap { ($0.value as? NSNumber)?.doubleValue }
    }

    @Test("set and simulated values come back in order with their values; a bad request is refused and changes nothing; a rename keeps the history; the backup holds it")
    func historyThroughTheBroker() async throws {
        let fixture = try await GatewayFixture.demo()
        let began = Self.milliseconds(Date())
        for value in [50, 60, 70] {
            #expect(try await fixture.command(Self.brightness + "/set", "\(value)")["ok"] as? Bool == true)
        }
        for value in [22.0, 22.5] {
            let update = #"{"accessory": "sim-kitchen-sensor", "characteristic": "current-temperature", "value": \#(value)}"#
            #expect(try await fixture.request("simulator/update", update)["ok"] as? Bool == true)
        }
        let ended = Self.milliseconds(Date())

        let answer = try await fixture.request("history/get", #"{"characteristic": "~/living-room/floor-lamp/lightbulb/brightness", "from": \#(began), "transaction": "h1"}"#)
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        #expect(answer["transaction"] as? String == "h1")
        let data = try #require(answer["data"] as? [String: Any])
        #expect(data["characteristic"] as? String == Self.brightness)
        #expect(data["truncated"] as? Bool == false)
        #expect((data["from"] as? NSNumber)?.int64Value == began)
        #expect(Self.numbers(answer) == [50, 60, 70])
        let times = Self.points(answer).map(\.time)
        #expect(times == times.sorted() && times.allSatisfy { (began...ended).contains($0) }, "\(times) within \(began)...\(ended)")

        let temperatures = try await fixture.request("history/get", #"{"characteristic": "\#(Self.temperature)", "from": "\#(Self.iso(began))"}"#)
        #expect(Self.numbers(temperatures) == [22.0, 22.5], "\(temperatures)")

        // A bad request: refused with its reason; the history is as it was.
        let backwards = try await fixture.request("history/get", #"{"characteristic": "\#(Self.brightness)", "from": \#(ended), "to": \#(began)}"#)
        #expect(backwards["ok"] as? Bool == false)
        #expect(backwards["error"] as? String == "invalid-request")
        let nowhere = try await fixture.request("history/get", #"{"characteristic": "~/attic/lamp/lightbulb/on"}"#)
        #expect(nowhere["error"] as? String == "not-found")
        let unchanged = try await fixture.request("history/get", #"{"characteristic": "\#(Self.brightness)", "from": \#(began)}"#)
        #expect(Self.numbers(unchanged) == [50, 60, 70])

        // A rename moves the topic; the history stays with the characteristic.
        #expect(try await fixture.request("accessory/rename", #"{"accessory": "Floor Lamp", "newName": "Sofa Lamp"}"#)["ok"] as? Bool == true)
        let renamed = "homegate/demo-home/living-room/sofa-lamp/lightbulb/brightness"
        let moved = try await fixture.request("history/get", #"{"characteristic": "\#(renamed)", "from": \#(began)}"#)
        #expect((moved["data"] as? [String: Any])?["characteristic"] as? String == renamed)
        #expect(Self.numbers(moved) == [50, 60, 70])
        #expect(Self.points(moved).map(\.time) == times)

        // `homegate backup` copies the store, history included.
        let iid = try #require(((moved["data"] as? [String: Any])?["iid"] as? NSNumber)?.intValue)
        let backups = try TemporaryDirectory.make(prefix: "history-backup")
        let file = backups.appendingPathComponent("homegate.backup").path
        let backup = try HomeGateProcess(["backup", "--data-dir", fixture.folder.appendingPathComponent("data").path, "--config", fixture.configFile, file])
        #expect(try await backup.waitForExit(timeout: .seconds(30)) == 0, "\(backup.output)")
        try await fixture.stop()
        let restored = backups.appendingPathComponent("restored").path
        let restore = try HomeGateProcess(["restore", file, "--data-dir", restored])
        #expect(try await restore.waitForExit(timeout: .seconds(30)) == 0, "\(restore.output)")
        let store = try HomeStore(directory: restored)
        let kept = try store.history(of: CharacteristicReference(accessoryID: "sim-lamp-1", iid: iid), from: began, to: Int64.max, limit: 100)
        #expect(kept.points.map(\.value) == ["50", "60", "70"])
    }

    @Test("history: {enabled: false}: the request is answered history-off")
    func off() async throws {
        let fixture = try await GatewayFixture.start(config: try GatewayFixture.demoText(appending: "history:\n  enabled: false"))
        #expect(try await fixture.command(Self.brightness + "/set", "55")["ok"] as? Bool == true)
        let answer = try await fixture.request("history/get", #"{"characteristic": "\#(Self.brightness)"}"#)
        #expect(answer["ok"] as? Bool == false)
        #expect(answer["error"] as? String == "history-off", "\(answer)")
        try await fixture.stop()
        let store = try HomeStore(directory: fixture.folder.appendingPathComponent("data").path)
        #expect(try store.historyPointCount() == 0)
    }

    static func iso(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

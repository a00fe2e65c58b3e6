import Foundation
@testable import Gateway
import HomeModel
import HomeStore
import Synchronization
import Testing
import TestSupport
import Wire

/// The wall clock the engine reads history times from, moved by the test.
private final class WallClock: Sendable {
    private let date: Mutex<Date>

    init(_ start: Date) { date = Mutex(start) }

    var now: Date { date.withLock { $0 } }
    func advance(seconds: Double) { date.withLock { $0.addTimeInterval(seconds) } }
}

@Suite("History in the engine: recorded as published, pruned, served on $request/history/get")
struct HistoryEngineTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let startMilliseconds: Int64 = 1_800_000_000_000
    static let brightness = EngineHarness.lamp + "/brightness"

    private func harness(store: HomeStore, wall: WallClock, history: Gateway.History? = Gateway.History()) async throws -> EngineHarness {
        try await EngineHarness(store: store) { configuration in
            configuration.now = { wall.now }
            configuration.history = history
        }
    }

    /// Asks `history/get` with `body` (a transaction is added) and returns the answer.
    private func ask(_ engine: EngineHarness, _ body: String, topic: String = "homegate/$request/history/get") async throws -> JSON {
        let response = topic.replacingOccurrences(of: "$request", with: "$response")
        let before = engine.bus.count(on: response)
        let transaction = UUID().uuidString
        try engine.bus.publish(topic, "{\"transaction\": \"\(transaction)\"" + (body.isEmpty ? "}" : ", " + body + "}"))
        let answer = try JSON.parse(await engine.bus.next(on: response, after: before).payload)
        #expect(answer["transaction"]?.string == transaction)
        return answer
    }

    private func points(_ answer: JSON) -> [[JSON]] {
        answer["data"]?["points"]?.array?.compactMap(\.array) ?? []
    }

    @Test("acknowledged writes and the simulator's changes are recorded with their times; an unchanged value adds nothing")
    func recording() async throws {
        let store = try HomeStore.inMemory()
        let wall = WallClock(Self.start)
        let engine = try await harness(store: store, wall: wall)
        defer { Task { await engine.stop() } }
        for (offset, value) in [(1, "20"), (2, "30"), (3, "30")] {
            wall.advance(seconds: 1)
            #expect(try await engine.command(Self.brightness + "/set", value)["ok"] == true, "set \(offset)")
        }
        wall.advance(seconds: 1)
        try engine.bus.publish("homegate/$request/simulator/update", #"{"accessory": "sensor", "characteristic": "current-temperature", "value": 23.5}"#)
        _ = try await engine.bus.next(on: "homegate/$response/simulator/update")

        let answer = try await ask(engine, #""characteristic": "~/office/lamp/lightbulb/brightness", "from": 0"#)
        #expect(answer["ok"] == true)
        let data = try #require(answer["data"])
        #expect(data["characteristic"]?.string == Self.brightness)
        #expect(data["accessory"]?.string == "lamp")
        #expect(data["from"]?.int == 0)
        #expect(data["to"]?.int == Self.startMilliseconds + 4_000)
        #expect(points(answer) == [[.int(Self.startMilliseconds + 1_000), .int(20)], [.int(Self.startMilliseconds + 2_000), .int(30)]])
        #expect(data["truncated"] == false)

        let sensor = try await ask(engine, #""characteristic": "\#(EngineHarness.sensor)""#)
        #expect(points(sensor) == [[.int(Self.startMilliseconds + 4_000), .double(23.5)]])
        #expect(sensor["data"]?["from"]?.int == Self.startMilliseconds + 4_000 - 86_400_000, "the last 24 hours by default")
    }

    @Test("a limit keeps the newest points, marked truncated; the point before the range is given as previous; an ISO 8601 range works")
    func rangesAndLimits() async throws {
        let store = try HomeStore.inMemory()
        let wall = WallClock(Self.start)
        let engine = try await harness(store: store, wall: wall)
        defer { Task { await engine.stop() } }
        for value in 11...15 {
            wall.advance(seconds: 60)
            _ = try await engine.command(Self.brightness + "/set", "\(value)")
        }
        let limited = try await ask(engine, #""characteristic": "\#(Self.brightness)", "from": 0, "limit": 2"#)
        #expect(points(limited).map { $0.last } == [.int(14), .int(15)])
        #expect(limited["data"]?["truncated"] == true)
        // 2027-01-15T08:00:00Z is 1_800_000_000 s; the range holds the sets at +2 and +3 minutes.
        let iso = try await ask(engine, #""characteristic": "\#(Self.brightness)", "from": "2027-01-15T08:01:30Z", "to": "2027-01-15T09:03:00+01:00""#)
        #expect(points(iso).map { $0.last } == [.int(12), .int(13)])
        #expect(iso["data"]?["previous"]?.array == [.int(Self.startMilliseconds + 60_000), .int(11)])
    }

    @Test("bad requests are refused with their code and record nothing")
    func refusals() async throws {
        let store = try HomeStore.inMemory()
        let wall = WallClock(Self.start)
        let engine = try await harness(store: store, wall: wall)
        defer { Task { await engine.stop() } }
        _ = try await engine.command(Self.brightness + "/set", "40")
        let before = try await ask(engine, #""characteristic": "\#(Self.brightness)""#)
        let cases: [(String, String, String)] = [
            (#""characteristic": "\#(Self.brightness)", "from": 2000, "to": 1000"#, "invalid-request", "after"),
            (#""characteristic": "\#(Self.brightness)", "limit": 0"#, "invalid-request", "limit"),
            (#""characteristic": "\#(Self.brightness)", "limit": 100001"#, "invalid-request", "limit"),
            (#""characteristic": "\#(Self.brightness)", "from": "yesterday""#, "invalid-request", "ISO 8601"),
            (#""characteristic": "\#(Self.brightness)", "to": -5"#, "invalid-request", "Unix milliseconds"),
            (#""characteristic": "homegate/lab/office/lamp/lightbulb/colour""#, "not-found", "colour"),
            (#""characteristic": "homegate/lab/office/lamp/lightbulb""#, "invalid-request", "not a characteristic"),
            (#""accessory": "lamp", "characteristic": 999"#, "not-found", "no characteristic with iid 999"),
            (#""from": 0"#, "invalid-request", "\"characteristic\" is required"),
        ]
        for (body, code, words) in cases {
            let answer = try await ask(engine, body)
            #expect(answer["ok"] == false, "\(body)")
            #expect(answer["error"]?.string == code, "\(body): \(answer)")
            #expect(answer["message"]?.string?.contains(words) == true, "\(body): \(answer)")
        }
        let unknown = try await ask(engine, "", topic: "homegate/$request/history/delete")
        #expect(unknown["error"]?.string == "unknown-request")
        let after = try await ask(engine, #""characteristic": "\#(Self.brightness)""#)
        #expect(points(after) == points(before) && points(after).count == 1)
        #expect(try store.historyPointCount() == 1)
    }

    @Test("points older than the retention are pruned when the engine's clock comes round; a characteristic keeps at most max points")
    func pruning() async throws {
        let store = try HomeStore.inMemory()
        let wall = WallClock(Self.start)
        let engine = try await harness(store: store, wall: wall, history: Gateway.History(retention: .seconds(7 * 86_400), maxPoints: 3))
        defer { Task { await engine.stop() } }
        for value in 1...5 {
            wall.advance(seconds: 1)
            _ = try await engine.command(Self.brightness + "/set", "\(value)")
        }
        #expect(points(try await ask(engine, #""characteristic": "\#(Self.brightness)""#)).map { $0.last } == [.int(3), .int(4), .int(5)])
        wall.advance(seconds: 6 * 86_400)
        _ = try await engine.command(Self.brightness + "/set", "6")
        wall.advance(seconds: 86_401) // the first five are now over seven days old, the sixth a day
        let sleeping = engine.clock.sleeperCount
        engine.clock.advance(by: .seconds(3_600))
        await engine.clock.waitForSleepers(sleeping) // the pruner asked for its write and sleeps again
        let pruned = try await ask(engine, #""characteristic": "\#(Self.brightness)", "from": 0"#)
        #expect(points(pruned) == [[.int(Self.startMilliseconds + 5_000 + 6 * 86_400_000), .int(6)]])
        #expect(try store.historyPointCount() == 1)
    }

    @Test("a renamed accessory keeps its history under its new topic")
    func rename() async throws {
        let store = try HomeStore.inMemory()
        let wall = WallClock(Self.start)
        let engine = try await harness(store: store, wall: wall)
        defer { Task { await engine.stop() } }
        _ = try await engine.command(Self.brightness + "/set", "55")
        try engine.bus.publish("homegate/$request/accessory/rename", #"{"accessory": "Lamp", "newName": "Desk Lamp"}"#)
        #expect(try JSON.parse(await engine.bus.next(on: "homegate/$response/accessory/rename").payload)["ok"] == true)
        let renamed = "homegate/lab/office/desk-lamp/lightbulb/brightness"
        let answer = try await ask(engine, #""characteristic": "\#(renamed)""#)
        #expect(answer["data"]?["characteristic"]?.string == renamed)
        #expect(points(answer).map { $0.last } == [.int(55)])
        let old = try await ask(engine, #""characteristic": "\#(Self.brightness)""#)
        #expect(old["error"]?.string == "not-found")
    }

    @Test("history off: nothing recorded, what was kept is deleted at the start, requests answered history-off")
    func off() async throws {
        let store = try HomeStore.inMemory()
        try store.recordHistory([HistoryPoint(characteristic: CharacteristicReference(accessoryID: "lamp", iid: 10), time: 1, value: "1")], maxPoints: 10)
        let wall = WallClock(Self.start)
        let engine = try await harness(store: store, wall: wall, history: nil)
        defer { Task { await engine.stop() } }
        _ = try await engine.command(Self.brightness + "/set", "70")
        let answer = try await ask(engine, #""characteristic": "\#(Self.brightness)""#)
        #expect(answer["ok"] == false)
        #expect(answer["error"]?.string == "history-off")
        // A request that changes nothing is answered once the store has everything asked so far.
        try engine.bus.publish("homegate/$request/simulator/behaviour", #"{"accessory": "lamp"}"#)
        #expect(try JSON.parse(await engine.bus.next(on: "homegate/$response/simulator/behaviour").payload)["ok"] == true)
        #expect(try store.historyPointCount() == 0)
    }
}

@Suite("history/get parsing")
struct HistoryRequestTests {
    @Test("defaults: the 24 hours up to now, 10,000 points; a start alone runs to now")
    func defaults() throws {
        let request = try HistoryRequest(verb: "get", body: ["characteristic": "~/hall/lamp/lightbulb/on"])
        #expect(request == HistoryRequest(characteristic: .topic("~/hall/lamp/lightbulb/on")))
        #expect(try request.range(now: 100_000_000) == (100_000_000 - 86_400_000)...100_000_000)
        #expect(try request.range(now: 1_000) == 0...1_000)
        let started = try HistoryRequest(verb: "get", body: ["characteristic": "x", "from": 5_000])
        #expect(try started.range(now: 9_000) == 5_000...9_000)
        let error = #expect(throws: RequestError.self) { try started.range(now: 4_000) }
        #expect(error?.code == "invalid-request")
    }

    @Test("times as Unix milliseconds or ISO 8601 with an offset; the instance form with accessory and iid")
    func fields() throws {
        let request = try HistoryRequest(verb: "get", body: ["accessory": "lamp", "characteristic": 10, "home": "Lab",
                                                             "from": "1970-01-01T01:00:01.5+01:00", "to": 2_500, "limit": 7])
        #expect(request == HistoryRequest(characteristic: .instance(accessory: "lamp", iid: 10), home: "Lab", from: 1_500, to: 2_500, limit: 7))
    }

    @Test("mistakes are invalid-request, other verbs unknown-request", arguments: [
        (["characteristic": "x", "from": 1.5] as [String: JSON], "invalid-request"),
        (["characteristic": "x", "from": "2026-11-21"], "invalid-request"),
        (["characteristic": "x", "to": true], "invalid-request"),
        (["characteristic": "x", "limit": "10"], "invalid-request"),
        (["characteristic": "x", "limit": 2.5], "invalid-request"),
        (["characteristic": "x", "from": 253_402_300_800_000], "invalid-request"),
        (["characteristic": 10], "invalid-request"),
        (["from": 0], "invalid-request"),
    ])
    func mistakes(body: [String: JSON], code: String) {
        let error = #expect(throws: RequestError.self) { try HistoryRequest(verb: "get", body: body) }
        #expect(error?.code == code, "\(body)")
    }

    @Test func otherVerbs() {
        let error = #expect(throws: RequestError.self) { try HistoryRequest(verb: "clear", body: ["characteristic": "x"]) }
        #expect(error?.code == "unknown-request")
    }
}

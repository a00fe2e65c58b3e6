import Foundation
import Testing
import Wire
@testable import HomeModel

/// Adaptive Lighting's control point values (``TransitionControl``): the writes HomeGate makes,
/// byte for byte as HAP-NodeJS's Adaptive Lighting controller (the accessory side) decoded them
/// (`Tests/Fixtures/hap/adaptive_lighting_vectors.json`: each vector's write and what the
/// reference made of it, recorded with the harness that runs the reference's own code,
/// `scripts/check-adaptive-lighting-reference`), the bulb's answers, and the day's curve.
@Suite struct TransitionControlTests {
    static func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    static func calendar(_ zone: String) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        return calendar
    }

    struct Vector {
        let name: String
        let write: String
        let reference: [String: JSON]
    }

    static func vectors() throws -> [Vector] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/hap/adaptive_lighting_vectors.json")
        let json = try JSON.parse(Array(try Data(contentsOf: url)))
        return (json["vectors"]?.array ?? []).map { vector in
            Vector(name: vector["name"]?.string ?? "", write: vector["write"]?.string ?? "", reference: vector["reference"]?.object ?? [:])
        }
    }

    @Test func theEncoderMakesTheWritesTheReferenceDecoded() throws {
        let vectors = try Self.vectors()
        #expect(Set(vectors.map(\.name)) == Set(Self.writes.keys))
        for vector in vectors {
            #expect(Self.writes[vector.name].map { Data($0).base64EncodedString() } == vector.write, "\(vector.name)")
        }
    }

    @Test func theReferenceTookEachCurveAsMade() throws {
        for vector in try Self.vectors() where vector.name != "off" {
            let decoded = try #require(vector.reference["activeTransition"]?.object, "\(vector.name)")
            let made = try #require(Self.transitions[vector.name])
            #expect(decoded["iid"]?.int == Int64(made.temperatureIID) && decoded["brightnessCharacteristicIID"]?.int == Int64(made.brightnessIID))
            #expect(decoded["transitionStartMillis"]?.double == (made.start.timeIntervalSince1970 * 1000).rounded())
            #expect(decoded["transitionId"]?.string == "3f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
            #expect(decoded["updateInterval"]?.int == TransitionControl.milliseconds(made.updateInterval))
            #expect(decoded["notifyIntervalThreshold"]?.int == TransitionControl.milliseconds(made.notifyIntervalThreshold))
            let range = decoded["brightnessAdjustmentRange"]
            #expect(range?["minBrightnessValue"]?.int == Int64(made.brightnessRange.lowerBound) && range?["maxBrightnessValue"]?.int == Int64(made.brightnessRange.upperBound))
            let curve = decoded["transitionCurve"]?.array ?? []
            #expect(curve.count == made.curve.count, "\(vector.name)")
            for (index, (entry, mine)) in zip(curve, made.curve).enumerated() {
                #expect(entry["temperature"]?.double.map(Float.init) == mine.temperature, "\(vector.name) entry \(index)")
                #expect(entry["brightnessAdjustmentFactor"]?.double.map(Float.init) == mine.adjustmentFactor, "\(vector.name) entry \(index)")
                #expect(entry["transitionTime"]?.int == TransitionControl.milliseconds(mine.transitionTime), "\(vector.name) entry \(index)")
                // The reference keeps a hold on the entry before the one it leads to.
                let hold = index + 1 < made.curve.count ? TransitionControl.milliseconds(made.curve[index + 1].hold) : 0
                #expect((entry["duration"]?.int ?? 0) == hold, "\(vector.name) entry \(index)")
            }
        }
        #expect(try Self.vectors().first { $0.name == "off" }?.reference["disabled"] == .bool(true))
    }

    @Test func theReferencesAnswersRead() throws {
        for vector in try Self.vectors() {
            let response = try #require(vector.reference["response"]?.string.flatMap { Data(base64Encoded: $0) }, "\(vector.name)")
            let answer = try TransitionControl.answer(Array(response))
            if vector.name == "off" {
                #expect(answer == .inactive)
            } else {
                let made = try #require(Self.transitions[vector.name])
                #expect(answer == .active(temperatureIID: made.temperatureIID, transitionID: made.transitionID, timeSinceStart: .zero))
            }
        }
        #expect(throws: TLVError.self) { try TransitionControl.answer([0x01, 0x00]) }
    }

    @Test func theSupportedConfigurationAsTheReferenceWritesIt() throws {
        // `reference.js --supported 52 55` and `--supported 300 70000`.
        let nl55 = try TransitionControl.supported(Array(Data(base64Encoded: "AQYBATQCAQEAAAEGAQE3AgEC")!))
        #expect(nl55.map(\.iid) == [52, 55] && nl55.map(\.kind) == [1, 2])
        let wide = try TransitionControl.supported(Array(Data(base64Encoded: "AQcBAiwBAgEBAAABCQEEcBEBAAIBAg==")!))
        #expect(wide.map(\.iid) == [300, 70000] && wide.map(\.kind) == [1, 2])
        // The Nanoleaf NL55's own, as captured (its kinds 4 bytes wide).
        let captured = try TransitionControl.supported([0x01, 0x09, 0x01, 0x01, 0x34, 0x02, 0x04, 0x01, 0, 0, 0, 0x00, 0x00, 0x01, 0x09, 0x01, 0x01, 0x37, 0x02, 0x04, 0x02, 0, 0, 0])
        #expect(captured.map(\.iid) == [52, 55] && captured.map(\.kind) == [1, 2])
    }

    // MARK: The day's curve

    @Test func aDayWarmAtNightCoolAtMiddayWithinTheBulbsBounds() {
        let start = Self.utc("2026-11-28T12:20:00Z")
        let curve = TransitionControl.dayCurve(from: start, calendar: Self.calendar("UTC"), temperatures: 153...370)
        #expect(curve.count == 26, "now, 23 whole hours, and the end")
        #expect(curve.reduce(Duration.zero) { $0 + $1.transitionTime } == .seconds(86_400))
        #expect(curve[0].transitionTime == .zero && curve[1].transitionTime == .seconds(40 * 60))
        #expect(curve[0].temperature == 200 && curve[0].adjustmentFactor == -0.5, "midday: 5000 K, a brighter light cooler")
        let threeAM = curve[15] // 12:20 + 40 min = 13:00; entry k is (12 + k):00
        #expect(threeAM.temperature == 370 && threeAM.adjustmentFactor == Float(-0.5 * 30 / 200), "3:00: as warm as the bulb goes (400 wanted, 370 its bound)")
        #expect(curve.allSatisfy { (153...370).contains($0.temperature) && $0.adjustmentFactor <= 0 })
        let berlin = TransitionControl.dayCurve(from: start, calendar: Self.calendar("Europe/Berlin"), temperatures: 140...500)
        #expect(berlin[0].temperature == Float(TransitionControl.mireds(atHour: 13 + 20.0 / 60).rounded()), "the local hour: 13:20 in Berlin")
    }

    static var transitions: [String: TransitionControl.Transition] {
        let id = withUnsafeBytes(of: UUID(uuidString: "3F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!.uuid) { Array($0) }
        let noon = utc("2026-11-28T12:00:00Z")
        let morning = Date(timeIntervalSince1970: 1_780_292_232.345) // 2026-06-01T05:37:12.345Z
        return [
            "nl55-day-from-noon-utc": TransitionControl.Transition(
                temperatureIID: 55, brightnessIID: 52, transitionID: id, start: noon,
                curve: TransitionControl.dayCurve(from: noon, calendar: calendar("UTC"), temperatures: 153...470)),
            "wide-iids-berlin-morning": TransitionControl.Transition(
                temperatureIID: 70000, brightnessIID: 300, transitionID: id, start: morning,
                curve: TransitionControl.dayCurve(from: morning, calendar: calendar("Europe/Berlin"), temperatures: 140...500),
                brightnessRange: 1...100, updateInterval: .seconds(30), notifyIntervalThreshold: .seconds(300)),
            "held-entry": TransitionControl.Transition(
                temperatureIID: 11, brightnessIID: 10, transitionID: id, start: noon, curve: [
                    .init(temperature: 250, adjustmentFactor: -0.5, transitionTime: .zero),
                    .init(temperature: 300, adjustmentFactor: -0.25, transitionTime: .seconds(3600), hold: .seconds(600)),
                    .init(temperature: 400, adjustmentFactor: 0, transitionTime: .seconds(7200)),
                ]),
        ]
    }

    /// The vectors' writes, made by the encoder under test.
    static var writes: [String: [UInt8]] {
        transitions.mapValues(TransitionControl.enabling).merging(["off": TransitionControl.disabling(temperatureIID: 55)]) { first, _ in first }
    }
}

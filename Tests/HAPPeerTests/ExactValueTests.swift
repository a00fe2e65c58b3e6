import HomeModel
import Testing
import Wire
@testable import HAPDriver

/// Values from a device are published exactly as it sent them: float32 noise goes, digits never
/// do, and `data` that is not base64 stays as sent. Through the binary: DeviceZooTests
/// (ConnectSense's 0.03 A).
@Suite("Device values exactly as sent", .startsProcesses)
struct ExactValueTests {
    @Test("float32 noise becomes the shortest decimal of the same float32", arguments: [
        (60.099998, 60.1), (0.28999999, 0.29), (120.5999984741211, 120.6), (379.69299, 379.693), (175.85001, 175.85),
    ])
    func noiseGoes(_ sent: Double, _ published: Double) {
        #expect(AccessoryMapping.exact(sent) == published)
    }

    @Test("a reading finer than minStep, a number already short, one beyond float32's precision: unchanged", arguments: [
        0.03, 0.05, 59.48, 1005.7, 33.33, 21, 16_777_217, -40.5, 0, 1e-50, 3.4e39,
    ])
    func digitsStay(_ sent: Double) {
        #expect(AccessoryMapping.exact(sent) == sent)
    }

    @Test("a float characteristic's JSON number is taken without rounding to the device's step")
    func floatFromJSON() {
        #expect(AccessoryMapping.value(from: .double(0.03), format: .float) == .float(0.03))
        #expect(AccessoryMapping.value(from: .double(60.099998), format: .float) == .float(60.1))
    }

    @Test("data: base64 as bytes; anything else as the device sent it")
    func dataAsSent() {
        #expect(AccessoryMapping.value(from: "AA==", format: .data) == .data([0]))
        #expect(AccessoryMapping.value(from: "03", format: .data) == .string("03"))
        #expect(AccessoryMapping.value(from: "03", format: .data).map { $0.json } == "03")
    }
}

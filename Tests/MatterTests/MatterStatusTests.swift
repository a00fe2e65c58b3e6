import Matter
import Testing
import Wire
@testable import MatterDriver

@Suite struct MatterStatusTests {
    @Test("a refusal carries the Matter status in words beside HAP's")
    func refusals() {
        let constraint = MatterDriver.statusError(.refused(.sdkStackError, "InteractionModelError: ConstraintError (0x87)"), doing: "the command")
        #expect(constraint.status == .invalidValue)
        #expect(constraint.message.contains("CONSTRAINT_ERROR (0x87)"), "\(constraint.message)")
        let busy = MatterDriver.statusError(.refused(.sdkStackError, "Busy"), doing: "the command")
        #expect(busy.status == .busy && busy.message.contains("BUSY"))
        #expect(MatterDriver.statusError(.refused(.nodeNotReady, "Node 5 is not (yet) available."), doing: "x").status == .communicationFailure)
        #expect(MatterDriver.statusError(.timedOut("device_command"), doing: "x").status == .timedOut)
        #expect(MatterStatus.writeStatus(in: [["Path": ["EndpointId": 1], "Status": 0x88]]) == 0x88)
        #expect(MatterStatus.writeStatus(in: [["Path": ["EndpointId": 1], "Status": 0]]) == 0)
        #expect(MatterStatus.hapStatus(0x88) == .readOnly)
    }

    @Test("Generic Switch events: multi-press switches by MultiPressComplete, others by ShortRelease or InitialPress; LongPress is a long press")
    func switchEvents() {
        func event(_ id: UInt32, presses: Int64? = nil) -> NodeEvent {
            NodeEvent(nodeID: 1, endpoint: 1, cluster: 0x3B, event: id, data: presses.map { ["totalNumberOfPressesCounted": .int($0)] })
        }
        let multi: UInt32 = 0b1_1110 // momentary, release, long press, multi press
        #expect(MatterDriver.switchEvent(event(6, presses: 1), features: multi) == 0)
        #expect(MatterDriver.switchEvent(event(6, presses: 2), features: multi) == 1)
        #expect(MatterDriver.switchEvent(event(2), features: multi) == 2)
        #expect(MatterDriver.switchEvent(event(3), features: multi) == nil)
        #expect(MatterDriver.switchEvent(event(1), features: multi) == nil)
        let plain: UInt32 = 0b0_0110 // momentary with release
        #expect(MatterDriver.switchEvent(event(3), features: plain) == 0)
        #expect(MatterDriver.switchEvent(event(1), features: plain) == nil)
        #expect(MatterDriver.switchEvent(event(1), features: 0b10) == 0)
    }
}

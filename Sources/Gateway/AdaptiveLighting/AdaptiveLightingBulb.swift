import Foundation
import HomeModel
import Wire

/// A lightbulb service that can follow Adaptive Lighting by itself: it has the Characteristic
/// Value Transition Control and Supported Characteristic Value Transition Configuration, a
/// colour temperature and a brightness (HomeKit's requirements for the Home app's switch).
struct AdaptiveLightingBulb: Sendable, Equatable {
    let service: ServiceReference
    /// The control point the transition is written to.
    let control: CharacteristicReference
    /// The colour temperature the transition drives, and its bounds (mireds).
    let temperature: Int
    let temperatures: ClosedRange<Double>
    /// The brightness the adjustment reads.
    let brightness: Int
    /// Active Transition Count, when the bulb has it: it drops to 0 when the bulb ends it.
    let activeCount: Int?
    /// The characteristics whose write by a person ends it, as in the Home app: colour
    /// temperature, hue and saturation.
    let manual: Set<Int>

    init?(_ service: Service, of accessory: AccessoryID) {
        guard service.type == "lightbulb",
              let control = service.characteristic(ofType: "transition-control"),
              service.characteristic(ofType: "supported-transition-configuration") != nil,
              let temperature = service.characteristic(ofType: "color-temperature"),
              let brightness = service.characteristic(ofType: "brightness") else { return nil }
        self.service = ServiceReference(accessoryID: accessory, serviceIID: service.iid)
        self.control = CharacteristicReference(accessoryID: accessory, iid: control.iid)
        self.temperature = temperature.iid
        let low = temperature.minValue ?? 140, high = temperature.maxValue ?? 500
        self.temperatures = min(low, high)...max(low, high)
        self.brightness = brightness.iid
        self.activeCount = service.characteristic(ofType: "active-transition-count")?.iid
        self.manual = Set(["color-temperature", "hue", "saturation"].compactMap { service.characteristic(ofType: $0)?.iid })
    }

    /// A day's colour-temperature curve from `now` for this bulb (a new transition id each time).
    func dayTransition(from now: Date, calendar: Calendar) -> TransitionControl.Transition {
        TransitionControl.Transition(
            temperatureIID: temperature, brightnessIID: brightness, transitionID: withUnsafeBytes(of: UUID().uuid) { Array($0) },
            start: now, curve: TransitionControl.dayCurve(from: now, calendar: calendar, temperatures: temperatures))
    }

    /// Checks the bulb's answer to a transition written to it (`name` for messages): it must be
    /// a transition of its own, running.
    /// - Throws: `StatusError` (communication failure) saying what the bulb answered instead.
    static func checkTaken(_ answer: Value?, name: String) throws(StatusError) {
        guard case .data(let bytes)? = answer else {
            throw StatusError(.communicationFailure, "\(name) did not answer the transition with its own")
        }
        let taken: TransitionControl.Answer
        do throws(TLVError) {
            taken = try TransitionControl.answer(bytes)
        } catch {
            throw StatusError(.communicationFailure, "\(name) answered the transition with what is not one: \(error)")
        }
        guard case .active = taken else {
            throw StatusError(.communicationFailure, "\(name) did not take the transition: it answered that none runs")
        }
    }

    /// Every such service of an accessory.
    static func all(of accessory: Accessory) -> [AdaptiveLightingBulb] {
        accessory.visibleServices.compactMap { AdaptiveLightingBulb($0, of: accessory.id) }
    }
}

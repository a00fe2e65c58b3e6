import Accessories
import Foundation
import Logging
import HomeModel
import HomeStore
import Timing
import Wire

/// Adaptive Lighting, driven by HomeGate (docs/mqtt-api.md, "Adaptive Lighting"): for a
/// lightbulb that can follow a transition by itself (``AdaptiveLightingBulb``),
/// `<service>/adaptive-lighting` is `on` or `off`, retained, and `.../set` `on` writes the bulb
/// a day's colour-temperature curve (``TransitionControl``), acknowledged once the bulb confirmed
/// it; the bulb then follows it with no traffic. The transition is renewed before its curve ends
/// (``AdaptiveLightingSchedule``), and given again when the gateway starts and when the bulb
/// comes back. `off`, a person's write to the colour temperature, hue or saturation (as in the
/// Home app), or the bulb's own Active Transition Count dropping to 0 ends it
/// (``AdaptiveLightingSchedule/endByHand(_:in:)``, ``AdaptiveLightingSchedule/endByBulb(_:at:in:)``).
extension Gateway {
    // MARK: Sets and gets

    /// A set (`on`, `off`, `true`, `false`, or `{"value": ...}`) or a get on a bulb's
    /// `adaptive-lighting`: a set is acknowledged once the bulb confirmed it.
    func handleAdaptiveLighting(_ command: Inbound.Command, service: ServiceReference, reply: Reply) {
        guard let bulb = tree.adaptiveLightingBulb(service) else {
            acknowledge(reply, failure: .noSuchResource, "\(tree.accessory(service.accessoryID)?.accessory.name ?? service.accessoryID.rawValue) has no Adaptive Lighting: "
                + "its lightbulb needs the transition control, supported transition configuration, colour temperature and brightness characteristics")
            return
        }
        guard command.verb == .set else {
            acknowledge(reply, ["ok": true, "value": .string(adaptiveLighting.isOn(service) ? "on" : "off")])
            return
        }
        guard let on = CommandValue.onOff(command.body) else {
            acknowledge(reply, failure: .invalidValue, "adaptive-lighting takes on or off (or true, false)")
            return
        }
        work.start(on: driver.taskExecutor(for: service.accessoryID)) { [weak self] in
            guard let self else { return }
            await self.switchAdaptiveLighting(bulb, on: on, reply: reply)
        }
    }

    private func switchAdaptiveLighting(_ bulb: AdaptiveLightingBulb, on: Bool, reply: Reply) async {
        do throws(StatusError) {
            if on { try await startTransition(bulb) } else { try await endTransition(bulb) }
            acknowledge(reply, ["ok": true, "value": .string(adaptiveLighting.isOn(bulb.service) ? "on" : "off"),
                                "ms": .double(reply.millisecondsSinceReceived)])
        } catch {
            acknowledge(reply, failure: error.status, error.message)
        }
    }

    // MARK: The bulb

    /// Writes the bulb a day's curve from now; once it confirmed, Adaptive Lighting is on.
    func startTransition(_ bulb: AdaptiveLightingBulb) async throws(StatusError) {
        let transition = bulb.dayTransition(from: configuration.now(), calendar: configuration.calendar)
        let answer = try await driver.writeWithResponse(.data(TransitionControl.enabling(transition)), to: bulb.control)
        try AdaptiveLightingBulb.checkTaken(answer, name: tree.name(of: bulb.control))
        let wasOn = adaptiveLighting.isOn(bulb.service)
        adaptiveLighting.confirmed(bulb.service, span: transition.span, now: clock.elapsed)
        if !wasOn { adaptiveLightingChanged(bulb.service) }
        renewalDeadlines.wake(for: adaptiveLighting.nextRenewal) // the renewal loop sleeps until a later one
    }

    /// Tells the bulb to end its transition; Adaptive Lighting is off once it answered.
    private func endTransition(_ bulb: AdaptiveLightingBulb) async throws(StatusError) {
        _ = try await driver.writeWithResponse(.data(TransitionControl.disabling(temperatureIID: bulb.temperature)), to: bulb.control)
        if adaptiveLighting.isOn(bulb.service) || adaptiveLighting.wanted.contains(bulb.service) {
            adaptiveLighting.ended(bulb.service)
            adaptiveLightingChanged(bulb.service)
        }
    }

    /// The state changed: published, stored, announced; `ended` says why it ended, for the log.
    func adaptiveLightingChanged(_ service: ServiceReference, ended: String? = nil) {
        if let ended { logger.info("Adaptive Lighting of \(tree.accessory(service.accessoryID)?.accessory.name ?? service.accessoryID.rawValue) ended: \(ended)") }
        if let topic = tree.adaptiveLightingTopic(of: service) {
            let payload = adaptiveLighting.payload(service)
            if policy.isDisabled(service.accessoryID) { withhold(topic, payload) } else { assertRetained(topic, payload) }
        }
        let wanted = adaptiveLighting.wanted
        storeWriter.write("save the Adaptive Lighting bulbs") { store throws(StoreError) in try store.saveAdaptiveLighting(wanted) }
        guard let (home, accessory) = tree.accessory(service.accessoryID) else { return }
        announce(Announcement("adaptive-lighting", ["accessory": .string(accessory.id.rawValue), "name": .string(accessory.name), "home": .string(home.name),
                                        "service": .int(Int64(service.serviceIID)), "on": .bool(adaptiveLighting.isOn(service))]))
    }

    // MARK: Renewals

    /// Renews each transition before its curve ends, one sleep at a time.
    func renewAdaptiveLighting() async throws {
        while true {
            try await renewalDeadlines.wait(renewalDeadlines.sleep(until: adaptiveLighting.nextRenewal), on: clock)
            for service in adaptiveLighting.due(now: clock.elapsed) {
                adaptiveLighting.renewing(service, now: clock.elapsed)
                giveTransition(to: service, because: "renewal")
            }
        }
    }

    /// A wanted bulb is (again) reachable, or the gateway started: it gets a new transition.
    func resumeAdaptiveLighting(of accessory: AccessoryID) {
        for service in adaptiveLighting.wanted where service.accessoryID == accessory {
            giveTransition(to: service, because: "the bulb is back")
        }
    }

    /// Writes a new transition as device work; a failure is logged (and a renewal tried again).
    private func giveTransition(to service: ServiceReference, because reason: String) {
        guard let bulb = tree.adaptiveLightingBulb(service) else {
            adaptiveLighting.forget(service)
            return
        }
        work.start(on: driver.taskExecutor(for: service.accessoryID)) { [weak self] in
            guard let self else { return }
            await self.giveTransition(to: bulb, because: reason)
        }
    }

    private func giveTransition(to bulb: AdaptiveLightingBulb, because reason: String) async {
        do throws(StatusError) {
            try await startTransition(bulb)
            logger.info("Adaptive Lighting of \(tree.name(of: bulb.control)): a new day's curve (\(reason))")
        } catch {
            adaptiveLighting.renewalFailed(bulb.service, now: clock.elapsed)
            logger.warning("Adaptive Lighting of \(tree.name(of: bulb.control)): the new curve was not taken (\(reason)): \(error.message)")
        }
    }
}

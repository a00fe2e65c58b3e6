import Accessories
import Foundation
import HomeModel
import Wire

/// Management requests carried out: `<base>/$request/<object>/<verb>` for the home itself
/// (section 7 of the contract): homes, rooms, zones, accessories, services, service groups,
/// action sets, timer triggers, pairing, the accessory browser.
///
/// A request goes forward through three files: ``ManagementRequest`` parses it, ``Management``
/// decides it against the homes (HomeKit's rules are ``HomeEditor``'s), and this file carries
/// it out. A layout change is stored, announced on `$events`, republished in `$layout`, and
/// moves the topics (clearing the old retained ones); a device action waits for the device.
extension Gateway {
    /// Answers one management request; throws ``RequestError`` with the wire code.
    func managementRequest(_ request: ManagementRequest) async throws -> [String: JSON] {
        let management = Management(homes: tree.homes, map: tree.map, base: base, isPairedDevice: { [driver] in driver.placement(of: $0) != nil })
        switch request {
        case .layout(let change, let home):
            let outcome = try management.apply(change, home: home)
            commit(outcome.homes)
            return outcome.answer
        case .identify(let accessory, let home):
            return try await identify(try management.accessoryID(accessory, home: home))
        case .pair(let request):
            let placement = try management.placement(room: request.room, home: request.home)
            return try await pairingService.answerPair(at: try browser.address(request.address), code: request.code, placement: placement)
        case .unpair(let accessory, let home):
            return try await pairingService.answerUnpair(try management.accessoryID(accessory, home: home))
        case .pairings(let accessory, let remove, let home):
            return try await pairingService.answerPairings(of: try management.accessoryID(accessory, home: home), removing: remove)
        case .options(let accessory, let options, let home):
            return try accessoryOptions(try management.accessoryID(accessory, home: home), setting: options)
        case .executeActionSet(let name, let home):
            let (homeID, actionSet) = try management.actionSet(name, home: home)
            guard let execution = await executeActionSet(actionSet, inHome: homeID, cause: "request") else {
                throw RequestError.notFound("the action set is gone")
            }
            return ["actionSet": .string(execution.actionSet), "allOk": .bool(execution.ok), "results": .array(tree.listed(execution.outcomes))]
        case .browse(let on):
            return try browse(on)
        case .snapshot(let request):
            return try await snapshot(of: try management.accessoryID(request.accessory, home: request.home), width: request.width, height: request.height)
        }
    }

    /// Takes a new layout: index, store, `$events`, retained topics (old ones cleared).
    func commit(_ newHomes: [Home]) {
        let before = tree.homes
        guard newHomes != before else { return }
        tree.homes = newHomes
        commitLayoutChange(from: before)
    }

    // MARK: Devices

    /// Identify: the accessory's Identify characteristic (Accessory Information) is written `true`.
    private func identify(_ id: AccessoryID) async throws -> [String: JSON] {
        guard let (_, accessory) = tree.accessory(id) else { throw RequestError.notFound("no accessory \(id)") }
        let identify = accessory.services.first { $0.type == "accessory-information" }?.characteristic(ofType: "identify")
        guard let identify else { throw RequestError(code: "not-allowed", message: "\(accessory.name) has no Identify characteristic") }
        let outcome = await outcomes(of: .single(CommandMachine.Item(CharacteristicReference(accessoryID: id, iid: identify.iid), .write(.bool(true)))))
        let status = outcome.first?.outcome.status ?? .communicationFailure
        guard status == .success else {
            let message = if case .failed(let error)? = outcome.first?.outcome { error.message } else { status.name }
            throw RequestError(code: status == .timedOut ? "timeout" : "device-error", message: "\(accessory.name) did not identify: \(message)", status: status)
        }
        return ["accessory": .string(id.rawValue)]
    }

    /// The pairing service, which a gateway without one (the simulator alone) lacks.
    /// - Throws: ``RequestError`` `not-allowed`.
    private var pairingService: any PairingService {
        get throws {
            guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway cannot pair") }
            return pairing
        }
    }
}

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
            return try await pair(request, placement: try management.placement(room: request.room, home: request.home))
        case .unpair(let accessory, let home):
            return try await unpair(try management.accessoryID(accessory, home: home))
        case .pairings(let accessory, let remove, let home):
            return try await devicePairings(try management.accessoryID(accessory, home: home), removing: remove)
        case .options(let accessory, let options, let home):
            return try accessoryOptions(try management.accessoryID(accessory, home: home), setting: options)
        case .executeActionSet(let name, let home):
            let (homeID, actionSet) = try management.actionSet(name, home: home)
            return try await execute(actionSet, inHome: homeID)
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

    private func pair(_ request: ManagementRequest.Pairing, placement: Placement) async throws -> [String: JSON] {
        guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway cannot pair") }
        let (host, port, transport) = try browser.address(request.address)
        do {
            let ids = try await pairing.pair(host: host, port: port, transport: transport, code: request.code, placement: placement)
            return ["accessories": .array(ids.map { .string($0.rawValue) })]
        } catch let error as PairingFailure {
            throw RequestError(code: error.code, message: error.message)
        }
    }

    private func unpair(_ id: AccessoryID) async throws -> [String: JSON] {
        guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway cannot pair") }
        do {
            try await pairing.unpair(id)
        } catch {
            throw RequestError(code: "device-error", message: "\(error)")
        }
        return ["accessory": .string(id.rawValue)]
    }

    /// The controllers the accessory's device is paired with, after removing the one named.
    private func devicePairings(_ id: AccessoryID, removing pairingID: String?) async throws -> [String: JSON] {
        guard let pairing else { throw RequestError(code: "not-allowed", message: "this gateway cannot pair") }
        do {
            if let pairingID { try await pairing.removeController(pairingID, from: id) }
            let controllers = try await pairing.controllers(of: id)
            var answer: [String: JSON] = ["accessory": .string(id.rawValue), "controllers": .array(controllers.map { controller in
                .object(["id": .string(controller.pairingID), "admin": .bool(controller.isAdmin), "thisGateway": .bool(controller.isThisGateway)])
            })]
            if let pairingID { answer["removed"] = .string(pairingID) }
            return answer
        } catch let error as PairingFailure {
            throw RequestError(code: error.code, message: error.message)
        }
    }

    private func execute(_ actionSet: ActionSetID, inHome homeID: HomeID) async throws -> [String: JSON] {
        guard let execution = await executeActionSet(actionSet, inHome: homeID, cause: "request") else {
            throw RequestError.notFound("the action set is gone")
        }
        return ["actionSet": .string(execution.actionSet), "allOk": .bool(execution.ok), "results": .array(tree.listed(execution.outcomes))]
    }
}

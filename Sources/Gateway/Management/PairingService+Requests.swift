import Accessories
import HomeModel
import Wire

/// The pairing requests answered by the pairing service (`Gateway+Management.swift` routes them
/// here): `accessory/pair`, `accessory/unpair`, `accessory/pairings`. A ``PairingFailure``
/// becomes the ``RequestError`` of its code.
extension PairingService {
    /// `accessory/pair`: pairs with the device at `address` (HAP) or commissions the Matter
    /// device `code` names; answers the ids its accessories got.
    func answerPair(at address: (host: String, port: Int, transport: String), code: String, placement: Placement) async throws -> [String: JSON] {
        do {
            let ids = try await pair(host: address.host, port: address.port, transport: address.transport, code: code, placement: placement)
            return ["accessories": .array(ids.map { .string($0.rawValue) })]
        } catch let error as PairingFailure {
            throw RequestError(code: error.code, message: error.message)
        }
    }

    /// `accessory/unpair`: removes the pairing of the device `id` belongs to.
    func answerUnpair(_ id: AccessoryID) async throws -> [String: JSON] {
        do {
            try await unpair(id)
        } catch {
            throw RequestError(code: "device-error", message: "\(error)")
        }
        return ["accessory": .string(id.rawValue)]
    }

    /// `accessory/pairings`: the controllers the device `id` belongs to is paired with, after
    /// removing the one named.
    func answerPairings(of id: AccessoryID, removing pairingID: String?) async throws -> [String: JSON] {
        do {
            if let pairingID { try await removeController(pairingID, from: id) }
            let controllers = try await controllers(of: id)
            var answer: [String: JSON] = ["accessory": .string(id.rawValue), "controllers": .array(controllers.map { controller in
                .object(["id": .string(controller.pairingID), "admin": .bool(controller.isAdmin), "thisGateway": .bool(controller.isThisGateway)])
            })]
            if let pairingID { answer["removed"] = .string(pairingID) }
            return answer
        } catch let error as PairingFailure {
            throw RequestError(code: error.code, message: error.message)
        }
    }
}

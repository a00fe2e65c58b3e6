import Accessories
import HomeModel

/// Pairing with HomeKit devices and commissioning Matter ones, as the gateway's management
/// requests need it; the executable provides it (the engine knows nothing of HAP or Matter).
public protocol PairingService: Sendable {
    /// Pairs with the accessory server at `host`:`port` over `transport` (`ip` or `coap`), stores
    /// the pairing and starts using it; or, for `transport` `matter`, commissions the Matter
    /// device the setup code names through the Matter Server (no host or port). Returns the ids
    /// its accessories get. Throws ``PairingFailure``.
    func pair(host: String, port: Int, transport: String, code: String, placement: Placement) async throws -> [AccessoryID]
    /// Removes the pairing of the device that `accessory` belongs to, on the device and here.
    func unpair(_ accessory: AccessoryID) async throws
    /// The controllers the device that `accessory` belongs to is paired with, as the device
    /// lists them (HomeKit's list pairings). Throws ``PairingFailure``.
    func controllers(of accessory: AccessoryID) async throws -> [DeviceController]
    /// Removes controller `pairingID` from the device that `accessory` belongs to; never this
    /// gateway's own pairing (that is ``unpair(_:)``). Throws ``PairingFailure``.
    func removeController(_ pairingID: String, from accessory: AccessoryID) async throws
    /// Turns the accessory browser on or off; whether it is on now (a configuration may keep it on).
    func setBrowsing(_ on: Bool) -> Bool
    /// The accessory browser's rounds: the accessories found, not paired with this gateway;
    /// `[]` when it is turned off. One consumer.
    var browserUpdates: AsyncStream<[FoundAccessory]> { get }
}

/// Why pairing failed: a management error code (`device-error`, `invalid-request`, `timeout`)
/// and a message.
public struct PairingFailure: Error, CustomStringConvertible {
    public let code: String
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}


/// A controller a device is paired with (another Home Assistant, an iPhone's Home, this gateway).
public struct DeviceController: Sendable, Equatable {
    /// Its pairing identifier, as the device lists it.
    public let pairingID: String
    /// Whether it may add and remove pairings.
    public let isAdmin: Bool
    /// Whether it is this gateway.
    public let isThisGateway: Bool

    public init(pairingID: String, isAdmin: Bool, isThisGateway: Bool) {
        self.pairingID = pairingID
        self.isAdmin = isAdmin
        self.isThisGateway = isThisGateway
    }
}

import HAP
import Wire

/// A verified session with one accessory server (an accessory or a bridge), as the driver uses
/// it: the accessory database, reads, writes (timed ones too), event subscriptions, events, and
/// its end. Requests are answered in the order made; a request that times out or is cancelled
/// ends the session.
public protocol AccessorySession: AnyObject, Sendable {
    /// The accessory database with what was odd in it.
    func accessoryDatabase(timeout: Duration) async throws(HAPError) -> AccessoryDescription.Parsed
    /// Each characteristic's status and value.
    func read(_ addresses: [CharacteristicAddress], timeout: Duration) async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome]
    /// Writes, each characteristic's outcome once the device answered; `timed`: a timed write
    /// with this time to live (for characteristics with the `tw` permission); each request
    /// within `timeout`.
    func write(_ writes: [CharacteristicWrite], timed ttl: Duration?, timeout: Duration) async throws(HAPError) -> [CharacteristicAddress: CharacteristicOutcome]
    /// Turns events on (or off) for characteristics; each one's outcome.
    func subscribe(_ addresses: [CharacteristicAddress], enabled: Bool, timeout: Duration) async throws(HAPError)
        -> [CharacteristicAddress: CharacteristicOutcome]
    /// A camera's still image (`POST /resource`): JPEG bytes; `aid` names the camera on a bridge.
    func snapshot(aid: Int, width: Int, height: Int, timeout: Duration) async throws(HAPError) -> [UInt8]
    /// Removes a controller's pairing on the device; removing our own unpairs us (the device may
    /// then end the session). Admins only.
    func removePairing(_ pairingID: String) async throws(HAPError)
    /// The controllers the device is paired with (list pairings). Admins only.
    func pairings() async throws(HAPError) -> [PairingEntry]
    /// The values the device reports by itself; ends when the session ends.
    var events: AsyncStream<[CharacteristicValue]> { get }
    /// Whether the session is still open.
    var isOpen: Bool { get }
    /// The executor its requests run on (its connection's event loop), when it has one.
    var preferredExecutor: (any TaskExecutor)? { get }
    /// Ends the session: requests waiting fail, ``events`` ends. Idempotent.
    func close()
    /// Waits until the session ends (the device went away, a request timed out, ``close()``),
    /// and tells why.
    func closed() async -> HAPError
}

extension AccessorySession {
    public var preferredExecutor: (any TaskExecutor)? { nil }
}

import HomeModel
import Wire

/// How long a paired device may stay silent before its accessories count as unreachable, by the
/// kind of device (the configuration's `availability:` section), as zigbee2mqtt's availability
/// tells an active device from a passive one.
///
/// A device is silent when it does not answer: the driver reads a cheap characteristic of it
/// every so often (its keep-alive, ``keepAlive(unreachableAfter:longestAnswer:)``), and one
/// unanswered in time ends the session, so the accessories go unreachable at most this long after
/// the device fell silent. Matter devices are not covered: the Matter Server tells whether a node
/// is available (its subscription to the node lapses), and HomeGate follows it.
public struct Availability: Sendable, Equatable {
    /// A device on Wi-Fi or Ethernet (HAP over IP), mains powered: answers at once (`ip`, default 3.5 s).
    public var ip: Duration = .milliseconds(3500)
    /// A Thread device (HAP over CoAP): answers through its parent router, and a datagram may
    /// need retransmitting (`thread`, default 40 s).
    public var thread: Duration = .seconds(40)
    /// A battery-powered device (``isBatteryPowered(_:)``), of either transport: every read wakes
    /// its radio and drains it (`battery`, default 10 minutes).
    public var battery: Duration = .seconds(600)
    /// Per accessory, by id: wins over the kinds (`accessories`).
    public var accessories: [AccessoryID: Duration] = [:]

    /// The longest a live HAP-over-IP device takes to answer a read.
    public static let ipAnswer: Duration = .seconds(2)
    /// The longest a live Thread device takes to answer a read: two retransmissions of its datagram.
    public static let threadAnswer: Duration = .seconds(10)
    /// The settings allowed, in seconds.
    public static let range: ClosedRange<Double> = 2...86_400

    public init() {}

    /// The time for a device with `accessories` (all of a bridge's): the smallest setting given
    /// for one of them; else `battery` when one of them is battery-powered; else by transport.
    public func unreachableAfter(_ accessories: [Accessory], thread isThread: Bool) -> Duration {
        if let own = accessories.compactMap({ self.accessories[$0.id] }).min() { return own }
        if accessories.contains(where: Self.isBatteryPowered) { return battery }
        return isThread ? thread : ip
    }

    /// The keep-alive that notices a silence of `unreachableAfter`: a read every `interval`,
    /// each with `timeout` to be answered; the two add up to the time. The timeout is the
    /// longest a live device takes when that leaves at least a second between reads, else half
    /// the time.
    public static func keepAlive(unreachableAfter: Duration, longestAnswer: Duration) -> (interval: Duration, timeout: Duration) {
        let timeout = unreachableAfter - longestAnswer >= .seconds(1) ? longestAnswer : unreachableAfter / 2
        return (unreachableAfter - timeout, timeout)
    }

    /// Whether an accessory runs on a battery it cannot charge: it has a Battery service whose
    /// charging state is absent or "not chargeable" (a mains device with a backup battery
    /// reports charging or not charging).
    public static func isBatteryPowered(_ accessory: Accessory) -> Bool {
        accessory.services.contains { service in
            guard service.type == "battery-service" else { return false }
            guard let charging = service.characteristics.first(where: { $0.type == "charging-state" }) else { return true }
            return charging.value?.number == 2
        }
    }
}

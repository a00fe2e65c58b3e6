/// An accessory server found on the network by the accessory browser (HAP: mDNS), not paired
/// with this gateway. HomeKit's `HMAccessoryBrowser` reports the same.
public struct FoundAccessory: Sendable, Hashable {
    /// Its device id (`AA:BB:CC:DD:EE:FF`), the id it pairs by.
    public var deviceID: String
    public var name: String
    public var model: String
    /// The HAP accessory category (1 other, 2 bridge, 5 lightbulb, ...), if it says.
    public var category: Int?
    public var host: String
    public var port: Int
    /// Whether it is paired with a controller (another one: this gateway's own are not listed).
    public var isPaired: Bool
    /// How it is reached: `ip` (HAP over IP) or `coap` (HAP over CoAP, a Thread accessory).
    public var transport: String

    public init(deviceID: String, name: String, model: String, category: Int?, host: String, port: Int, isPaired: Bool, transport: String = "ip") {
        self.deviceID = deviceID
        self.name = name
        self.model = model
        self.category = category
        self.host = host
        self.port = port
        self.isPaired = isPaired
        self.transport = transport
    }
}

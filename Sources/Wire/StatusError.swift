/// Why an operation on a characteristic failed: the HAP status it is reported with, and a
/// message a person understands (`brightness must be within 0...100, got 150`).
///
/// The one error of the characteristic path: the home model refuses a value with it, a driver
/// fails a read or write with it (the device's own status, or -70402 when it cannot be reached),
/// and the engine acknowledges with its status and message unchanged.
public struct StatusError: Error, Hashable, CustomStringConvertible {
    public let status: HAPStatus
    public let message: String

    public init(_ status: HAPStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }
}

import Glibc
import Harness

/// A TCP connection to 127.0.0.1 that sends nothing (until its owner writes on `descriptor`).
public struct IdleConnection: Sendable {
    public let descriptor: Int32

    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw FixtureError("cannot connect to port \(port): errno \(errno)") }
    }

    public func close() { _ = Glibc.close(descriptor) }
}

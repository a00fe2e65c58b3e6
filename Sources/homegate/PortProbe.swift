import Foundation
import Gateway
import HomeGateConfig

#if canImport(Glibc)
import Glibc
#endif

/// Whether a TCP port can be listened on, checked by binding it for a moment: a port in use is
/// found before anything is stored, with the address and the system's reason. (The web server
/// binds it for real when the service group starts; if another program takes it in between, the
/// group ends with that error.)
enum PortProbe {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func checkFree(host: String, port: Int) throws(Failure) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw Failure(description: "cannot use \(host):\(port): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { throw Failure(description: "cannot use \(host):\(port): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0 || listen(fd, 1) != 0 {
            throw Failure(description: "cannot listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
    }
}

extension ConfigFile.Output {
    /// The engine's setting for this `gateway.output`.
    var engineOutput: Gateway.Output {
        switch self {
        case .values: .values
        case .json: .json
        case .both: .both
        }
    }
}

import Foundation

/// Where the broker is: `mqtt://host[:port]` (plain TCP, default port 1883) or
/// `mqtts://host[:port]` (TLS, default port 8883). IPv6 hosts go in brackets:
/// `mqtt://[::1]:1883`.
///
/// A user name may be given (`mqtt://alice@host`); a password may not: it would sit in shell
/// history and process listings. Passwords come from a file or an environment variable.
public struct BrokerURL: Hashable, Sendable, CustomStringConvertible {
    /// `mqtt` or `mqtts`.
    public enum Scheme: String, Sendable {
        case mqtt
        case mqtts

        /// The port the scheme implies when the URL names none.
        public var defaultPort: Int { self == .mqtt ? 1883 : 8883 }
    }

    public let scheme: Scheme
    /// Host name or address, without brackets.
    public let host: String
    public let port: Int
    /// The user name given in the URL, if any.
    public let username: String?

    /// Whether the connection uses TLS.
    public var usesTLS: Bool { scheme == .mqtts }

    public init(scheme: Scheme, host: String, port: Int? = nil, username: String? = nil) throws(BrokerURLError) {
        if host.isEmpty { throw BrokerURLError(.missingHost, url: "\(scheme.rawValue)://") }
        let port = port ?? scheme.defaultPort
        guard (1...65_535).contains(port) else {
            throw BrokerURLError(.badPort(String(port)), url: "\(scheme.rawValue)://\(host)")
        }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.username = username
    }

    /// Parses `mqtt://host:port` or `mqtts://host:port`.
    /// - Throws: ``BrokerURLError`` saying what is wrong and what is expected.
    public init(parsing text: String) throws(BrokerURLError) {
        let trimmed = text.trimmingWhitespace()
        guard let separator = trimmed.range(of: "://") else {
            throw BrokerURLError(.missingScheme, url: text)
        }
        let schemeText = trimmed[..<separator.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            throw BrokerURLError(.unsupportedScheme(schemeText), url: text)
        }
        var rest = trimmed[separator.upperBound...]
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[slash...]
            guard path == "/" else { throw BrokerURLError(.unexpectedPath(String(path)), url: text) }
            rest = rest[..<slash]
        }
        if rest.contains("?") || rest.contains("#") {
            throw BrokerURLError(.unexpectedPath(""), url: text)
        }
        var username: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            if userInfo.contains(":") { throw BrokerURLError(.passwordInURL, url: text) }
            guard !userInfo.isEmpty else { throw BrokerURLError(.emptyUsername, url: text) }
            username = String(userInfo)
            rest = rest[rest.index(after: at)...]
        }
        let (host, portText) = try Self.splitHostPort(rest, url: text)
        var port: Int?
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw BrokerURLError(.badPort(String(portText)), url: text)
            }
            port = number
        }
        if host.isEmpty { throw BrokerURLError(.missingHost, url: text) }
        if host.contains(where: { $0 == " " || $0 == "/" }) {
            throw BrokerURLError(.badHost(String(host)), url: text)
        }
        try self.init(scheme: scheme, host: String(host), port: port, username: username)
    }

    private static func splitHostPort(_ authority: Substring, url: String) throws(BrokerURLError) -> (Substring, Substring?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw BrokerURLError(.badHost(String(authority)), url: url)
            }
            let host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty { return (host, nil) }
            guard after.hasPrefix(":") else { throw BrokerURLError(.badHost(String(authority)), url: url) }
            return (host, after.dropFirst())
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return (parts[0], nil)
        case 2: return (parts[0], parts[1])
        default: throw BrokerURLError(.badHost(String(authority)), url: url)
        }
    }

    /// The URL as text, `mqtt://host:port` (the user name, if any, included; never a password).
    public var description: String {
        let hostText = host.contains(":") ? "[\(host)]" : host
        let user = username.map { "\($0)@" } ?? ""
        return "\(scheme.rawValue)://\(user)\(hostText):\(port)"
    }
}

/// Why a broker URL was refused.
public struct BrokerURLError: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        case missingScheme
        case unsupportedScheme(String)
        case missingHost
        case badHost(String)
        case badPort(String)
        case passwordInURL
        case emptyUsername
        case unexpectedPath(String)
    }

    let kind: Kind
    /// The text that was parsed.
    public let url: String

    init(_ kind: Kind, url: String) {
        self.kind = kind
        self.url = url
    }

    public var description: String {
        "invalid broker URL \"\(url)\": \(reason)"
    }

    /// What is wrong, without the URL.
    public var reason: String {
        switch kind {
        case .missingScheme:
            return "expected mqtt://host[:port] or mqtts://host[:port]"
        case .unsupportedScheme(let scheme):
            return "unsupported scheme \"\(scheme)\"; use mqtt:// (TCP) or mqtts:// (TLS)"
        case .missingHost:
            return "no host; expected mqtt://host[:port]"
        case .badHost(let host):
            return "\"\(host)\" is not a host name, address or host:port"
        case .badPort(let port):
            return "port \"\(port)\" is not a number from 1 to 65535"
        case .passwordInURL:
            return "a password may not be given in the URL; put it in a password file or an environment variable"
        case .emptyUsername:
            return "empty user name before '@'"
        case .unexpectedPath(let path):
            return path.isEmpty ? "a broker URL has no query or fragment" : "a broker URL has no path, got \"\(path)\""
        }
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> SubSequence {
        let start = firstIndex(where: { !$0.isWhitespace }) ?? endIndex
        let end = lastIndex(where: { !$0.isWhitespace }).map(index(after:)) ?? start
        return self[start..<end]
    }
}

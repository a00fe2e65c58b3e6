import Foundation

/// A secret (a broker password) that never prints: its description is `<redacted>`, so it
/// cannot reach a log by accident. Read it from a file or an environment variable, never from
/// the command line.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself. Hand it only to the library that needs it.
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// Reads a secret from a file: its first line, without the line break.
    /// - Throws: ``ConfigurationError`` if the file cannot be read or is empty.
    public static func fromFile(_ path: String) throws(ConfigurationError) -> Secret {
        let contents: String
        do {
            contents = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError("cannot read the password file \(path): \(Self.reason(error))")
        }
        if contents.isEmpty { throw ConfigurationError("the password file \(path) is empty") }
        // Split on Unicode scalars: "\r\n" is one Character and would not match "\n".
        let scalars = contents.unicodeScalars
        let end = scalars.firstIndex { $0 == "\n" || $0 == "\r" } ?? scalars.endIndex
        let value = String(scalars[scalars.startIndex..<end])
        if value.isEmpty { throw ConfigurationError("the first line of the password file \(path) is empty; the password must be on it") }
        return Secret(value)
    }

    /// Reads a secret from an environment variable.
    /// - Throws: ``ConfigurationError`` if the variable is not set or empty.
    public static func fromEnvironment(_ name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) -> Secret {
        guard let value = environment[name], !value.isEmpty else {
            throw ConfigurationError("the environment variable \(name) is not set or empty")
        }
        return Secret(value)
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSCocoaErrorDomain && nsError.code == NSFileReadNoSuchFileError { return "no such file" }
        if nsError.domain == NSCocoaErrorDomain && nsError.code == NSFileReadNoPermissionError { return "permission denied" }
        return nsError.localizedDescription
    }
}

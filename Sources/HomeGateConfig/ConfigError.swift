/// A configuration problem: which file, where in it, which key, and what is wrong.
///
/// Printed as `config/demo.yml:12: mqtt.keep_alive: expected a whole number of seconds, got "soon"`.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The configuration file.
    public let file: String
    /// The line the problem is on, when known (1-based).
    public let line: Int?
    /// The dotted key path, such as `mqtt.tls.ca_file`; empty for the file as a whole.
    public let keyPath: String
    /// What is wrong, in words a person understands.
    public let problem: String

    public init(file: String, line: Int?, keyPath: String, problem: String) {
        self.file = file
        self.line = line
        self.keyPath = keyPath
        self.problem = problem
    }

    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        return keyPath.isEmpty ? "\(location): \(problem)" : "\(location): \(keyPath): \(problem)"
    }
}

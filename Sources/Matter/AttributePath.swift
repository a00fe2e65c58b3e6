/// Where an attribute lives on a Matter node: endpoint, cluster and attribute id, written by the
/// Matter Server as `"1/6/0"` (endpoint 1, cluster 0x0006 On/Off, attribute 0 OnOff).
public struct AttributePath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var endpoint: Int
    public var cluster: UInt32
    public var attribute: UInt32

    public init(endpoint: Int, cluster: UInt32, attribute: UInt32) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.attribute = attribute
    }

    /// Reads the server's `endpoint/cluster/attribute` form; nil for anything else (a wildcard
    /// `*`, a missing part, a number out of range).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let endpoint = Int(parts[0]), (0...0xFFFF).contains(endpoint),
              let cluster = UInt32(parts[1]), let attribute = UInt32(parts[2]) else { return nil }
        self.init(endpoint: endpoint, cluster: cluster, attribute: attribute)
    }

    /// The server's form: `1/6/0`.
    public var description: String { "\(endpoint)/\(cluster)/\(attribute)" }

    public static func < (lhs: AttributePath, rhs: AttributePath) -> Bool {
        (lhs.endpoint, lhs.cluster, lhs.attribute) < (rhs.endpoint, rhs.cluster, rhs.attribute)
    }
}

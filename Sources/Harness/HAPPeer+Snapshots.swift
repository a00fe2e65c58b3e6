import Foundation

/// The peer's camera (aid 5, with `camera: true`): the JPEG it serves and the snapshot requests it
/// logged.
extension HAPPeer {
    /// The JPEG the camera (aid 5, ``camera``) answers every snapshot with.
    public static func snapshotJPEG() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap/snapshot.jpg")))
    }

    /// The snapshot requests logged so far, once there are at least `count`: the peer logs a
    /// request as it serves it, and its output reaches us a moment after the answer may have.
    public func snapshotRequests(atLeast count: Int, timeout: Duration = HangGuard.standard) async throws -> [SnapshotRequest] {
        try await waitForOutput(timeout: timeout, for: "\(count) snapshot requests logged by the HAP peer") { text in
            let requests = Self.snapshotRequests(in: text)
            return requests.count >= count ? requests : nil
        }
    }

    /// The snapshots clients asked the camera for so far, in order: the aid and size each asked for.
    public func snapshotRequests() -> [SnapshotRequest] {
        Self.snapshotRequests(in: logText())
    }

    private static func snapshotRequests(in text: String) -> [SnapshotRequest] {
        completeLines(of: text).compactMap { line -> SnapshotRequest? in
            guard line.contains("\"event\": \"snapshot\""),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let width = object["width"] as? Int, let height = object["height"] as? Int else { return nil }
            return SnapshotRequest(aid: object["aid"] as? Int, width: width, height: height)
        }
    }
}

/// A snapshot a client asked the peer's camera for (`POST /resource`): the `aid` in the body
/// (nil when there was none) and the size asked for.
public struct SnapshotRequest: Sendable, Hashable {
    public let aid: Int?
    public let width: Int
    public let height: Int

    public init(aid: Int?, width: Int, height: Int) {
        self.aid = aid
        self.width = width
        self.height = height
    }
}

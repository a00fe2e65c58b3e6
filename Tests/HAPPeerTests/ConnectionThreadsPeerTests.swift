import Foundation
import HAP
import Testing
import TestSupport

/// HAP connections live on SwiftNIO's shared event loop group: many sessions add no threads
/// (the former design started a reader thread per connection and a thread per connect).
@Suite(.serialized) struct ConnectionThreadsPeerTests {
    private static let sessions = 24

    @Test func manySessionsAddNoThreadPerSession() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        // The first session starts the event loop group's threads.
        let first = try await session(with: peer, controller, pairing)
        defer { first.close() }
        let on = try address(try await first.accessories(), aid: 2, type: PeerType.on)
        let before = Self.threadCount()
        var clients: [Client] = []
        for _ in 0..<Self.sessions {
            clients.append(try await session(with: peer, controller, pairing))
        }
        defer { for client in clients { client.close() } }
        let reads = try await withThrowingTaskGroup(of: Bool.self) { group in
            for client in clients {
                group.addTask { try await client.read([on])[on]?.status == .success }
            }
            return try await group.reduce(into: 0) { count, ok in count += ok ? 1 : 0 }
        }
        #expect(reads == Self.sessions)
        let after = Self.threadCount()
        print("HAP threads: \(before) with 1 session, \(after) with \(Self.sessions + 1) sessions")
        #expect(after - before < Self.sessions / 3, "\(before) threads with 1 session, \(after) with \(Self.sessions + 1)")
    }

    private static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }
}

import Foundation
import HAP
import Testing
import TestSupport

/// HAP connections live on SwiftNIO's shared event loop group: many sessions add no threads
/// (the former design started a reader thread per connection and a thread per connect).
@Suite(.serialized, .startsProcesses) struct ConnectionThreadsPeerTests {
    private static let sessions = 24

    @Test func manySessionsAddNoThreadPerSession() async throws {
        let peer = try await HAPPeer.start()
        defer { Task { await peer.stop() } }
        let (controller, pairing) = try await pairWithPeer(peer)
        // The first session starts the event loop group's threads.
        let first = try await session(with: peer, controller, pairing)
        defer { first.close() }
        let on = try address(try await first.accessories(), aid: 2, type: PeerType.on)
        let before = Self.threadNames()
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
        let after = Self.threadNames()
        // Other tests run in this process meanwhile, so the process's own count says nothing:
        // count the event loops' threads (SwiftNIO names them NIO-..., the shared group's NIO-SGLTN-...) and any thread a
        // connection would have of its own.
        let loops = { (names: [String]) in names.filter { $0.hasPrefix("NIO-") }.count }
        print("HAP threads: \(loops(before)) event loop threads with 1 session, \(loops(after)) with \(Self.sessions + 1) sessions")
        #expect(loops(after) == loops(before), "\(before) with 1 session, \(after) with \(Self.sessions + 1)")
        #expect(loops(after) <= ProcessInfo.processInfo.activeProcessorCount, "\(after)")
        #expect(!after.contains { $0.hasPrefix("hap ") }, "a thread per connection: \(after)")
    }

    /// The names of this process's threads (`/proc/self/task/<tid>/comm`).
    private static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

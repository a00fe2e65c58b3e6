import Foundation
import Testing
import TestSupport
@testable import MQTT

/// A connection the broker ends right after accepting it counts as a failed attempt (issue 35):
/// the waits grow instead of starting over at the first, so a client in such a loop never
/// connects more than a few times a second.
@Suite("Reconnects after connections that end at once", .startsProcesses)
struct ReconnectBackoffTests {
    @Test("two clients with one client id take the session from each other: each one's waits grow, they do not reconnect at the first wait forever")
    func sessionTakeoverBacksOff() async throws {
        let broker = try await Mosquitto.start()
        var configuration = TestClient.configuration(broker.url, id: "twin")
        configuration.clientID = "twin-\(UUID().uuidString.prefix(8))"
        let first = try await TestClient.connect(configuration)
        let events = first.client.connectionEvents()
        let second = try await TestClient.connect(configuration) // Mosquitto hands it the session: the first is put out
        let attempts = try await withDeadline(.seconds(60)) { () async -> [Int] in // a hang guard
            var attempts: [Int] = []
            for await event in events {
                if case .reconnecting(_, let attempt) = event { attempts.append(attempt) }
                if attempts.count == 4 { break }
            }
            return attempts
        }
        await first.stop()
        await second.stop()
        await broker.stop()
        let seen = try #require(attempts)
        #expect(seen == Array(seen.sorted()) && Set(seen).count == seen.count,
                "each reconnect of a connection that lasted under \(Client.settledConnection) counts one attempt more: \(seen)")
    }
}

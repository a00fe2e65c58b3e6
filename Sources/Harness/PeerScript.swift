import Foundation

/// A Python peer script that prints JSON event lines and takes JSON control lines on its
/// standard input (`zoo_peer.py`, `coap_peer.py`): stopping it, waiting for a line, and sending a
/// control line that it answers with a `done` (or `error`) line.
struct PeerScript: Sendable {
    /// The script's file name, for messages (`zoo_peer.py`).
    let name: String
    /// What it serves, for messages (the fixture's name).
    let serving: String
    let process: ChildProcess

    /// Stops it (SIGTERM) and waits for it to exit; SIGKILL if it has not within 10 s.
    func stop() async {
        await process.stop()
    }

    /// Everything it printed: JSON event lines and its warnings.
    var logText: String { process.output.value }

    /// The first complete line printed so far that matches `predicate`, else the first that
    /// arrives within `timeout`.
    func waitForLine(timeout: Duration, where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        do {
            return try await process.output.wait(timeout: timeout, for: "a line from \(name)") { text in
                HAPPeer.completeLines(of: text).first(where: predicate)
            }
        } catch {
            throw FixtureError("waited \(timeout) for a line from \(name) (\(serving)); it printed:\n\(logText.suffix(4000))")
        }
    }

    /// Sends one control line and waits for its answer, the next `done` or `error` line.
    func control(_ line: String) async throws {
        let answered = Self.answers(in: process.output.value).count
        try process.writeInput(line + "\n")
        do {
            let answer = try await process.output.wait(timeout: HangGuard.standard, for: "\(name) to answer \(line)") { text in
                let answers = Self.answers(in: text)
                return answers.count > answered ? answers[answered] : nil
            }
            guard answer.contains("\"event\": \"done\"") else { throw FixtureError("\(name) refused \(line): \(answer)") }
        } catch let error as FixtureError {
            throw error
        } catch {
            throw FixtureError("\(name) did not answer \(line); it printed:\n\(logText.suffix(4000))")
        }
    }

    private static func answers(in text: String) -> [String] {
        HAPPeer.completeLines(of: text).filter { $0.hasPrefix("{\"event\": \"done\"") || $0.hasPrefix("{\"event\": \"error\"") }
    }
}

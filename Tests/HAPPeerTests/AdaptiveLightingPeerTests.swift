import Foundation
import Testing
import Harness
import TestSupport

/// The zoo peer's Adaptive Lighting (zoo_peer.py, the accessory side HomeGate's end-to-end tests
/// drive) decodes each recorded transition exactly as HAP-NodeJS's own controller decoded it
/// (Tests/Fixtures/hap/adaptive_lighting_vectors.json): a peer that is faithful to the
/// reference, not only agreeable to HomeGate.
@Suite(.startsProcesses) struct AdaptiveLightingPeerTests {
    @Test("zoo_peer.py decodes every recorded transition as HAP-NodeJS's Adaptive Lighting controller did")
    func decodesAsTheReference() async throws {
        let fixtures = PackageRoot.url.appendingPathComponent("Tests/Fixtures/hap")
        let vectors = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixtures.appendingPathComponent("adaptive_lighting_vectors.json"))) as? [String: Any])
        let python = try HAPPeer.locatePython()
        for vector in vectors["vectors"] as? [[String: Any]] ?? [] {
            let name = vector["name"] as? String ?? ""
            let write = try #require(vector["write"] as? String)
            let reference = try #require(vector["reference"] as? [String: Any])
            let peer = try ChildProcess(python, [fixtures.appendingPathComponent("zoo_peer.py").path, "--decode-transition", write])
            #expect(try await peer.waitForExit(timeout: HangGuard.standard) == 0, "\(name): \(peer.output.value)")
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(peer.output.value.utf8)) as? [String: Any], "\(name): \(peer.output.value)")
            if reference["disabled"] as? Bool == true {
                #expect(decoded["disabled"] as? Bool == true, "\(name): \(decoded)")
                continue
            }
            let expected = try #require(reference["activeTransition"] as? [String: Any])
            for key in expected.keys.sorted() {
                #expect(NSDictionary(dictionary: ["v": decoded[key] ?? NSNull()]).isEqual(to: ["v": expected[key]!]), "\(name).\(key): peer \(decoded[key] ?? "nothing"), reference \(expected[key]!)")
            }
        }
    }
}

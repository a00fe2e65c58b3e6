import Foundation
import MQTT

/// Joins the parts of `$layout` (the index, one part per home, the rooms' parts) into one
/// object, as `docs/mqtt-api.md` tells a client to: `homes`, each with its own fields and
/// `accessories` gathered from its rooms' parts (each accessory with `room`, its room's name).
public enum LayoutAssembly {
    /// The assembled layout from retained messages (topic -> payload text); nil while the index
    /// or a part it names is missing, or a part is of an older layout than the one naming it.
    public static func assemble(_ retained: [String: String], base: String) -> [String: Any]? {
        guard let index = object(retained["\(base)/$layout"]) else { return nil }
        var homes: [[String: Any]] = []
        for entry in index["homes"] as? [[String: Any]] ?? [] {
            guard let topic = entry["layout"] as? String, var home = object(retained[topic]) else { return nil }
            var accessories: [[String: Any]] = []
            for room in home["rooms"] as? [[String: Any]] ?? [] {
                let parts = room["layout"] as? [String] ?? []
                for (number, partTopic) in parts.enumerated() {
                    guard let part = object(retained[partTopic]), part["room"] as? String == room["id"] as? String,
                          part["part"] as? Int == number + 1, part["parts"] as? Int == parts.count else { return nil }
                    for var accessory in part["accessories"] as? [[String: Any]] ?? [] {
                        accessory["room"] = room["name"]
                        accessories.append(accessory)
                    }
                }
                guard accessories.filter({ $0["room"] as? String == room["name"] as? String }).count == room["accessories"] as? Int else { return nil }
            }
            home["accessories"] = accessories
            homes.append(home)
        }
        var layout = index
        layout["homes"] = homes
        return layout
    }

    /// Every topic of the layout's messages that `assemble` read.
    public static func topics(of layout: [String: Any], base: String) -> Set<String> {
        var topics: Set<String> = ["\(base)/$layout"]
        for home in layout["homes"] as? [[String: Any]] ?? [] {
            topics.insert("\(base)/$layout" + String((home["topic"] as? String ?? "").dropFirst(base.count)))
            for room in home["rooms"] as? [[String: Any]] ?? [] {
                topics.formUnion(room["layout"] as? [String] ?? [])
            }
        }
        return topics
    }

    private static func object(_ text: String?) -> [String: Any]? {
        guard let text, !text.isEmpty else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
}

extension GatewayFixture {
    /// The retained `$layout`, its parts joined (``LayoutAssembly``).
    public func layout() async throws -> [String: Any] {
        // "synchronised" is logged when the publishes are queued: wait until the watcher has the
        // whole layout through the broker before reading what it retains.
        _ = try await currentLayout(where: { _ in true })
        guard let layout = LayoutAssembly.assemble(try await retained(), base: base) else {
            throw FixtureError("the retained $layout is incomplete")
        }
        return layout
    }

    /// Waits until the layout as the watcher received it (the latest message on each `$layout`
    /// topic) is whole and satisfies `predicate`; returns it. Woken by each message, never by polling.
    @discardableResult
    public func currentLayout(timeout: Duration = HangGuard.standard, where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> [String: Any] {
        let base = base
        let prefix = "\(base)/$layout"
        let found = try await watcher.inbox.wait(timeout: timeout, for: "a $layout that satisfies the condition") { messages -> UncheckedBox? in
            var latest: [String: String] = [:]
            for message in messages where message.topic.string.hasPrefix(prefix) && message.retain {
                latest[message.topic.string] = message.payloadString
            }
            guard let layout = LayoutAssembly.assemble(latest, base: base), predicate(layout) else { return nil }
            return UncheckedBox(layout)
        }
        return found.value
    }
}

extension GatewayFixture {
    /// Waits until the layout the watcher received, written as JSON, contains `text`.
    @discardableResult
    public func currentLayout(containing text: String, timeout: Duration = HangGuard.standard) async throws -> [String: Any] {
        try await currentLayout(timeout: timeout) { LayoutAssembly.text(of: $0).contains(text) }
    }
}

extension LayoutAssembly {
    /// The layout as JSON text, keys sorted (what a test searches for names in).
    public static func text(of layout: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: layout, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Hands a JSON object (not Sendable by type, but never shared mutably) out of a wait.
public struct UncheckedBox: @unchecked Sendable {
    public let value: [String: Any]
    init(_ value: [String: Any]) { self.value = value }
}

import Foundation
import HomeModel
import MQTT
import Wire

/// `<accessory>/$last-seen` (retained, ISO 8601, UTC): when the accessory was last heard from,
/// published at once the first time and then at most once per
/// ``Configuration/lastSeenInterval`` (``LastSeen``). At a restart the broker's retained copies
/// are kept for the accessories not heard from yet.
extension Gateway {
    /// `id` was heard from now (an event, an answer, a description, reachability regained).
    func heard(from id: AccessoryID) {
        guard lastSeen.heard(id, at: Date(), now: .now) else { return }
        // Before the first synchronisation, the synchronisation publishes it with the tree's
        // other retained topics: published now as well, it can reach the broker after the
        // subscription's retained messages were sent, and be published a second time by the
        // synchronisation, milliseconds later (seen under load in CI).
        guard retained.hasSynchronised else { return }
        publishLastSeen(of: id)
    }

    /// Publishes what `id`'s `$last-seen` says now.
    private func publishLastSeen(of id: AccessoryID) {
        guard let date = lastSeen.published(id), let topic = tree.topic(of: id, .lastSeen) else { return }
        if policy.isDisabled(id) { withhold(topic, LastSeen.payload(date)) } else { assertRetained(topic, LastSeen.payload(date)) }
    }

    /// Publishes the `$last-seen` of the accessories heard from since their last one, once
    /// their interval has passed; looks six times per interval.
    func publishLastSeenWhenDue() async throws {
        let tick = max(lastSeen.interval / 6, .milliseconds(100))
        while true {
            try await Task.sleep(for: tick)
            for id in lastSeen.due(now: .now) { publishLastSeen(of: id) }
        }
    }

    /// A retained `$last-seen` the broker held when the gateway connected.
    func brokerHadLastSeen(_ message: Message) {
        guard message.retain, message.topic.string.hasSuffix("/" + TopicGrammar.Attribute.lastSeen.rawValue), !message.payload.isEmpty else { return }
        brokerLastSeen[message.topic.string] = message.payload
    }

    /// At the end of a synchronisation: the broker's `$last-seen` for each accessory not heard
    /// from yet, so that a restart keeps what was known.
    func rememberLastSeenFromBroker() {
        defer { brokerLastSeen = [:] }
        guard !brokerLastSeen.isEmpty else { return }
        for accessory in tree.homes.flatMap(\.accessories) where lastSeen.published(accessory.id) == nil {
            guard let topic = tree.topic(of: accessory.id, .lastSeen), let payload = brokerLastSeen[topic], let date = LastSeen.date(fromPayload: payload) else { continue }
            lastSeen.remember(accessory.id, at: date)
        }
    }
}

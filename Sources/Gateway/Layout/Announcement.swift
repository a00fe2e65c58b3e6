import Wire

/// One `$events` message: its `event` (the kind) and its fields. Made by ``LayoutChanges`` and
/// `HomeTree+Events.swift`, among others; the engine sends it (``Gateway/announce(_:)``).
struct Announcement {
    let kind: String
    let fields: [String: JSON]

    init(_ kind: String, _ fields: [String: JSON]) {
        self.kind = kind
        self.fields = fields
    }
}

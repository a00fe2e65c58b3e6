/// The calls and messages waiting for the broker's acknowledgements, by message id.
///
/// libmosquitto's message ids are 16 bits and wrap without checking which are still in use: with
/// more than 65,535 messages handed over and not yet acknowledged (a start at 10,000 accessories
/// queues 130,000 in one turn of the loop), two share an id. libmosquitto sends them, and the broker
/// acknowledges them, in the order they were handed over, so each id keeps its slots first come,
/// first served.
struct AcknowledgementTable {
    private enum Entry {
        case one(Client.AcknowledgementSlot)
        case several([Client.AcknowledgementSlot])

        var slots: [Client.AcknowledgementSlot] {
            switch self {
            case .one(let slot): [slot]
            case .several(let slots): slots
            }
        }

        init?(_ slots: [Client.AcknowledgementSlot]) {
            switch slots.count {
            case 0: return nil
            case 1: self = .one(slots[0])
            default: self = .several(slots)
            }
        }
    }

    private var entries: [Int32: Entry] = [:]

    var isEmpty: Bool { entries.isEmpty }

    /// A slot for a message just handed over (after any earlier ones with the same id).
    mutating func append(_ slot: Client.AcknowledgementSlot, for mid: Int32) {
        switch entries[mid] {
        case nil: entries[mid] = .one(slot)
        case .one(let first): entries[mid] = .several([first, slot])
        case .several(let slots): entries[mid] = .several(slots + [slot])
        }
    }

    /// The oldest slot of `mid`, taken out: the one its acknowledgement belongs to.
    mutating func removeFirst(for mid: Int32) -> Client.AcknowledgementSlot? {
        let first: Client.AcknowledgementSlot
        switch entries.removeValue(forKey: mid) {
        case nil:
            return nil
        case .one(let slot): // the usual case: no array made
            first = slot
        case .several(var slots):
            first = slots.removeFirst()
            entries[mid] = Entry(slots)
        }
        if entries.isEmpty, entries.capacity > 4096 { entries = [:] } // a burst's storage is let go
        return first
    }

    /// Replaces the first slot of `mid` that `change` changes (returns non-nil for); returns the
    /// slot as it was.
    @discardableResult
    mutating func replaceFirst(for mid: Int32, _ change: (Client.AcknowledgementSlot) -> Client.AcknowledgementSlot?) -> Client.AcknowledgementSlot? {
        guard let entry = entries[mid] else { return nil }
        var slots = entry.slots
        for index in slots.indices {
            if let replacement = change(slots[index]) {
                let old = slots[index]
                slots[index] = replacement
                entries[mid] = Entry(slots)
                return old
            }
        }
        return nil
    }

    /// Replaces the first slot anywhere that `change` changes; returns the slot as it was.
    mutating func replaceFirst(_ change: (Client.AcknowledgementSlot) -> Client.AcknowledgementSlot?) -> Client.AcknowledgementSlot? {
        for mid in entries.keys {
            if let old = replaceFirst(for: mid, change) { return old }
        }
        return nil
    }

    /// Whether any slot satisfies `predicate`.
    func contains(where predicate: (Client.AcknowledgementSlot) -> Bool) -> Bool {
        entries.values.contains { $0.slots.contains(where: predicate) }
    }

    /// Removes the slots `shouldRemove` says so of, in no particular order.
    mutating func removeAll(where shouldRemove: (Client.AcknowledgementSlot) -> Bool) {
        for (mid, entry) in entries {
            entries[mid] = Entry(entry.slots.filter { !shouldRemove($0) })
        }
    }

    /// Every slot, emptying the table.
    mutating func takeAll() -> [Client.AcknowledgementSlot] {
        defer { entries = [:] }
        return entries.values.flatMap(\.slots)
    }
}

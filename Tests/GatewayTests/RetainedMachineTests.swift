@testable import Gateway
import HomeStore
import Testing

/// The retained-topics machine on its own: the synchronisation after a connect, retained
/// commands run once, the ledger, changes between synchronisations and `$layout`, step by step
/// and without a broker.
@Suite("RetainedMachine")
struct RetainedMachineTests {
    typealias Machine = RetainedMachine
    static let base = "hg"
    static let on = "hg/home/room/lamp/lightbulb/on"
    static let brightness = "hg/home/room/lamp/lightbulb/brightness"
    static let reachable = "hg/home/room/lamp/$reachable"

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A machine that has been through its first synchronisation with `tree` on an empty broker.
    static func synchronised(_ tree: [(String, String)], ledger: Set<String> = []) -> Machine {
        var machine = Machine(base: base, ledger: ledger)
        _ = machine.connected(marker: "m1")
        _ = machine.markerReturned("m1")
        for (topic, payload) in tree { _ = machine.offer(topic, bytes(payload)) }
        _ = machine.endSynchronisation()
        return machine
    }

    /// Runs a whole synchronisation: the broker's retained messages, the marker, the tree's
    /// offers. Returns the topics published (in offer order) and the actions of its end.
    static func synchronise(_ machine: inout Machine, broker: [(String, String)], tree: [(String, String)],
                            marker: String = "m") -> (published: [String], actions: [Machine.Action]) {
        let sent = machine.connected(marker: marker)
        #expect(sent == [.sendMarker(topic: "hg/$sync/\(marker)")])
        for (topic, payload) in broker {
            let arrival = machine.retainedArrived(topic: topic, payload: bytes(payload), isCommand: false)
            #expect(arrival == .recorded)
        }
        let ended = machine.markerReturned(marker)
        #expect(ended)
        let published = tree.filter { machine.offer($0.0, bytes($0.1)) }.map(\.0)
        return (published, machine.endSynchronisation())
    }

    static func cleared(_ actions: [Machine.Action]) -> Set<String> {
        Set(actions.compactMap { if case .clear(let topic) = $0 { topic } else { nil } })
    }

    static func recorded(_ actions: [Machine.Action]) -> Set<String> {
        actions.reduce(into: []) { if case .record(let topics) = $1 { $0.formUnion(topics) } }
    }

    static func forgotten(_ actions: [Machine.Action]) -> Set<String> {
        actions.reduce(into: []) { if case .forget(let topics) = $1 { $0.formUnion(topics) } }
    }

    @Test("the first synchronisation on an empty broker publishes everything, records it, then releases what waited for it")
    func firstSynchronisation() {
        var machine = Machine(base: Self.base, ledger: [])
        var held = machine.storeAfterFirstSynchronisation("applied", { _ throws(StoreError) in })
        #expect(held.isEmpty, "held until the first synchronisation")
        held = machine.storeAfterFirstSynchronisation("second", { _ throws(StoreError) in })
        #expect(held.isEmpty)
        #expect(!machine.hasSynchronised)
        let (published, actions) = Self.synchronise(&machine, broker: [], tree: [(Self.on, "true"), (Self.brightness, "50")])
        #expect(published == [Self.on, Self.brightness])
        #expect(Self.cleared(actions).isEmpty && Self.forgotten(actions).isEmpty)
        #expect(Self.recorded(actions) == [Self.on, Self.brightness])
        let tail = actions.filter { if case .record = $0 { false } else { true } }
        guard tail.count == 4, case .store(let first) = tail[1], case .store(let second) = tail[2] else {
            Issue.record("expected the summary, two stores, then the first-synchronisation mark: \(tail)")
            return
        }
        #expect(tail[0] == .synchronised(asserted: 2, published: 2, cleared: 0))
        #expect(first.what == "applied" && second.what == "second" && tail[3] == .firstSynchronisationDone)
        #expect(machine.hasSynchronised && !machine.isSynchronising && machine.assertedCount == 2)
        let later = machine.storeAfterFirstSynchronisation("later", { _ throws(StoreError) in })
        #expect(later.count == 1 && { if case .store(let write) = later[0] { write.what == "later" } else { false } }(), "at once after it")
    }

    @Test("a later synchronisation publishes only what the broker lacks or holds differently, and has no first-synchronisation actions")
    func laterSynchronisation() {
        var machine = Self.synchronised([(Self.on, "true"), (Self.brightness, "50"), (Self.reachable, "true")])
        let (published, actions) = Self.synchronise(&machine, broker: [(Self.on, "true"), (Self.brightness, "40")],
                                                    tree: [(Self.on, "true"), (Self.brightness, "50"), (Self.reachable, "true")])
        #expect(published == [Self.brightness, Self.reachable], "same payload: left alone; different or missing: published")
        #expect(actions == [.synchronised(asserted: 3, published: 2, cleared: 0)], "nothing stale, the ledger already has them all")
    }

    @Test("stale topics are cleared: seen under the base, or in the ledger under the base or outside it; $state and foreign topics are left")
    func staleTopics() {
        let discovery = "homeassistant/device/old/config"
        let foreign = "elsewhere/topic"
        var machine = Machine(base: Self.base, ledger: ["hg/home/old-room/lamp/lightbulb/on", discovery])
        let (_, actions) = Self.synchronise(&machine, broker: [("hg/stray", "x"), ("hg/$state", "online"), (Self.on, "true"), (foreign, "y")],
                                            tree: [(Self.on, "true")])
        #expect(Self.cleared(actions) == ["hg/stray", "hg/home/old-room/lamp/lightbulb/on", discovery])
        #expect(Self.forgotten(actions) == ["hg/home/old-room/lamp/lightbulb/on", discovery], "only what the ledger had")
        #expect(Self.recorded(actions) == [Self.on])
        #expect(actions.contains(.synchronised(asserted: 1, published: 0, cleared: 3)))
        #expect(machine.ledger == [Self.on])
    }

    @Test("$state in the ledger is never cleared and stays in the ledger")
    func stateInLedger() {
        var machine = Machine(base: Self.base, ledger: ["hg/$state"])
        let (_, actions) = Self.synchronise(&machine, broker: [], tree: [(Self.on, "true")])
        #expect(Self.cleared(actions).isEmpty)
        #expect(machine.ledger == ["hg/$state", Self.on])
    }

    @Test("retained messages are recorded before the connection is reported; an empty one removes the record")
    func recordedBeforeConnect() {
        var machine = Self.synchronised([(Self.on, "true"), (Self.brightness, "50")])
        var arrival = machine.retainedArrived(topic: Self.on, payload: Self.bytes("true"), isCommand: false)
        #expect(arrival == .recorded)
        arrival = machine.retainedArrived(topic: "hg/stray", payload: Self.bytes("x"), isCommand: false)
        #expect(arrival == .recorded)
        arrival = machine.retainedArrived(topic: "hg/stray", payload: [], isCommand: false)
        #expect(arrival == .recorded)
        _ = machine.connected(marker: "m2")
        var ended = machine.markerReturned("another")
        #expect(!ended, "not the marker awaited")
        #expect(machine.isSynchronising)
        ended = machine.markerReturned("m2")
        #expect(ended)
        var publish = machine.offer(Self.on, Self.bytes("true"))
        #expect(!publish, "the broker holds it (seen before the connect)")
        publish = machine.offer(Self.brightness, Self.bytes("50"))
        #expect(publish, "the broker lost it")
        #expect(Self.cleared(machine.endSynchronisation()).isEmpty, "the stray one was cleared by someone")
        ended = machine.markerReturned("m2")
        #expect(!ended, "a marker comes back once")
        publish = machine.offer(Self.on, Self.bytes("false"))
        #expect(!publish, "nothing is offered outside a synchronisation")
    }

    @Test("a retained command runs once: cleared and run; its own clearing and, while synchronising, a second copy are skipped")
    func retainedCommands() {
        let set = "hg/home/room/lamp/lightbulb/on/set"
        var machine = Self.synchronised([(Self.on, "true")])
        var arrival = machine.retainedArrived(topic: set, payload: Self.bytes("true"), isCommand: true)
        #expect(arrival == .clearThenRun)
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("true"), isCommand: true)
        #expect(arrival == .clearThenRun,
                "outside a synchronisation every retained command runs")
        arrival = machine.retainedArrived(topic: set, payload: [], isCommand: true)
        #expect(arrival == .skip, "the gateway's own clearing")
        _ = machine.connected(marker: "m2")
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("false"), isCommand: true)
        #expect(arrival == .clearThenRun)
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("false"), isCommand: true)
        #expect(arrival == .skip, "a replay")
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("true"), isCommand: true)
        #expect(arrival == .clearThenRun, "another payload")
        machine.connectionOpened()
        _ = machine.connected(marker: "m3")
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("false"), isCommand: true)
        #expect(arrival == .clearThenRun, "a new connection forgets")
        let ended = machine.markerReturned("m3")
        #expect(ended)
        _ = machine.endSynchronisation()
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("true"), isCommand: true)
        #expect(arrival == .clearThenRun)
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("true"), isCommand: true)
        #expect(arrival == .clearThenRun, "after the synchronisation")
    }

    @Test("a second copy that arrives after the connection but before the synchronisation began (the engine was still subscribing) is skipped too")
    func replayBeforeTheMarker() {
        let set = "hg/home/room/lamp/lightbulb/on/set"
        var machine = Self.synchronised([(Self.on, "true")])
        machine.connectionOpened()
        var arrival = machine.retainedArrived(topic: set, payload: Self.bytes("false"), isCommand: true)
        #expect(arrival == .clearThenRun, "the kept session's copy")
        _ = machine.connected(marker: "m2")
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("false"), isCommand: true)
        #expect(arrival == .skip, "the retained copy the subscription brings")
        let ended = machine.markerReturned("m2")
        #expect(ended)
        _ = machine.endSynchronisation()
        arrival = machine.retainedArrived(topic: set, payload: Self.bytes("false"), isCommand: true)
        #expect(arrival == .clearThenRun, "after the synchronisation every retained command runs")
    }

    @Test("between synchronisations a payload is published only when it changed; the ledger records a topic once")
    func assertBetweenSynchronisations() {
        var machine = Self.synchronised([(Self.on, "true")], ledger: ["hg/home/room/lamp/lightbulb/hue"])
        var actions = machine.assert(Self.on, Self.bytes("true"))
        #expect(actions.isEmpty, "unchanged")
        actions = machine.assert(Self.on, Self.bytes("false"))
        #expect(actions == [.publish(Self.on, Self.bytes("false"))], "already in the ledger")
        actions = machine.assert(Self.brightness, Self.bytes("5"))
        #expect(actions == [.publish(Self.brightness, Self.bytes("5")), .record([Self.brightness])])
        actions = machine.assert(Self.brightness, Self.bytes("6"))
        #expect(actions == [.publish(Self.brightness, Self.bytes("6"))])
        actions = machine.withdraw(Self.brightness)
        #expect(actions == [.clear(Self.brightness), .forget([Self.brightness])])
        actions = machine.withdraw(Self.brightness)
        #expect(actions.isEmpty, "no longer asserted")
        actions = machine.assert(Self.brightness, Self.bytes("6"))
        #expect(actions == [.publish(Self.brightness, Self.bytes("6")), .record([Self.brightness])])
    }

    @Test("a topic the ledger kept from before is not recorded again when asserted")
    func leftoverLedgerTopic() {
        let hue = "hg/home/room/lamp/lightbulb/hue"
        var machine = Machine(base: Self.base, ledger: [hue])
        let actions = machine.assert(hue, Self.bytes("10"))
        #expect(actions == [.publish(hue, Self.bytes("10"))])
        #expect(machine.ledger == [hue])
    }

    @Test("after a layout change what changed is published first, in the tree's order, then old topics are cleared; the ledger follows")
    func reassert() {
        let renamed = "hg/home/room/lamp-2/lightbulb/on"
        let reachable = "hg/home/room/lamp-2/$reachable"
        let config = "homeassistant/device/homegate_lamp/config"
        var machine = Self.synchronised([(Self.on, "true"), (Self.brightness, "50")])
        let actions = machine.reassert([(reachable, Self.bytes("true")), (renamed, Self.bytes("true")), (Self.brightness, Self.bytes("50")),
                                        (config, Self.bytes("{}"))])
        #expect(actions == [.publish(reachable, Self.bytes("true")), .publish(renamed, Self.bytes("true")), .publish(config, Self.bytes("{}")),
                            .clear(Self.on), .record([reachable, renamed, config]), .forget([Self.on])])
        #expect(machine.ledger == [reachable, renamed, Self.brightness, config] && machine.assertedCount == 4)
        let changes = machine.reassert([(reachable, Self.bytes("true")), (renamed, Self.bytes("true")), (Self.brightness, Self.bytes("50")),
                                        (config, Self.bytes("{}"))])
        #expect(changes.isEmpty, "nothing changed")
    }

    @Test("$layout: asserted again after a change unless a synchronisation is under way; parts no longer there are cleared after the rest")
    func layout() {
        let index = "hg/$layout"
        let room = "hg/$layout/home/room"
        let part2 = "hg/$layout/home/room/2"
        let layout = [(index, "{}"), (room, "[1]"), (part2, "[2]")]
        var machine = Self.synchronised(layout)
        var due = machine.takeLayoutChange()
        #expect(!due, "nothing changed")
        machine.layoutChanged()
        _ = machine.connected(marker: "m2")
        due = machine.takeLayoutChange()
        #expect(!due, "the synchronisation asserts it")
        let ended = machine.markerReturned("m2")
        for (topic, payload) in layout { _ = machine.offer(topic, Self.bytes(payload)) }
        #expect(ended && Self.cleared(machine.endSynchronisation()).isEmpty)
        due = machine.takeLayoutChange()
        #expect(!due, "the synchronisation did")
        machine.layoutChanged()
        due = machine.takeLayoutChange()
        #expect(due)
        due = machine.takeLayoutChange()
        #expect(!due, "taken once")
        let actions = machine.assertLayout([(index, Self.bytes("{}")), (room, Self.bytes("[1, 2]"))])
        #expect(actions == [.publish(room, Self.bytes("[1, 2]")), .clear(part2), .forget([part2])], "what names a part is published before the part is cleared")
    }
}

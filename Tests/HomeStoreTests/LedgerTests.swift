import Foundation
import Testing
@testable import HomeStore

@Suite("Retained-topic ledger and settings")
struct LedgerTests {
    @Test("recording is idempotent, forgetting removes only what it names, and both survive reopening")
    func ledger() throws {
        try withTemporaryDirectory { directory in
            do {
                let store = try HomeStore(directory: directory)
                #expect(try store.retainedTopics() == [])
                try store.recordRetained(["homegate/a", "homegate/b"])
                try store.recordRetained(["homegate/b", "homegate/c", "homegate/c"])
                #expect(try store.retainedTopics() == ["homegate/a", "homegate/b", "homegate/c"])
                try store.forgetRetained(["homegate/b", "homegate/never-recorded"])
                try store.recordRetained([String]())
                try store.forgetRetained(Set<String>())
                #expect(try store.retainedTopics() == ["homegate/a", "homegate/c"])
            }
            let store = try HomeStore(directory: directory)
            #expect(try store.retainedTopics() == ["homegate/a", "homegate/c"])
        }
    }

    @Test("many topics in one call")
    func many() throws {
        let store = try HomeStore.inMemory()
        let topics = Set((0..<5_000).map { "homegate/home/room/accessory-\($0)/lightbulb/on" })
        try store.recordRetained(topics)
        #expect(try store.retainedTopics() == topics)
        try store.forgetRetained(topics.filter { $0.hasSuffix("7/lightbulb/on") })
        #expect(try store.retainedTopics().count == 4_500)
    }

    @Test("the last applied configuration reads back as saved, the latest one winning")
    func lastAppliedConfiguration() throws {
        let store = try HomeStore.inMemory()
        #expect(try store.lastAppliedConfiguration() == nil)
        let first = Data("homes:\n  - name: Main\n".utf8)
        try store.saveLastAppliedConfiguration(first)
        #expect(try store.lastAppliedConfiguration() == first)
        let binary = Data([0, 255, 1, 254, 0])
        try store.saveLastAppliedConfiguration(binary)
        #expect(try store.lastAppliedConfiguration() == binary)
        try store.saveLastAppliedConfiguration(Data())
        #expect(try store.lastAppliedConfiguration() == Data())
        #expect(try store.hasLayout() == false, "the configuration is not a layout")
    }
}

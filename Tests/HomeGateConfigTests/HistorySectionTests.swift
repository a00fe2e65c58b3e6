import Testing
@testable import HomeGateConfig

/// The `history:` section: on by default for 7 days and 10,000 points per characteristic, off
/// with `enabled: false`, and the mistakes it names.
@Suite("history section")
struct HistorySectionTests {
    func problem(_ text: String) -> String {
        do {
            _ = try ConfigFile.parse(text, file: "/etc/homegate/homegate.yml")
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func defaultsWithoutTheSection() throws {
        let history = try ConfigFile.parse("log_level: info\n", file: "/etc/homegate/homegate.yml").history
        #expect(history == ConfigFile.History())
        #expect(history.enabled && history.days == 7 && history.maxPoints == 10_000)
    }

    @Test func readsEveryKey() throws {
        let history = try ConfigFile.parse("history:\n  days: 30\n  max_points: 500\n", file: "/etc/homegate/homegate.yml").history
        #expect(history.enabled && history.days == 30 && history.maxPoints == 500)
        let off = try ConfigFile.parse("history:\n  enabled: false\n", file: "/etc/homegate/homegate.yml").history
        #expect(!off.enabled)
    }

    @Test func namesEachMistake() {
        #expect(problem("history:\n  days: 0\n")
            == "/etc/homegate/homegate.yml:2: history.days: must be at least 1 day; to keep no history, write enabled: false")
        #expect(problem("history:\n  days: 4000\n") == "/etc/homegate/homegate.yml:2: history.days: must be within 1...3650 days, got 4000")
        #expect(problem("history:\n  days: a week\n") == "/etc/homegate/homegate.yml:2: history.days: expected a whole number of days, got \"a week\"")
        #expect(problem("history:\n  max_points: 5\n")
            == "/etc/homegate/homegate.yml:2: history.max_points: must be within 10...1000000 points, got 5")
        #expect(problem("history:\n  enabled: maybe\n") == "/etc/homegate/homegate.yml:2: history.enabled: expected true or false, got \"maybe\"")
        #expect(problem("history:\n  keep: 7\n").hasPrefix("/etc/homegate/homegate.yml:2: history.keep: unknown key"))
        #expect(problem("history: 7\n").hasPrefix("/etc/homegate/homegate.yml:1: history:"))
    }
}

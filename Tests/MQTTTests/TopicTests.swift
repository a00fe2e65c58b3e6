import Testing
@testable import MQTT

@Suite("Topic names and filters")
struct TopicTests {
    @Test("valid topic names", arguments: [
        "a", "homegate/$state", "homegate/demo-home/living-room/floor-lamp/lightbulb/on/set",
        "/leading/slash", "trailing/", "a//b", "Küche/Temperatur", "emoji/💡", "$SYS/broker/uptime",
        String(repeating: "x", count: 65_535), Array(repeating: "a", count: 201).joined(separator: "/"),
    ])
    func validNames(_ text: String) throws {
        #expect(try TopicName(text).string == text)
    }

    @Test("invalid topic names say why", arguments: [
        ("", "a topic must not be empty"),
        ("a/+/b", "'+' is a wildcard"),
        ("a/#", "'#' is a wildcard"),
        ("sensor+1", "'+' is a wildcard"),
        ("a\u{0}b", "NUL"),
        ("a\nb", "control character U+000A"),
        ("a\u{7F}", "control character U+007F"),
        ("a\u{FFFF}", "non-character U+FFFF"),
        (String(repeating: "x", count: 65_536), "65536 bytes"),
        (String(repeating: "é", count: 32_768), "65536 bytes"),
        (Array(repeating: "a", count: 202).joined(separator: "/"), "202 levels"),
    ])
    func invalidNames(_ text: String, reason: String) {
        #expect {
            try TopicName(text)
        } throws: { error in
            (error as? TopicError)?.description.contains(reason) == true
        }
    }

    @Test("valid filters", arguments: ["#", "+", "a/#", "a/+/c", "+/+/+", "homegate/+/+/$reachable", "/#", "a/b"])
    func validFilters(_ text: String) throws {
        #expect(try TopicFilter(text).string == text)
    }

    @Test("invalid filters say why", arguments: [
        ("a/#/b", "'#' must be the last level"),
        ("a#", "'#' must be the last level"),
        ("a/b#", "'#' must be the last level"),
        ("a/+b", "'+' must fill a whole level"),
        ("sensor+", "'+' must fill a whole level"),
        ("", "must not be empty"),
        ("a\u{0}", "NUL"),
    ])
    func invalidFilters(_ text: String, reason: String) {
        #expect {
            try TopicFilter(text)
        } throws: { error in
            (error as? TopicError)?.description.contains(reason) == true
        }
    }

    @Test("error messages quote the topic with control characters escaped")
    func errorMessageEscapes() {
        do {
            _ = try TopicName("bad\ntopic")
            Issue.record("accepted a newline")
        } catch {
            #expect(error.description == "topic \"bad\\ntopic\" is not valid: it contains the control character U+000A, which brokers reject")
        }
    }

    @Test("filters match topics as a broker does", arguments: [
        ("a/+/c", "a/b/c", true), ("a/+/c", "a/b/d", false), ("a/#", "a", true), ("a/#", "a/b/c", true),
        ("#", "$state", false), ("+/x", "$SYS/x", false), ("homegate/$state", "homegate/$state", true),
        ("a/b", "a/b/c", false), ("a/+", "a", false), ("+/+", "/x", true),
    ])
    func matching(_ filter: String, _ topic: String, _ expected: Bool) throws {
        #expect(try TopicFilter(filter).matches(TopicName(topic)) == expected)
    }
}

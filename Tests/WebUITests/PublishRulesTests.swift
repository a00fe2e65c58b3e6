import HomeGateConfig
import MQTT
import Testing
@testable import WebUI

/// Where the page may publish for each role: the guest's topics are the broker ACL's.
@Suite struct PublishRulesTests {
    let rules = PublishRules(baseTopic: "homegate")

    func problem(_ topic: String, _ role: UsersFile.Role) throws -> String? {
        rules.problem(publishing: try TopicName(topic), as: role)
    }

    @Test func aGuestSetsGetsIdentifiesAndExecutes() throws {
        for topic in ["homegate/demo-home/living-room/floor-lamp/lightbulb/on/set",
                      "homegate/demo-home/living-room/floor-lamp/lightbulb/brightness/get",
                      "homegate/demo-home/$zones/upstairs/lightbulb/on/set",
                      "homegate/$request/accessory/identify", "homegate/$request/action-set/execute",
                      "homegate/demo-home/$action-sets/movie-night/execute"] {
            #expect(try problem(topic, .guest) == nil, "\(topic)")
        }
    }

    @Test func aGuestCannotManage() throws {
        for topic in ["homegate/$request/room/add", "homegate/$request/accessory/pair",
                      "homegate/demo-home/living-room/floor-lamp/lightbulb/set",
                      "homegate/demo-home/living-room/floor-lamp/lightbulb/on"] {
            #expect(try problem(topic, .guest) != nil, "\(topic)")
        }
    }

    @Test func anAdminSendsCommandsButNeverValues() throws {
        #expect(try problem("homegate/$request/room/add", .admin) == nil)
        #expect(try problem("homegate/demo-home/living-room/floor-lamp/lightbulb/set", .admin) == nil)
        #expect(try problem("homegate/demo-home/living-room/floor-lamp/lightbulb/on", .admin) != nil)
        #expect(try problem("homegate/$layout", .admin) != nil)
        #expect(try problem("homegate/$request/room/add/more", .admin) != nil)
        #expect(try problem("other/thing/set", .admin) != nil)
        #expect(try problem("homegatex/a/set", .admin) != nil)
    }
}

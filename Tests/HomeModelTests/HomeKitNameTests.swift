import Testing
@testable import HomeModel

@Suite("HomeKit naming rules")
struct HomeKitNameTests {
    // MARK: Accepted

    @Test("accepted names keep their text", arguments: [
        "Kitchen", "Living Room", "Küche", "Café", "Cafe\u{301}", "Bob's Room", "Bob\u{2019}s Room", "Home 1", "1st Floor",
        "2", "a", "Gästezimmer", "Salle à manger", "Гостиная", "客厅", "거실", "O'Brien's Den", "Room 101", "ÉTAGE",
        "Ünterm Dach", "Room  With  Double  Spaces", "Rock 'n' Roll", "Phòng khách", "Pho\u{300}ng kha\u{301}ch", "台所", "מטבח",
        "غرفة المعيشة", "ห้องนอน", "रसोई", "சமையலறை", "বসার ঘর", "Ǆemal", "٣ غرف",
    ])
    func accepted(_ text: String) throws {
        let name = try HomeKitName(text)
        #expect(name.text == text)
        #expect(name.description == text)
    }

    @Test("exactly 64 characters are accepted", arguments: [
        String(repeating: "a", count: 64),
        String(repeating: "ü", count: 64),
        "A" + String(repeating: " b", count: 31) + "c",
    ])
    func sixtyFourCharacters(_ text: String) throws {
        #expect(text.count == 64)
        #expect(try HomeKitName(text).text == text)
    }

    @Test("trailing spaces are dropped", arguments: [
        ("Kitchen ", "Kitchen"),
        ("Living Room   ", "Living Room"),
        ("Bob's ", "Bob's"),
        (String(repeating: "a", count: 64) + "    ", String(repeating: "a", count: 64)),
    ])
    func trailingSpacesDropped(_ text: String, expected: String) throws {
        #expect(try HomeKitName(text).text == expected)
    }

    // MARK: Refused

    @Test("names must start with a letter or a digit", arguments: [
        (" Room", " "), ("'Room", "'"), ("\u{2019}Room", "\u{2019}"), ("-Room", "-"), ("#1", "#"), ("_Room", "_"),
        ("$Room", "$"), (".Room", "."), ("+Room", "+"), ("/Room", "/"), ("!Room", "!"), ("@Room", "@"), (",Room", ","),
    ])
    func badFirstCharacter(_ text: String, character: Character) {
        #expect(throws: NameError(.badFirstCharacter(character), name: text)) {
            try HomeKitName(text)
        }
    }

    @Test("only letters, digits, spaces and apostrophes", arguments: [
        ("Room+1", "+"), ("Room #1", "#"), ("Up/Down", "/"), ("Price$", "$"), ("Living-Room", "-"), ("Living_Room", "_"),
        ("Mr. Room", "."), ("Red, Green", ","), ("Wow!", "!"), ("me@home", "@"), ("Room\u{0}", "\u{0}"),
        ("Room\u{0}Two", "\u{0}"), ("Room\u{1}", "\u{1}"), ("Room\tTwo", "\t"), ("Room\nTwo", "\n"), ("Room\u{7F}", "\u{7F}"),
        ("Party 🎉", "🎉"), ("Lamp💡", "💡"), ("Flag 🇩🇪", "🇩🇪"), ("Room (1)", "("), ("A&B", "&"), ("50%", "%"),
        ("a:b", ":"), ("Room\"", "\""), ("x=y", "="), ("Room*", "*"),
    ])
    func badCharacter(_ text: String, character: Character) {
        #expect(throws: NameError(.badCharacter(character), name: text)) {
            try HomeKitName(text)
        }
    }

    @Test("emoji never pass, whatever scalar they start with", arguments: [
        "Room 1\u{FE0F}\u{20E3}", // keycap 1: starts with the digit 1
        "Room #\u{FE0F}\u{20E3}", // keycap #
        "Room 🏠", "🏠 Room", "Room ❤️", "Room 👍🏽", "Ro\u{200D}om", "Lamp\u{FE0F}", "Room \u{301}x", "a\u{20DD}",
    ])
    func emojiRefused(_ text: String) {
        #expect(throws: NameError.self) {
            try HomeKitName(text)
        }
    }

    @Test("65 characters are too many")
    func sixtyFiveCharacters() {
        let text = String(repeating: "a", count: 65)
        #expect(throws: NameError(.tooLong(65), name: text)) {
            try HomeKitName(text)
        }
    }

    @Test("empty names are refused", arguments: ["", " ", "    "])
    func empty(_ text: String) {
        #expect(throws: NameError(.empty, name: text)) {
            try HomeKitName(text)
        }
    }

    // MARK: Messages

    @Test("the messages say which rule is broken")
    func messages() {
        #expect(NameError(.empty, name: "").description == "a name must not be empty")
        #expect(message(" Room") == "\" Room\" must start with a letter or a digit, not \" \"")
        #expect(message("#1") == "\"#1\" must start with a letter or a digit, not \"#\"")
        #expect(message("Room+1") == "\"Room+1\" may contain only letters, digits, spaces and apostrophes, not \"+\"")
        #expect(message(String(repeating: "a", count: 65))
            == "\"\(String(repeating: "a", count: 40))…\" is 65 characters long; at most 64 are allowed")
        #expect(NameError.inUse("Kitchen", existing: "Kitchen").description == "\"Kitchen\" is already in use")
        #expect(message("Up/Down") == "\"Up/Down\" may contain only letters, digits, spaces and apostrophes, not \"/\"")
        // A long name that is in use under its own spelling: shortened, and still "already in use".
        let long = String(repeating: "b", count: 50)
        #expect(NameError.inUse(long, existing: long).description == "\"\(String(repeating: "b", count: 40))…\" is already in use")
        #expect(NameError.inUse("home1", existing: "Home 1").description
            == "\"home1\" is already in use as \"Home 1\" (names are compared ignoring case, spaces and apostrophes)")
    }

    @Test("a 1,000-character name is refused without printing it whole", arguments: [
        String(repeating: "a", count: 1_000),
        String(repeating: "a", count: 999) + "#",
        "#" + String(repeating: "a", count: 999),
        String(repeating: "a", count: 500) + "/" + String(repeating: "a", count: 499),
    ])
    func longNameMessage(_ text: String) {
        #expect(text.count == 1_000)
        let error = #expect(throws: NameError.self) {
            try HomeKitName(text)
        }
        guard let error else { return }
        #expect(error.code == "invalid-name")
        #expect(error.description.count < 200, "message is \(error.description.count) characters long")
        #expect(!error.description.contains(String(repeating: "a", count: 200)))
    }

    @Test("the refused name is kept as it was given")
    func refusedNameKept() {
        let error = #expect(throws: NameError.self) { try HomeKitName("Up/Down ") }
        #expect(error?.name == "Up/Down ")
    }

    // MARK: Codes

    @Test("codes: invalid-name for broken rules, name-in-use for clashes")
    func codes() {
        #expect(NameError(.empty, name: "").code == "invalid-name")
        #expect(NameError(.badFirstCharacter("-"), name: "-a").code == "invalid-name")
        #expect(NameError(.badCharacter("#"), name: "a#").code == "invalid-name")
        #expect(NameError(.tooLong(65), name: "").code == "invalid-name")
        #expect(NameError.inUse("home1", existing: "Home 1").code == "name-in-use")
        #expect(NameError.inUse("home1", existing: "Home 1").name == "home1")
    }

    // MARK: Comparison

    @Test("names that clash under HomeKit's comparison", arguments: [
        ("Home 1", "home1"), ("Bob's Room", "bobs room"), ("Living Room", "Livingroom"), ("Living Room", "LIVING ROOM"),
        ("Bob\u{2019}s Room", "Bob's Room"), ("Kitchen", "Kitchen"), ("Küche", "KÜCHE"), ("A B C", "abc"), ("Rock 'n' Roll", "rocknroll"),
    ])
    func clash(_ first: String, _ second: String) throws {
        let name = try HomeKitName(first)
        #expect(name.clashes(with: second))
        #expect(try HomeKitName(second).clashes(with: first))
        #expect(name.key == HomeKitName.key(second))
    }

    @Test("names that do not clash", arguments: [
        ("Küche", "Kuche"), ("Home 1", "Home 2"), ("Living Room", "Living Rooms"), ("Cafe", "Café"), ("Room1", "Room 11"),
    ])
    func noClash(_ first: String, _ second: String) throws {
        let name = try HomeKitName(first)
        #expect(!name.clashes(with: second))
        #expect(name.key != HomeKitName.key(second))
    }

    @Test("the comparison key is lower-cased, without spaces and apostrophes")
    func key() throws {
        #expect(try HomeKitName("Bob's Living Room").key == "bobslivingroom")
        #expect(HomeKitName.key("Bob\u{2019}s  ROOM") == "bobsroom")
        #expect(try HomeKitName("Küche 2").key == "küche2")
    }

    @Test("equal names are equal values and hash alike")
    func hashable() throws {
        let set: Set<HomeKitName> = [try HomeKitName("Kitchen"), try HomeKitName("Kitchen "), try HomeKitName("Hall")]
        #expect(set.count == 2)
    }

    private func message(_ text: String) -> String? {
        do {
            _ = try HomeKitName(text)
            return nil
        } catch {
            return error.description
        }
    }
}

import Testing
@testable import HomeModel

@Suite("Slugs: topic segments from names")
struct SlugTests {
    // MARK: make

    @Test("names become slugs", arguments: [
        ("Küche", "kuche"),
        ("Living Room", "living-room"),
        ("Bob's Lamp", "bob-s-lamp"),
        ("Bob\u{2019}s Lamp", "bob-s-lamp"),
        ("Floor Lamp", "floor-lamp"),
        ("Café", "cafe"),
        ("Cafe\u{301}", "cafe"),
        ("ÉTAGE 2", "etage-2"),
        ("Lamp 2", "lamp-2"),
        ("HomeGate", "homegate"),
        ("$SYS", "sys"),
        ("$SYS/broker", "sys-broker"),
        ("a+b#c/d", "a-b-c-d"),
        ("  Living -- Room  ", "living-room"),
        ("--Living Room--", "living-room"),
        ("Living___Room", "living-room"),
        ("a . , ! @ b", "a-b"),
        ("Tab\tand\nnewline", "tab-and-newline"),
        ("Lamp\u{0}2", "lamp-2"),
        ("Lamp 💡 One", "lamp-one"),
        ("💡Lamp💡", "lamp"),
        ("Гостиная", "гостиная"),
        ("СПАЛЬНЯ", "спальня"),
        ("客厅", "客厅"),
        ("客厅 灯", "客厅-灯"),
        ("거실", "거실"),
        ("Ελληνικά", "ελληνικα"),
        ("Straße", "straße"),
        ("Øresund", "øresund"),
        ("İstanbul", "istanbul"),
        ("٣ Rooms", "٣-rooms"),
        ("ROOM", "room"),
    ])
    func make(_ name: String, expected: String) {
        #expect(Slug.make(name, fallback: "fallback") == expected)
    }

    @Test("names with nothing usable give the fallback", arguments: [
        "", "+", "#", "/", "$", "\u{0}", "💡", "🔥💡🎉", "   ", "---", "+/#", "$$$", "\u{0}\u{0}", "'", "’", "!@#$%^&*()",
        "\u{301}", "\u{20E3}",
    ])
    func fallback(_ name: String) {
        #expect(Slug.make(name, fallback: "accessory") == "accessory")
    }

    @Test("names that differ only by case give the same slug")
    func caseOnly() {
        #expect(Slug.make("Floor Lamp", fallback: "x") == Slug.make("FLOOR LAMP", fallback: "x"))
        #expect(Slug.make("floor lamp", fallback: "x") == Slug.make("Floor Lamp", fallback: "x"))
        #expect(Slug.make("KÜCHE", fallback: "x") == Slug.make("küche", fallback: "x"))
    }

    @Test("names that differ only by apostrophes collide canonically")
    func apostrophesOnly() {
        let withApostrophe = Slug.make("Bob's Lamp", fallback: "x")
        let without = Slug.make("Bobs Lamp", fallback: "x")
        #expect(withApostrophe == "bob-s-lamp")
        #expect(without == "bobs-lamp")
        #expect(Slug.canonical(withApostrophe) == Slug.canonical(without))
        let segments = Slug.assign([(id: "b", slug: without), (id: "a", slug: withApostrophe)])
        #expect(segments == ["a": "bob-s-lamp", "b": "bobs-lamp-2"])
    }

    @Test("1,000-character names are capped at 64 characters", arguments: [
        String(repeating: "a", count: 1_000),
        String(repeating: "ab ", count: 334),
        String(repeating: "Lamp ", count: 200),
        String(repeating: "x", count: 63) + " " + String(repeating: "y", count: 936),
        String(repeating: "ü", count: 1_000),
        String(repeating: "a-", count: 500),
        String(repeating: "客", count: 1_000),
    ])
    func longNames(_ name: String) {
        let slug = Slug.make(name, fallback: "fallback")
        #expect(slug.count <= 64)
        #expect(slug.count >= 60)
        #expect(!slug.hasSuffix("-"))
        #expect(!slug.hasPrefix("-"))
        #expect(!slug.contains("--"))
    }

    @Test("a long name is cut at a word boundary when it can be")
    func cutAtWordBoundary() {
        // "kitchen-ceiling-light-over-the-island-next-to-the-window-leftmost" is 65 characters: cut
        // at 64 it would end in "leftmos".
        let slug = Slug.make("Kitchen Ceiling Light Over The Island Next To The Window Leftmost", fallback: "x")
        #expect(slug == "kitchen-ceiling-light-over-the-island-next-to-the-window")
    }

    @Test("a long name without a word boundary is cut at 64 characters")
    func cutWithoutBoundary() {
        #expect(Slug.make(String(repeating: "a", count: 1_000), fallback: "x") == String(repeating: "a", count: 64))
    }

    /// Hostile names, and a few thousand strings from a seeded generator over a hostile alphabet.
    static let hostileNames: [String] = {
        var names = [
            "+", "#", "/", "$", "\u{0}", "$SYS", "$SYS/#", "a+b#c/d", "+/#", "$share/group/topic", "a b", " $leading",
            "$$$$a", "\u{0}$a", "💡$", "a\u{0}b", "../..", "a//b", "#+", "\u{FEFF}$x", "\u{200B}", "a\u{200D}b",
            "Küche+Bad", "Wohn/Zimmer", String(repeating: "+#/$ ", count: 300), String(repeating: "$a", count: 500),
        ]
        let alphabet: [Character] = ["a", "Z", "ü", "1", "+", "#", "/", "$", "\u{0}", " ", "-", "_", "'", "’", "💡", ".", "客", "\n", "\u{301}"]
        var state: UInt64 = 42
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for _ in 0..<2_000 {
            let length = Int(next() % 24)
            names.append(String((0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }))
        }
        return names
    }()

    @Test("a slug never carries a topic's special characters")
    func neverHostile() {
        for name in Self.hostileNames {
            let slug = Slug.make(name, fallback: "fallback")
            #expect(!slug.isEmpty, "\(name.debugDescription)")
            for forbidden in ["+", "#", "/", "$", "\u{0}", " ", "\n", "\t"] {
                #expect(!slug.contains(forbidden), "\(name.debugDescription) -> \(slug.debugDescription)")
            }
            #expect(!slug.hasPrefix("$"), "\(name.debugDescription) -> \(slug.debugDescription)")
            #expect(!slug.hasPrefix("-"), "\(name.debugDescription) -> \(slug.debugDescription)")
            #expect(!slug.hasSuffix("-"), "\(name.debugDescription) -> \(slug.debugDescription)")
            #expect(!slug.contains("--"), "\(name.debugDescription) -> \(slug.debugDescription)")
            #expect(slug.count <= Slug.maximumLength, "\(name.debugDescription) -> \(slug.debugDescription)")
            #expect(slug == slug.lowercased(), "\(name.debugDescription) -> \(slug.debugDescription)")
        }
    }

    @Test("a slug is its own slug")
    func idempotent() {
        for name in Self.hostileNames + ["Küche", "Living Room", "Bob's Lamp", "客厅 灯"] {
            let slug = Slug.make(name, fallback: "fallback")
            #expect(Slug.make(slug, fallback: "other") == slug, "\(name.debugDescription)")
        }
    }

    // MARK: kebab

    @Test("camelCase to kebab-case", arguments: [
        ("garageDoorOpener", "garage-door-opener"), ("lightbulb", "lightbulb"), ("ipCamera", "ip-camera"), ("a", "a"), ("", ""),
    ])
    func kebab(_ text: String, expected: String) {
        #expect(Slug.kebab(text) == expected)
    }

    // MARK: canonical

    @Test("spellings of one name share a canonical key", arguments: [
        ["Living Room", "living-room", "livingroom", "LIVING_ROOM", "Living-Room", "living room", "LivingRoom", "living__room",
         " living room ", "Living\u{2019}Room", "living'room"],
        ["Living Room's", "living-room-s", "Living Rooms", "livingrooms", "LIVING_ROOM_S", "living-room\u{2019}s"],
        ["Küche", "kuche", "KÜCHE", "Kuche", "Ku\u{308}che", "kü-che", "K_Ü_C_H_E"],
        ["Floor Lamp 2", "floor-lamp-2", "floorlamp2", "FLOOR_LAMP_2"],
        ["Гостиная", "гостиная", "ГОСТИНАЯ"],
    ])
    func canonical(_ spellings: [String]) {
        let keys = Set(spellings.map { Slug.canonical($0) })
        #expect(keys.count == 1, "\(keys)")
        // The slug of the first spelling reaches the same key.
        #expect(keys.first == Slug.canonical(Slug.make(spellings[0], fallback: "x")))
    }

    @Test("canonical keys", arguments: [
        ("Living Room", "livingroom"), ("living-room", "livingroom"), ("LIVING_ROOM", "livingroom"), ("Living Room's", "livingrooms"),
        ("Küche", "kuche"), ("KÜCHE", "kuche"), ("", ""), ("---", ""), ("lamp-2", "lamp2"), ("ÉTAGE", "etage"),
    ])
    func canonicalKey(_ text: String, expected: String) {
        #expect(Slug.canonical(text) == expected)
        #expect(Slug.canonical(Substring(text)) == expected)
    }

    @Test("different names keep different keys", arguments: [
        ("Living Room", "Living Rooms"), ("Küche", "Kuchen"), ("lamp-2", "lamp-3"), ("lamp", "lamp2"),
    ])
    func canonicalDiffers(_ first: String, _ second: String) {
        #expect(Slug.canonical(first) != Slug.canonical(second))
    }

    // MARK: assign

    @Test("colliding slugs get -2, -3 in stable-id order, whatever the input order", arguments: [
        ["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"], ["c", "a", "b"],
    ])
    func assignOrder(_ order: [String]) {
        let items = order.map { (id: $0, slug: "lamp") }
        #expect(Slug.assign(items) == ["a": "lamp", "b": "lamp-2", "c": "lamp-3"])
    }

    @Test("stable ids decide, not names or positions")
    func assignByID() {
        let items: [(id: Int, slug: String)] = [(id: 30, slug: "lamp"), (id: 4, slug: "lamp"), (id: 200, slug: "lamp"), (id: 7, slug: "fan")]
        #expect(Slug.assign(items) == [4: "lamp", 30: "lamp-2", 200: "lamp-3", 7: "fan"])
    }

    @Test("a real slug lamp-2 is never stolen by a suffix", arguments: [
        [("a", "lamp"), ("b", "lamp"), ("c", "lamp-2")],
        [("c", "lamp-2"), ("b", "lamp"), ("a", "lamp")],
        [("b", "lamp"), ("c", "lamp-2"), ("a", "lamp")],
    ])
    func realSlugKept(_ pairs: [(String, String)]) {
        let segments = Slug.assign(pairs.map { (id: $0.0, slug: $0.1) })
        #expect(segments == ["a": "lamp", "b": "lamp-3", "c": "lamp-2"])
    }

    @Test("a real slug lamp2 (no dash) is never stolen either")
    func realSlugWithoutDashKept() {
        let segments = Slug.assign([(id: "a", slug: "lamp"), (id: "b", slug: "lamp"), (id: "z", slug: "lamp2")])
        #expect(segments == ["a": "lamp", "b": "lamp-3", "z": "lamp2"])
    }

    @Test("canonical collisions get suffixes")
    func canonicalCollisions() {
        #expect(Slug.assign([(id: "b", slug: "floorlamp"), (id: "a", slug: "floor-lamp")]) == ["a": "floor-lamp", "b": "floorlamp-2"])
        #expect(Slug.assign([(id: "a", slug: "floorlamp"), (id: "b", slug: "floor-lamp")]) == ["a": "floorlamp", "b": "floor-lamp-2"])
        let three = Slug.assign([(id: "c", slug: "floor-lamp"), (id: "b", slug: "floorlamp"), (id: "a", slug: "floor-lamp")])
        #expect(three == ["a": "floor-lamp", "b": "floorlamp-2", "c": "floor-lamp-3"])
    }

    @Test("no clash: every item keeps its slug")
    func noClash() {
        let segments = Slug.assign([(id: "1", slug: "lamp"), (id: "2", slug: "fan"), (id: "3", slug: "lamp-two")])
        #expect(segments == ["1": "lamp", "2": "fan", "3": "lamp-two"])
        #expect(Slug.assign([(id: "x", slug: "only")]) == ["x": "only"])
        #expect(Slug.assign([(id: String, slug: String)]()).isEmpty)
    }

    @Test("assigned segments are canonically unique and deterministic")
    func assignUnique() {
        var state: UInt64 = 7
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        let slugs = ["lamp", "lamp-2", "lamp2", "lamp-3", "floor-lamp", "floorlamp", "fan", "lamp-2-2"]
        let items = (0..<300).map { (id: $0, slug: slugs[next() % slugs.count]) }
        let segments = Slug.assign(items)
        #expect(segments.count == items.count)
        #expect(Set(segments.values.map { Slug.canonical($0) }).count == items.count)
        // Shuffled input, same answer.
        var shuffled = items
        for index in shuffled.indices.reversed() { shuffled.swapAt(index, next() % (index + 1)) }
        #expect(Slug.assign(shuffled) == segments)
        // Every item keeps its slug or gets it with a numeric suffix.
        for item in items {
            let segment = segments[item.id] ?? ""
            #expect(segment == item.slug || (segment.hasPrefix(item.slug + "-") && Int(segment.dropFirst(item.slug.count + 1)) != nil))
        }
    }
}

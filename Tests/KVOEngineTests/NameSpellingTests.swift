import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33, "one rule for names": names, prefixes and key paths made of the
/// same letters match alike however each letter is spelled (NFC, NFD, or
/// its marks in another order).
@Suite struct NameSpellingTests {
    /// A letter and its canonically equivalent spellings.
    private static let letters: [[String]] = [
        ["a"],
        ["e"],
        ["/"],
        ["\u{e9}", "e\u{301}"],
        ["\u{f6}", "o\u{308}"],
        ["\u{f1}", "n\u{303}"],
        // e with circumflex and dot below: composed, decomposed, and half-composed both ways.
        ["\u{1ec7}", "e\u{323}\u{302}", "\u{ea}\u{323}", "\u{1eb9}\u{302}", "e\u{302}\u{323}"],
        // KELVIN SIGN is canonically K.
        ["K", "\u{212a}"],
    ]

    private static func spell(_ word: [Int], _ random: inout SplitMix64) -> String {
        word.map { letters[$0].randomElement(using: &random)! }.joined()
    }

    private static func word(_ lengths: ClosedRange<Int>, from choices: [Int], _ random: inout SplitMix64) -> [Int] {
        (0..<Int.random(in: lengths, using: &random)).map { _ in choices.randomElement(using: &random)! }
    }

    private static func scalars(_ text: String) -> String {
        text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
    }

    @Test func aPrefixMatchesANameWhenItsLettersDoWhateverTheSpellings() {
        var random = SplitMix64(seed: 33)
        for _ in 0..<300 {
            let name = Self.word(1...6, from: Array(Self.letters.indices), &random)
            // Half the time a prefix of the name's letters, else any letters.
            let prefix = Bool.random(using: &random)
                ? Array(name.prefix(Int.random(in: 0...name.count, using: &random)))
                : Self.word(0...3, from: Array(Self.letters.indices), &random)
            let matches = name.starts(with: prefix)
            let (fixture, observer, writer) = EngineFixture.withTwoClients()
            let prefixText = Self.spell(prefix, &random)
            let nameText = Self.spell(name, &random)
            fixture.ok(["op": "observe", "prefix": .string(prefixText), "keyPath": "k"], from: observer)
            fixture.ok(["op": "set", "object": .string(nameText), "keyPath": "k", "value": 1], from: writer)
            let listed = fixture.ok(["op": "list", "prefix": .string(Self.spell(prefix, &random))], from: writer)
                .reply.member("objects")
            let context = "prefix \(Self.scalars(prefixText)), name \(Self.scalars(nameText))"
            #expect(fixture.take(from: observer).events.count == (matches ? 1 : 0), "\(context)")
            #expect(listed == (matches ? [.string(nameText)] : []), "\(context)")
        }
    }

    @Test func aDurableSetEndsTheLeasesAtOrUnderItsKeyPathWhateverTheSpellings() {
        var random = SplitMix64(seed: 34)
        let keyLetters = Self.letters.indices.filter { Self.letters[$0] != ["/"] }
        for _ in 0..<300 {
            let leased = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                Self.word(1...2, from: keyLetters, &random)
            }
            // A key path at or above the leased one, or a sibling of one of those.
            var durable = Array(leased.prefix(Int.random(in: 1...leased.count, using: &random)))
            if Bool.random(using: &random) { durable[durable.count - 1] = Self.word(1...2, from: keyLetters, &random) }
            let ends = leased.starts(with: durable)
            let clock = TestClock()
            var configuration = EngineConfiguration()
            configuration.wallClock = { clock.now }
            let fixture = EngineFixture(configuration: configuration)
            let (owner, other) = (fixture.makeClient(), fixture.makeClient())
            let leasedText = leased.map { Self.spell($0, &random) }.joined(separator: ".")
            let durableText = durable.map { Self.spell($0, &random) }.joined(separator: ".")
            let lifetime: JSONValue = Bool.random(using: &random) ? ["ephemeral": true] : ["ttl": 1]
            guard case .object(var request) = lifetime else { return }
            request["op"] = "set"
            request["object"] = "o"
            request["keyPath"] = .string(leasedText)
            request["value"] = 1
            fixture.ok(.object(request), from: owner)
            fixture.ok(["op": "set", "object": "o", "keyPath": .string(durableText), "value": "durable"], from: other)
            let context = "leased \(Self.scalars(leasedText)), durable \(Self.scalars(durableText))"
            #expect(fixture.engine.leaseCount == (ends ? 0 : 1), "\(context)")
            fixture.engine.closeClient(owner)
            clock.now += 2
            fixture.engine.releaseDueValues()
            #expect(fixture.value("o", durableText) == "durable", "\(context)")
            #expect(fixture.engine.leaseCount == 0, "\(context)")
        }
    }

    /// Every prefix test in kvod is one: a grant on a prefix lets a client
    /// read exactly the objects that `list` and a prefix observation of that
    /// prefix cover, also where a letter's marks have no composed form (`x`
    /// then U+0301 is under `x`, as `xy` is; `e` then U+0301 is `é`, which is not).
    @Test func aGrantOnAPrefixCoversExactlyWhatListingThePrefixShows() {
        let combining = [["x"], ["e"], ["/"], ["\u{301}"], ["\u{307}"], ["\u{e9}", "e\u{301}"], ["\u{1e8b}", "x\u{307}"]]
        var random = SplitMix64(seed: 35)
        for _ in 0..<300 {
            let spell = { (word: [Int], random: inout SplitMix64) in
                word.map { combining[$0].randomElement(using: &random)! }.joined()
            }
            let nameWord = Self.word(1...4, from: Array(combining.indices), &random)
            let prefixWord = Bool.random(using: &random)
                ? Array(nameWord.prefix(Int.random(in: 1...nameWord.count, using: &random)))
                : Self.word(1...2, from: Array(combining.indices), &random)
            let name = spell(nameWord, &random)
            let prefix = spell(prefixWord, &random)
            let policy = AccessPolicy(grants: [.init(.user(1000), objectPrefix: prefix, rights: .read)])
            let fixture = EngineFixture(configuration: EngineConfiguration(accessPolicy: policy))
            let root = fixture.makeClient()
            root.credentials = PeerCredentials(pid: 1, uid: 0, gid: 0)
            let reader = fixture.makeClient()
            reader.credentials = PeerCredentials(pid: 2, uid: 1000, gid: 1000)
            fixture.ok(["op": "observe", "prefix": .string(prefix), "keyPath": "k"], from: reader)
            fixture.ok(["op": "set", "object": .string(name), "keyPath": "k", "value": 1], from: root)
            let listed = fixture.ok(["op": "list", "prefix": .string(prefix)], from: root).reply.member("objects")
            let covered = listed == [.string(name)]
            let context = "prefix \(Self.scalars(prefix)), name \(Self.scalars(name)), listed: \(covered)"
            #expect(policy.allows(.read, on: name, for: reader.credentials) == covered, "\(context)")
            #expect(fixture.take(from: reader).events.count == (covered ? 1 : 0), "\(context)")
            let read = fixture.send(["op": "get", "object": .string(name), "keyPath": "k"], from: reader).reply
            #expect((read.member("ok") == true) == covered, "\(context)")
            let readerList = fixture.ok(["op": "list", "prefix": .string(prefix)], from: reader).reply.member("objects")
            #expect(readerList == listed, "\(context)")
        }
    }

    /// Observation scopes order as names do, and two spellings of one name are neither before the other.
    @Test func observationScopesOrderByCanonicalNames() {
        let (nfc, nfd) = ("caf\u{e9}", "cafe\u{301}")
        #expect(ObservationScope.object(nfc) == .object(nfd))
        #expect(!(ObservationScope.object(nfc) < .object(nfd)) && !(ObservationScope.object(nfd) < .object(nfc)))
        #expect(!(ObservationScope.prefix(nfd) < .prefix(nfc)))
        // By NFC bytes "cafe" < "café" (e < C3) and "cafz" < "café" (z < C3), though the
        // bytes of "cafe\u{301}" as sent come before "cafz".
        #expect(ObservationScope.object("cafe") < .object(nfd) && ObservationScope.object("cafz") < .object(nfd))
    }
}

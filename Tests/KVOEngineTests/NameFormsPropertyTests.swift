import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 item 2, "one rule for names": the same random sequence of
/// requests, run once with every name, prefix and key path spelled one way
/// and once with each spelled at random per request (NFC, NFD, marks in
/// another order), gets the same replies and events, names aside (they are
/// compared in NFC: kvod echoes a name as it was first sent).
@Suite struct NameFormsPropertyTests {
    /// A letter and its canonically equivalent spellings, the composed one first.
    /// Letters compose across their boundaries too (`e` then U+0301 is `é`).
    static let letters: [[String]] = [
        ["a"],
        ["e"],
        ["x"],
        ["/"],
        ["\u{e9}", "e\u{301}"],
        ["\u{f6}", "o\u{308}"],
        ["\u{1ec7}", "e\u{323}\u{302}", "\u{ea}\u{323}", "\u{1eb9}\u{302}", "e\u{302}\u{323}"],
        ["K", "\u{212a}"],
        ["\u{301}"],
        ["\u{1e8b}", "x\u{307}"],
    ]
    static let slash = 3

    typealias Word = [Int]

    /// A request with its names left as letters, spelled when it is sent.
    indirect enum Template {
        case literal(JSONValue)
        case name(Word)
        /// A key path: keys joined by dots.
        case path([Word])
        /// A request's members.
        case fields([(String, Template)])
        /// A value's members, named by words.
        case members([(Word, Template)])
        case array([Template])
    }

    /// How a run spells each letter.
    struct Speller {
        /// Which spelling of every letter (the last one where a letter has fewer); nil: at random.
        var form: Int?
        var random = SplitMix64(seed: 0)

        mutating func spell(_ word: Word) -> String {
            word.map { letter in
                let spellings = NameFormsPropertyTests.letters[letter]
                if let form { return spellings[min(form, spellings.count - 1)] }
                return spellings.randomElement(using: &random)!
            }.joined()
        }

        mutating func render(_ template: Template) -> JSONValue {
            switch template {
            case .literal(let value): return value
            case .name(let word): return .string(spell(word))
            case .path(let keys): return .string(keys.map { spell($0) }.joined(separator: "."))
            case .fields(let fields):
                var members = JSONObject()
                for (name, value) in fields { members[name] = render(value) }
                return .object(members)
            case .members(let fields):
                var members = JSONObject()
                for (name, value) in fields {
                    let key = spell(name)
                    // Two words may be one key (`e` + U+0301 and `é`): the first stays, as in a request's JSON.
                    if members[key] == nil { members[key] = render(value) }
                }
                return .object(members)
            case .array(let elements): return .array(elements.map { render($0) })
            }
        }
    }

    enum Step {
        case request(client: Int, Template)
        /// Both clocks move on; due throttled events and lease ends are sent.
        case advance(milliseconds: UInt64)
        /// An owner of ephemeral values closes, and a new client takes its place.
        case closeOwner(Int)
    }

    // Clients: 0 root, 1 and 2 alice (uid 1000), 3 bob (uid 1001), 4 root observer, 5 and 6 owners (bob).
    static let clientCount = 7
    static let owners = [5, 6]
    static let aliceAll: Word = [4, slash]
    static let aliceRead: Word = [2]
    static let anyoneRead: Word = [7]
    static let anyoneWrite: Word = [5]
    static let wordPrefixes: [Word] = [[], aliceAll, aliceRead, anyoneRead, anyoneWrite, [1], [0, slash]]

    static func credentials(of client: Int) -> PeerCredentials {
        switch client {
        case 1, 2: PeerCredentials(pid: 10, uid: 1000, gid: 1000)
        case 3, 5, 6: PeerCredentials(pid: 11, uid: 1001, gid: 1001)
        default: PeerCredentials(pid: 12, uid: 0, gid: 0)
        }
    }

    static func policy(_ speller: inout Speller) -> AccessPolicy {
        AccessPolicy(grants: [
            .init(.user(1000), objectPrefix: speller.spell(aliceAll), rights: .all),
            .init(.user(1000), objectPrefix: speller.spell(aliceRead), rights: .read),
            .init(.anyone, objectPrefix: speller.spell(anyoneRead), rights: .read),
            .init(.anyone, objectPrefix: speller.spell(anyoneWrite), rights: .write),
        ])
    }

    // MARK: Generating

    struct Generator {
        var random: SplitMix64
        let objects: [Word]
        let keys: [Word]

        init(seed: UInt64) {
            random = SplitMix64(seed: seed)
            var random = random
            let keyLetters = NameFormsPropertyTests.letters.indices.filter { $0 != NameFormsPropertyTests.slash }
            keys = (0..<5).map { _ in Self.word(1...2, keyLetters, &random) }
            objects = (0..<7).map { _ in
                NameFormsPropertyTests.wordPrefixes.randomElement(using: &random)!
                    + Self.word(1...2, Array(NameFormsPropertyTests.letters.indices), &random)
            }
            self.random = random
        }

        static func word(_ lengths: ClosedRange<Int>, _ letters: [Int], _ random: inout SplitMix64) -> Word {
            (0..<Int.random(in: lengths, using: &random)).map { _ in letters.randomElement(using: &random)! }
        }

        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        mutating func object() -> Word { objects.randomElement(using: &random)! }
        mutating func keyPath() -> [Word] {
            (0..<Int.random(in: 1...2, using: &random)).map { _ in keys.randomElement(using: &random)! }
        }

        /// A prefix: one the policy names, a start of an object's name, or any letters.
        mutating func prefix() -> Word {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return NameFormsPropertyTests.wordPrefixes.randomElement(using: &random)!
            case 1:
                let name = object()
                return Array(name.prefix(Int.random(in: 0...name.count, using: &random)))
            default: return Self.word(0...2, Array(NameFormsPropertyTests.letters.indices), &random)
            }
        }

        mutating func value(depth: Int = 0) -> Template {
            switch Int.random(in: 0..<(depth > 0 ? 3 : 5), using: &random) {
            case 0: return .literal(.number(JSONNumber(Int.random(in: 0..<3, using: &random))))
            case 1: return .literal("s")
            case 2: return .literal(.null)
            case 3: return .array((0..<Int.random(in: 0...2, using: &random)).map { _ in value(depth: depth + 1) })
            default:
                return .members((0..<Int.random(in: 0...2, using: &random)).map { _ in
                    (keys.randomElement(using: &random)!, value(depth: depth + 1))
                })
            }
        }

        /// A change op: set, delete, insert, remove or replace, sometimes with a condition.
        mutating func change(lifetimes: Bool) -> [(String, Template)] {
            var fields: [(String, Template)] = [("object", .name(object()))]
            let path = keyPath()
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1:
                fields += [("op", .literal("set")), ("value", value())]
                if chance(80) { fields.append(("keyPath", .path(path))) }
                if lifetimes, chance(25) {
                    fields.append(chance(50) ? ("ephemeral", .literal(true))
                                             : ("ttl", .literal(.number(JSONNumber(Int.random(in: 1...3, using: &random))))))
                }
            case 2:
                fields.append(("op", .literal("delete")))
                if chance(60) { fields.append(("keyPath", .path(path))) }
            case 3:
                fields += [("op", .literal("insert")), ("keyPath", .path(path)), ("value", value())]
                if chance(50) { fields.append(("index", .literal(0))) }
            case 4:
                fields += [("op", .literal("remove")), ("keyPath", .path(path)), ("index", .literal(0))]
            default:
                fields += [("op", .literal("replace")), ("keyPath", .path(path)), ("index", .literal(0)),
                           ("value", value())]
            }
            if chance(15) { fields.append(("ifModSeq", .literal(.number(JSONNumber(Int.random(in: 0...8, using: &random)))))) }
            if chance(10) { fields.append(("ifValue", value())) }
            return fields
        }

        mutating func step() -> Step {
            let writer = [0, 1, 2, 3, 5, 6].randomElement(using: &random)!
            let observer = [1, 2, 3, 4].randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35:
                return .request(client: writer, .fields(change(lifetimes: true)))
            case 35..<42:
                let ops = (0..<Int.random(in: 1...3, using: &random)).map { _ in Template.fields(change(lifetimes: false)) }
                return .request(client: writer, .fields([("op", .literal("batch")), ("ops", .array(ops))]))
            case 42..<52:
                var fields: [(String, Template)] = [("op", .literal("get")), ("object", .name(object()))]
                if chance(60) { fields.append(("keyPath", .path(keyPath()))) }
                return .request(client: [0, 1, 2, 3].randomElement(using: &random)!, .fields(fields))
            case 52..<68:
                let isPrefix = chance(50)
                var fields: [(String, Template)] = [
                    ("op", .literal("observe")), isPrefix ? ("prefix", .name(prefix())) : ("object", .name(object())),
                ]
                if chance(70) { fields.append(("keyPath", .path(keyPath()))) }
                let options = ["new", "old", "initial", "prior"].filter { _ in chance(50) }
                fields.append(("options", .literal(.array(options.map(JSONValue.string)))))
                if chance(20) { fields.append(("throttle", .literal(50))) }
                return .request(client: observer, .fields(fields))
            case 68..<72:
                let isPrefix = chance(50)
                var fields: [(String, Template)] = [
                    ("op", .literal("unobserve")), isPrefix ? ("prefix", .name(prefix())) : ("object", .name(object())),
                ]
                if chance(50) { fields.append(("keyPath", .path(keyPath()))) }
                return .request(client: observer, .fields(fields))
            case 72..<82:
                var fields: [(String, Template)] = [("op", .literal("list")), ("prefix", .name(prefix()))]
                if chance(30) { fields.append(("after", .name(object()))) }
                if chance(30) { fields.append(("limit", .literal(2))) }
                return .request(client: [0, 1, 3].randomElement(using: &random)!, .fields(fields))
            case 82..<94:
                return .advance(milliseconds: UInt64(Int.random(in: 10...1_500, using: &random)))
            default:
                return .closeOwner(NameFormsPropertyTests.owners.randomElement(using: &random)!)
            }
        }
    }

    // MARK: Running

    /// What every client got after each step, names in NFC, in order.
    static func run(_ steps: [Step], _ speller: Speller) -> [String] {
        var speller = speller
        let wallClock = TestClock()
        var configuration = EngineConfiguration(accessPolicy: policy(&speller))
        configuration.wallClock = { wallClock.now }
        let fixture = EngineFixture(configuration: configuration)
        var clients: [ClientController] = (0..<clientCount).map { index in
            let client = fixture.makeClient()
            client.credentials = credentials(of: index)
            return client
        }
        var transcript: [String] = []
        func collect(_ step: Int) {
            for (index, client) in clients.enumerated() {
                for line in fixture.take(from: client).lines {
                    transcript.append("step \(step), client \(index): \(normalized(line).jsonString)")
                }
            }
        }
        for (number, step) in steps.enumerated() {
            switch step {
            case .request(let client, let template):
                fixture.handle(speller.render(template).jsonString, from: clients[client])
            case .advance(let milliseconds):
                fixture.clock.advance(by: milliseconds)
                wallClock.now += Double(milliseconds) / 1000
                fixture.engine.releaseThrottledEvents(at: fixture.clock.now.load(ordering: .relaxed))
                while fixture.engine.releaseDueValues() {}
            case .closeOwner(let index):
                collect(number)
                fixture.engine.closeClient(clients[index])
                clients[index] = fixture.makeClient()
                clients[index].credentials = credentials(of: index)
                while fixture.engine.releaseDueValues() {}
            }
            collect(number)
        }
        return transcript
    }

    /// `value` with every string and member name in NFC, and without `epoch` (each engine makes its own).
    static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): return .string(CanonicalName.nfc(text))
        case .array(let elements): return .array(elements.map(normalized))
        case .object(let members):
            var result = JSONObject()
            for (key, member) in members where key != "epoch" { result[CanonicalName.nfc(key)] = normalized(member) }
            return .object(result)
        default: return value
        }
    }

    static func expectSame(_ expected: [String], _ actual: [String], _ what: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let common = min(expected.count, actual.count)
        guard let first = (0..<common).first(where: { expected[$0] != actual[$0] })
            ?? (expected.count == actual.count ? nil : common) else { return }
        let one = first < expected.count ? expected[first] : "nothing"
        let other = first < actual.count ? actual[first] : "nothing"
        Issue.record("\(what): line \(first) differs:\n  \(one)\n  \(other)", sourceLocation: sourceLocation)
    }

    @Test(arguments: 0..<24)
    func everyReplyAndEventIsTheSameWhicheverWayEachNameIsSpelled(seed: UInt64) {
        var generator = Generator(seed: 3300 + seed)
        let steps = (0..<160).map { _ in generator.step() }
        let composed = Self.run(steps, Speller(form: 0))
        #expect(composed.count > 100, "too little happened to compare: \(composed.count) lines")
        Self.expectSame(composed, Self.run(steps, Speller(form: 4)), "seed \(seed), decomposed")
        Self.expectSame(composed, Self.run(steps, Speller(form: nil, random: SplitMix64(seed: seed))),
                        "seed \(seed), spelled at random")
    }
}

import Foundation
@_spi(Fuzzing) @testable import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// The decoder's one pass against the ways clients spell requests (issue 16):
/// random requests of every op, each written with its members shuffled,
/// whitespace as `json.dumps` or a human puts it, ids of every type, and
/// characters escaped. Every spelling must take the one pass and decode as
/// the compact spelling does, as the full reader does, and as Foundation's
/// JSONSerialization reads the same bytes.
@Suite struct RequestSpellingTests {
    /// What a line decodes to, written out so two decodings can be compared:
    /// by the decoder (`scanning`) or by its full reader alone.
    static func outcome(_ line: [UInt8], scanning: Bool = true) -> String {
        let decoded = line.withUnsafeBytes { scanning ? RequestDecoder.decode($0) : RequestDecoder.decodeWithFullReader($0) }
        return describe(decoded)
    }

    static func describe(_ outcome: RequestDecoder.Outcome) -> String {
        switch outcome {
        case .request(let request):
            return "request \(request)"
        case .failure(let id, let error):
            return "failure \(id?.description ?? "-") \(error.code) \(error.message)"
        }
    }

    /// Whether the one pass reads the line (without the full reader).
    static func takesTheOnePass(_ line: [UInt8]) -> Bool {
        var fields = Fields()
        return line.withUnsafeBytes { RequestScanner.scan($0, into: &fields) }
    }

    @Test func everySpellingOfARequestDecodesAsItsCompactSpellingDoes() {
        var requests = RandomRequests(seed: 0x5be1_1ed)
        var speller = RequestSpeller(seed: 0xd0_0d1e)
        for _ in 0..<3_000 {
            let members = requests.next()
            let compact = Array(RequestSpeller.compact(members).utf8)
            let expected = Self.outcome(compact)
            #expect(expected == Self.outcome(compact, scanning: false), "\(String(decoding: compact, as: UTF8.self))")
            for _ in 0..<4 {
                let line = Array(speller.spelled(members).utf8)
                let text = String(decoding: line, as: UTF8.self)
                #expect(Self.takesTheOnePass(line), "\(text)")
                #expect(Self.outcome(line) == expected, "\(text)")
                #expect(Self.outcome(line, scanning: false) == expected, "\(text)")
                if Self.outcome(line) != expected { return }
            }
        }
    }

    @Test func spelledSetsDecodeToWhatJSONSerializationReads() throws {
        var requests = RandomRequests(seed: 0xf0_0dfa)
        var speller = RequestSpeller(seed: 0x5e75)
        var sets = 0
        for _ in 0..<3_000 {
            let line = Array(speller.spelled(requests.set()).utf8)
            let text = String(decoding: line, as: UTF8.self)
            let members = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], "\(text)")
            guard case .request(let request) = line.withUnsafeBytes({ RequestDecoder.decode($0) }),
                  case .set(let object, let keyPath, let value) = request.operation else {
                // A generated name or path the protocol refuses: refused by both paths alike (above).
                continue
            }
            sets += 1
            #expect(ObjCAgreement.agrees(.string(object), members["object"] as Any), "\(text)")
            #expect(ObjCAgreement.agrees(value, members["value"] as Any), "\(text)")
            let path = try (members["keyPath"] as? String).map { try ObservedPath(parsing: $0) }
            #expect(keyPath.components == (path ?? .wholeDocument).components, "\(text)")
            switch (request.id, members["id"]) {
            case (nil, nil): break
            case (let ours?, let theirs?): #expect(ObjCAgreement.agrees(ours.value, theirs), "\(text)")
            default: Issue.record("id read by one side only: \(text)")
            }
        }
        #expect(sets > 2_500)
    }

    @Test func mutatedSpellingsDecodeAlikeThroughTheOnePassAndTheFullReader() {
        var requests = RandomRequests(seed: 0x3a7e)
        var speller = RequestSpeller(seed: 0x3a7f)
        var mutator = LineMutator(seed: 0x3a80)
        var onePass = 0
        // One decoder kept for every line, as the daemon keeps one: its key
        // path cache must not change what any line decodes to.
        var kept = RequestDecoder()
        for _ in 0..<30_000 {
            let line = mutator.mutated(speller.spelled(requests.next()))
            let takesTheOnePass = Self.takesTheOnePass(line)
            if takesTheOnePass { onePass += 1 }
            let fast = Self.outcome(line)
            let full = Self.outcome(line, scanning: false)
            let viaKept = Self.describe(line.withUnsafeBytes { kept.decode($0) })
            #expect(fast == full, "\(String(decoding: line, as: UTF8.self))")
            #expect(viaKept == fast, "\(String(decoding: line, as: UTF8.self))")
            // A valid request never needs a second pass: the full reader only names errors.
            #expect(takesTheOnePass || !full.hasPrefix("request"), "\(String(decoding: line, as: UTF8.self))")
            if fast != full || viaKept != fast { return }
        }
        // The comparison means something only if many damaged lines still took the one pass.
        #expect(onePass > 1_000)
    }
}

/// Random requests of every op, as members in the order docs/PROTOCOL.md
/// lists them; names, paths, values and ids with the characters encoders escape.
struct RandomRequests {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    private mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    private mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

    private static let objects = ["person/1", "bench/0", "café/ü", "a b", "q\"uote", "slash/\\back", "😀/𝄞", "tab\there", "x"]
    private static let keyPaths = ["name", "a.b", "a.b.c", "list", "ü", "v", "k/1"]
    private static let strings = ["", "xsc", "12,1732530000123456", "é€😀", "a\"b", "back\\slash", "line\nbreak", "</tag>",
                                  "\u{7F}\u{2028}", "\u{1}"]

    mutating func value(depth: Int = 0) -> JSONValue {
        switch below(depth >= 2 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(below(2) == 0)
        case 2: return .number(JSONNumber(validatedLiteral: pick(["0", "7", "-12", "2.5", "-0", "1e3", "1E-2",
                                                                 "123456789012345678", "12345678901234567890123"])))
        case 3, 4: return .string(pick(Self.strings))
        case 5: return .array((0..<below(4)).map { _ in value(depth: depth + 1) })
        default:
            var members = JSONObject()
            for name in ["x", "é", "a b"] where below(2) == 0 { members[name] = value(depth: depth + 1) }
            return .object(members)
        }
    }

    /// An id of any JSON type, or none.
    mutating func id() -> JSONValue? {
        switch below(8) {
        case 0, 1: return nil
        case 2: return .number(JSONNumber(below(100_000)))
        case 3: return .number(JSONNumber(validatedLiteral: pick(["-1", "1.5", "2e10", "0"])))
        case 4: return .string(pick(["r1", "req/é", "a\"b", ""]))
        case 5: return pick([.null, .bool(true), .bool(false)])
        default: return pick([.array([1, "x"]), .object(["n": 1])])
        }
    }

    /// A set, with an id or not.
    mutating func set() -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("op", "set"), ("object", .string(pick(Self.objects)))]
        if below(8) == 0 {
            members.append(("value", .object(["a": value()])))
        } else {
            members.append(("keyPath", .string(pick(Self.keyPaths))))
            members.append(("value", value()))
        }
        return withID(members)
    }

    /// A request of any op.
    mutating func next() -> [(String, JSONValue)] {
        let object: (String, JSONValue) = ("object", .string(pick(Self.objects)))
        let keyPath: (String, JSONValue) = ("keyPath", .string(pick(Self.keyPaths)))
        switch below(15) {
        case 0, 1, 2: return set()
        case 3: return withID([("op", "set"), object, keyPath, ("value", value()), pick([("ttl", 30), ("ephemeral", true), ("ifModSeq", 0)])])
        case 4: return withID([("op", "get"), object] + (below(2) == 0 ? [keyPath] : []))
        case 5: return withID([("op", "delete"), object, keyPath])
        case 6:
            let options = JSONValue.array(["new", "old", "initial", "prior"].filter { _ in below(2) == 0 }.map(JSONValue.string))
            let paths: (String, JSONValue) = below(2) == 0 ? keyPath : ("keyPaths", .array([.string(pick(Self.keyPaths)), "z"]))
            return withID([("op", "observe"), below(4) == 0 ? ("prefix", "pre/") : object, paths, ("options", options)]
                + (below(2) == 0 ? [("context", value())] : []))
        case 7: return withID([("op", "unobserve"), object] + (below(2) == 0 ? [keyPath] : []))
        case 8: return withID([("op", "insert"), object, ("keyPath", "list"), ("index", 0), ("values", [1, "two"])])
        case 9: return withID([("op", "remove"), object, ("keyPath", "list"), ("indexes", [2, 0])])
        case 10: return withID([("op", "replace"), object, ("keyPath", "list"), ("indexes", [0]), ("values", [value()])])
        case 11: return withID([("op", "list"), ("prefix", "person/"), ("limit", 10)])
        case 12: return withID([("op", .string(pick(["ping", "info", "observations", "unobserveAll"])))])
        case 13:
            let amount = JSONValue.number(JSONNumber(validatedLiteral: pick(["1", "-42", "0", "9007199254740992", "1.5"])))
            return withID([("op", "add"), object, keyPath, ("by", amount)] + (below(2) == 0 ? [("ifModSeq", 0)] : []))
        default:
            let ops: [JSONValue] = [["op": "set", "object": "o", "keyPath": "a", "value": value()], ["op": "delete", "object": "o"]]
            return withID([("op", "batch"), ("ops", .array(ops))])
        }
    }

    private mutating func withID(_ members: [(String, JSONValue)]) -> [(String, JSONValue)] {
        guard let id = id() else { return members }
        var members = members
        members.insert(("id", id), at: below(members.count + 1))
        return members
    }
}

import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

// Differential tests: random documents go through JSONWriter and back through
// JSONReader, and the same bytes through Foundation's JSONSerialization, which
// serves as an independent oracle for both structure and validity.
//
// JSONSerialization is more lenient than RFC 8259 in places, so on malformed
// input only one direction is asserted: whatever it rejects, JSONReader must
// reject too. Seen here (swift-corelibs-foundation, Swift 6.3) where it accepts
// and JSONReader, by design, rejects:
//   - trailing commas: `[1,]`, `{"a":1,}`;
//   - a UTF-8 byte order mark before the value, and NUL bytes around a short
//     value (`1\0`, `\0\0\01`), which it sniffs as UTF-16 or UTF-32;
//   - repeated member names (the last one wins there).
// It does reject invalid UTF-8, raw control characters, lone surrogates,
// leading zeros and numbers that overflow a Double, as JSONReader does.
// Where both accept, they must agree, with two allowances for Foundation:
//   - it drops a U+FEFF at the start of a string and right after an escape
//     (it decodes each unescaped run as if it might begin with a byte order
//     mark), so string values are compared with U+FEFF removed on both sides
//     and generated member names contain none;
//   - it turns long numbers into NSDecimalNumber, whose `doubleValue` is a few
//     units in the last place off the correctly rounded Double that
//     `Double(literal)` gives, so those are compared with a relative tolerance
//     of 1e-14. Every other number must be equal as a Double.
// Numbers that overflow a Double are rejected by both.

/// Builds random JSON values covering every kind, number shape and string hazard.
private struct DocumentGenerator {
    var rng: SplitMix64
    let maxDepth: Int

    mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &rng) }

    mutating func value(depth: Int = 0) -> JSONValue {
        switch below(depth >= maxDepth ? 6 : 10) {
        case 0: return .null
        case 1: return .bool(below(2) == 0)
        case 2, 3: return .number(JSONNumber(validatedLiteral: numberLiteral()))
        case 4, 5: return .string(string(maxPieces: 12, hazards: Self.hazards))
        case 6, 7:
            var elements: [JSONValue] = []
            for _ in 0..<below(6) { elements.append(value(depth: depth + 1)) }
            return .array(elements)
        default:
            var members = JSONObject()
            for _ in 0..<below(6) {
                let name = string(maxPieces: 5, hazards: Self.nameHazards)
                if members[name] == nil { members[name] = value(depth: depth + 1) }
            }
            return .object(members)
        }
    }

    static let edgeNumbers = [
        "-0", "0.0", "-0.0e-0", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "18446744073709551615", "123456789012345678901234567890", "1.7976931348623157e308", "5e-324",
        "2.2250738585072014e-308", "1e-400", "1E+2", "1e007", "0.1", "9007199254740993",
    ]

    /// A literal following RFC 8259's grammar, kept within Double's range.
    mutating func numberLiteral() -> String {
        if below(8) == 0 { return Self.edgeNumbers[below(Self.edgeNumbers.count)] }
        var text = below(3) == 0 ? "-" : ""
        if below(4) == 0 {
            text += "0"
        } else {
            text += String(1 + below(9))
            for _ in 0..<below(below(8) == 0 ? 30 : 7) { text += String(below(10)) }
        }
        if below(3) == 0 {
            text += "."
            for _ in 0...below(below(10) == 0 ? 40 : 8) { text += String(below(10)) }
        }
        if below(3) == 0 {
            text += below(2) == 0 ? "e" : "E"
            text += ["", "+", "-"][below(3)]
            text += (below(6) == 0 ? "0" : "") + String(below(250))
        }
        return text
    }

    static let hazards = [
        "é", "€", "😀", "𝄞", "中文", "e\u{301}", "\u{7F}", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}", "/",
        "\"", "\\", "\\u0041", "\u{0}",
    ]
    /// No U+FEFF in member names: JSONSerialization would drop it and merge, say, "\u{FEFF}" with "".
    static let nameHazards = hazards.filter { $0 != "\u{FEFF}" }

    mutating func string(maxPieces: Int, hazards: [String]) -> String {
        var text = ""
        for _ in 0..<below(maxPieces + 1) {
            switch below(5) {
            case 0: text.unicodeScalars.append(Unicode.Scalar(UInt8(0x20 + below(0x5F))))
            case 1: text.unicodeScalars.append(Unicode.Scalar(UInt8(below(0x20))))
            case 2: text += hazards[below(hazards.count)]
            case 3:
                let value = below(2) == 0 ? 0x80 + below(0xD800 - 0x80) : 0xE000 + below(0x110000 - 0xE000)
                text.unicodeScalars.append(Unicode.Scalar(UInt32(value))!)
            default: text += "abc"
            }
        }
        return text
    }

    static let interestingBytes: [UInt8] =
        Array("{}[],:\"\\ \t\n0123456789eE.-+tfnrlsau/#".utf8)
        + [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF, 0x0B, 0x0C]

    /// One to three random edits: replace, insert, delete, truncate, duplicate a slice or flip a bit.
    mutating func mutate(_ original: [UInt8]) -> [UInt8] {
        var bytes = original
        for _ in 0...below(3) {
            let interesting = below(4) == 0 ? UInt8(below(256)) : Self.interestingBytes[below(Self.interestingBytes.count)]
            let index = below(bytes.count + 1)
            switch below(6) {
            case 0 where index < bytes.count: bytes[index] = interesting
            case 1: bytes.insert(interesting, at: index)
            case 2 where index < bytes.count: bytes.remove(at: index)
            case 3: bytes.removeSubrange(index...)
            case 4:
                let slice = Array(bytes[index...].prefix(1 + below(8)))
                bytes.insert(contentsOf: slice, at: below(bytes.count + 1))
            case 5 where index < bytes.count: bytes[index] ^= UInt8(1) << below(8)
            default: break
            }
        }
        return bytes
    }
}

/// Whether `skipValue()` (which validates without building) accepts `bytes` as one document.
private func skips(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw in
        var reader = JSONReader(raw)
        do throws(JSONError) {
            try reader.skipValue()
            try reader.finish()
            return true
        } catch {
            return false
        }
    }
}

/// The members of the object in `bytes`, read with the pull API.
private func pulledMembers(_ bytes: [UInt8]) throws(JSONError) -> JSONObject {
    try bytes.withUnsafeBytes { raw -> Result<JSONObject, JSONError> in
        var reader = JSONReader(raw)
        var members = JSONObject()
        do throws(JSONError) {
            try reader.beginObject()
            while let name = try reader.nextMember() { members[name] = try reader.readValue() }
            try reader.finish()
            return .success(members)
        } catch {
            return .failure(error)
        }
    }.get()
}

/// What JSONSerialization makes of `bytes`, or nil if it rejects them.
private func oracle(_ bytes: [UInt8]) -> Any? {
    try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}

@Suite struct JSONDifferentialTests {
    @Test func roundTripWhenDocumentsAreRandomMatchesItselfAndFoundation() throws {
        var generator = DocumentGenerator(rng: SplitMix64(seed: 0x6B76_6F64), maxDepth: 5)
        for iteration in 0..<3000 {
            let value = generator.value()
            let bytes = value.jsonBytes
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(try JSONReader.parse(bytes) == value, "iteration \(iteration): \(text)")
            let theirs = oracle(bytes)
            #expect(theirs != nil, "JSONSerialization rejected iteration \(iteration): \(text)")
            if let theirs { #expect(ObjCAgreement.agrees(value, theirs), "iteration \(iteration): \(text)") }
        }
    }

    /// Also checks the reader against itself on every mutant: `skipValue()` accepts
    /// exactly what `parse` accepts, and the pull API reads the same members.
    @Test func readWhenFoundationRejectsMutatedDocumentRejectsToo() throws {
        var generator = DocumentGenerator(rng: SplitMix64(seed: 0x4A53_4F4E), maxDepth: 3)
        let seeds = [
            #"{"a":"\ud83d\ude00","b":[1.5e3,-0,true,null],"c":"\u00e9\n\t\"","d":{}}"#,
            #"[0,-1,2.5,1e10,-3E-2,"x\\y",{"k":[[]]},false]"#,
            #"{"é":"€","n":12345678901234567890,"s":"\u0000\u001f\/"}"#,
        ].map { Array($0.utf8) }
        var checked = 0
        for iteration in 0..<6000 {
            let base = iteration % 4 < 3 ? generator.value().jsonBytes : seeds[iteration % seeds.count]
            let mutant = generator.mutate(base)
            let ours = try? JSONReader.parse(mutant)
            #expect(skips(mutant) == (ours != nil), "skipValue and parse disagree on \(mutant)")
            if case .object(let members)? = ours { #expect(try pulledMembers(mutant) == members) }
            guard let theirs = oracle(mutant) else {
                #expect(ours == nil, "accepted what JSONSerialization rejects: \(mutant)")
                continue
            }
            // Both accepted: they must also agree on what the document says.
            if let ours {
                checked += 1
                #expect(ObjCAgreement.agrees(ours, theirs), "disagree on \(String(decoding: mutant, as: UTF8.self))")
            }
        }
        #expect(checked > 500, "too few mutants accepted by both to compare structure")
    }
}

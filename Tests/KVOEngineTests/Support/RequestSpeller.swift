import KVOEngine
import KVOTestSupport
import KVOValues

/// Writes one request the many ways real clients do: members in any order,
/// whitespace between tokens (`json.dumps` puts a space after every `:` and
/// `,`), an `id` anywhere and of any type, characters escaped (`\/`,
/// `\u00e9`, surrogate pairs) where an encoder may escape them. Every
/// spelling is valid JSON for the same request.
struct RequestSpeller {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    /// The compact spelling, members in the order given, nothing escaped that need not be.
    static func compact(_ members: [(String, JSONValue)]) -> String {
        var speller = RequestSpeller(seed: 0)
        return speller.spell(members, shuffled: false, spaced: false, escaping: false)
    }

    /// A random spelling of `members`.
    mutating func spelled(_ members: [(String, JSONValue)]) -> String {
        spell(members, shuffled: below(4) != 0, spaced: below(2) == 0, escaping: below(3) == 0)
    }

    private mutating func spell(_ members: [(String, JSONValue)], shuffled: Bool, spaced: Bool,
                                escaping: Bool) -> String {
        var order = Array(members.indices)
        if shuffled { order.shuffle(using: &random) }
        let parts = order.map { index in
            string(members[index].0, escaping: escaping) + space(spaced) + ":" + space(spaced)
                + value(members[index].1, spaced: spaced, escaping: escaping)
        }
        return "{" + space(spaced) + parts.joined(separator: space(spaced) + "," + space(spaced)) + space(spaced) + "}"
    }

    /// Nothing, or what `json.dumps` writes (one space), or a run of any JSON whitespace.
    private mutating func space(_ spaced: Bool) -> String {
        guard spaced else { return "" }
        switch below(4) {
        case 0: return ""
        case 1, 2: return " "
        default: return String((0...below(3)).map { _ in [" ", "\t", "\r", "\n"][below(4)] })
        }
    }

    private mutating func value(_ value: JSONValue, spaced: Bool, escaping: Bool) -> String {
        switch value {
        case .string(let text): return string(text, escaping: escaping)
        case .array(let elements):
            let parts = elements.map { self.value($0, spaced: spaced, escaping: escaping) }
            return "[" + space(spaced) + parts.joined(separator: space(spaced) + "," + space(spaced)) + space(spaced) + "]"
        case .object(let members):
            // A document's member order is its content (kvod keeps it): never shuffled.
            return spell(members.map { ($0.key, $0.value) }, shuffled: false, spaced: spaced, escaping: escaping)
        default: return value.jsonString
        }
    }

    /// A JSON string; with `escaping`, some characters escaped that need not be.
    private mutating func string(_ text: String, escaping: Bool) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += unicodeEscape(UInt16(scalar.value))
            case "/" where escaping && below(2) == 0: out += "\\/"
            case _ where escaping && below(4) == 0:
                if scalar.value > 0xFFFF {
                    let offset = scalar.value - 0x10000
                    out += unicodeEscape(UInt16(0xD800 + (offset >> 10))) + unicodeEscape(UInt16(0xDC00 + (offset & 0x3FF)))
                } else {
                    out += unicodeEscape(UInt16(scalar.value))
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private mutating func unicodeEscape(_ unit: UInt16) -> String {
        let hex = String(unit, radix: 16, uppercase: below(2) == 0)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}

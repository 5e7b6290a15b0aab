/// A request target's path, cut into percent-decoded segments, and its query's
/// parameters. Each segment is decoded once, after cutting, so `%2F` is a slash
/// inside a name, not a separator.
struct HTTPTarget {
    /// The path as sent, for messages.
    let path: String
    /// The path's segments after the leading slash, decoded.
    let segments: [String]
    /// The query's parameters, decoded (`+` is a space), in their order.
    let parameters: [(name: String, value: String)]

    /// The last value of the parameter `name`, if any.
    func parameter(_ name: String) -> String? { parameters.last { $0.name == name }?.value }

    /// Every value of the parameter `name`, in order.
    func parameters(_ name: String) -> [String] { parameters.filter { $0.name == name }.map(\.value) }

    init(_ target: String) throws(HTTPRefusal) {
        // Cut at ASCII bytes, not Characters: the same pieces, without grapheme breaking.
        let parts = Self.pieces(of: target[...], at: UInt8(ascii: "?"), limit: 2)
        path = String(parts[0])
        guard path.hasPrefix("/") else { throw HTTPRefusal(.badRequest, "a request target must be a path: \(target)") }
        var segments: [String] = []
        for raw in Self.pieces(of: parts[0].dropFirst(), at: UInt8(ascii: "/")) {
            segments.append(try Self.decode(raw, plusIsSpace: false))
        }
        // A trailing slash names the same resource.
        if segments.count > 1, segments.last == "" { segments.removeLast() }
        self.segments = segments
        var parameters: [(name: String, value: String)] = []
        if parts.count == 2 {
            for pair in Self.pieces(of: parts[1], at: UInt8(ascii: "&")) where !pair.isEmpty {
                let nameAndValue = Self.pieces(of: pair, at: UInt8(ascii: "="), limit: 2)
                let name = try Self.decode(nameAndValue[0], plusIsSpace: true)
                parameters.append((name, nameAndValue.count == 2 ? try Self.decode(nameAndValue[1], plusIsSpace: true) : ""))
            }
        }
        self.parameters = parameters
    }

    /// `text` cut at each `separator` (an ASCII byte), empty pieces kept, into
    /// at most `limit` pieces (the last one keeps the separators after it).
    private static func pieces(of text: Substring, at separator: UInt8, limit: Int = .max) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var index = start
        let utf8 = text.utf8
        while index != utf8.endIndex, pieces.count + 1 < limit {
            if utf8[index] == separator {
                pieces.append(text[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        pieces.append(text[start...])
        return pieces
    }

    /// Percent-decodes `text`; malformed escapes or bytes that are not UTF-8 are refused.
    static func decode(_ text: Substring, plusIsSpace: Bool) throws(HTTPRefusal) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw HTTPRefusal(.badRequest, "a malformed percent escape in \(text)")
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw HTTPRefusal(.badRequest, "\(text) decodes to bytes that are not UTF-8")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

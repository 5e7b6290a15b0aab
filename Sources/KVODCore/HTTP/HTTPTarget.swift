import KVOValues

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
        guard target.utf8.first == UInt8(ascii: "/") else {
            throw HTTPRefusal(.badRequest, "a request target must be a path: \(target)")
        }
        var text = target
        var refusal: HTTPRefusal?
        // Cut at ASCII bytes, not Characters: the same pieces, without grapheme breaking.
        let cut = text.withUTF8 { utf8 -> (pathEnd: Int, segments: [String], parameters: [(name: String, value: String)])? in
            do throws(HTTPRefusal) {
                return try Self.cut(utf8)
            } catch {
                refusal = error
                return nil
            }
        }
        guard let cut else { throw refusal ?? HTTPRefusal(.badRequest, "a malformed request target: \(target)") }
        path = cut.pathEnd == target.utf8.count ? target : String(target.utf8.prefix(cut.pathEnd))!
        segments = cut.segments
        parameters = cut.parameters
    }

    /// The path's end, its segments after the leading slash (a trailing slash
    /// dropped) and the query's parameters (empty ones skipped, a value cut at
    /// its first `=` only), each decoded.
    private static func cut(_ utf8: UnsafeBufferPointer<UInt8>) throws(HTTPRefusal)
        -> (pathEnd: Int, segments: [String], parameters: [(name: String, value: String)]) {
        let pathEnd = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.count
        var segments: [String] = []
        var start = 1
        for index in 1...pathEnd where index == pathEnd || utf8[index] == UInt8(ascii: "/") {
            segments.append(try decode(utf8, start..<index, plusIsSpace: false))
            start = index + 1
        }
        // A trailing slash names the same resource.
        if segments.count > 1, segments.last == "" { segments.removeLast() }
        var parameters: [(name: String, value: String)] = []
        start = pathEnd + 1
        if pathEnd < utf8.count {
            for index in start...utf8.count where index == utf8.count || utf8[index] == UInt8(ascii: "&") {
                defer { start = index + 1 }
                guard index > start else { continue }
                let equals = utf8[start..<index].firstIndex(of: UInt8(ascii: "=")) ?? index
                let name = try decode(utf8, start..<equals, plusIsSpace: true)
                parameters.append((name, equals < index ? try decode(utf8, equals + 1..<index, plusIsSpace: true) : ""))
            }
        }
        return (pathEnd, segments, parameters)
    }

    /// Percent-decodes `range` of `utf8` (`+` as a space where `plusIsSpace`);
    /// malformed escapes or bytes that are not UTF-8 are refused.
    private static func decode(_ utf8: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                               plusIsSpace: Bool) throws(HTTPRefusal) -> String {
        let piece = UnsafeBufferPointer(rebasing: utf8[range])
        // Cut at ASCII bytes from valid UTF-8, so a piece without escapes is valid UTF-8.
        guard piece.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(decoding: piece, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(piece.count)
        var iterator = piece.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(JSONStringBody.hexDigit),
                      let low = iterator.next().flatMap(JSONStringBody.hexDigit) else {
                    throw HTTPRefusal(.badRequest, "a malformed percent escape in \(String(decoding: piece, as: UTF8.self))")
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw HTTPRefusal(.badRequest, "\(String(decoding: piece, as: UTF8.self)) decodes to bytes that are not UTF-8")
        }
        return decoded
    }
}

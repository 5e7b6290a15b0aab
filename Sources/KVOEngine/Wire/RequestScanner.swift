import KVOProtocol
import KVOValues

/// The request decoder's one pass: any request, in whatever spelling its
/// client writes it (members in any order, an `id` anywhere, whitespace
/// between tokens as `json.dumps` puts it, escapes in strings), straight into
/// ``Fields``.
///
/// Printable ASCII strings are taken as bytes of the line; any other string
/// (escapes, non-ASCII) is decoded by ``JSONReader``, as is any value that is
/// not a short string, a small integer, `true`, `false` or `null`. It gives
/// up only on a line that is no valid request (an unknown or repeated member,
/// an unknown op, bad JSON), and the full reader then explains what is wrong
/// with it: for every line, either both give the same request or the scanner
/// gives none (`RequestScannerTests`, `RequestSpellingTests`).
struct RequestScanner {
    private let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Reads a request into `fields`, empty on entry (filled in place:
    /// `Fields` is a dozen optional values, and copying it in and out cost a
    /// tenth of a decode). False when the line needs the full reader.
    static func scan(_ line: UnsafeRawBufferPointer, into fields: inout Fields) -> Bool {
        var scanner = RequestScanner(line)
        return scanner.scanObject(into: &fields)
    }

    private mutating func scanObject(into fields: inout Fields) -> Bool {
        var seen: UInt64 = 0
        skipWhitespace()
        guard consume(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if !consume(UInt8(ascii: "}")) {
            repeat {
                guard let member = memberName() else { return false }
                let bit = UInt64(1) << member.rawValue
                guard seen & bit == 0 else { return false }
                seen |= bit
                guard nameSeparator() else { return false }
                // `id` and `op` are the first two members: one comparison sends
                // every other member on.
                if member.rawValue > RequestMember.op.rawValue {
                    guard read(member, into: &fields) else { return false }
                } else if member == .op {
                    if let code = commonOp() {
                        fields.opCode = code
                    } else {
                        guard let name = stringText(), let code = Op(name) else { return false }
                        fields.opCode = code
                    }
                } else if let (word, digits) = shortDigits() {
                    // Here, not in ``shortID()``, whose call measured dearer (docs/PERFORMANCE.md).
                    position += digits
                    fields.id = RequestID(validatedText: word, count: digits)
                } else if let id = shortID() {
                    fields.id = id
                } else {
                    guard read(.id, into: &fields) else { return false }
                }
            } while memberSeparator()
            guard consume(UInt8(ascii: "}")) else { return false }
        }
        fields.seen = seen
        skipWhitespace()
        return position == bytes.count
    }

    /// The `:` after a member's name and the whitespace around it. A compact
    /// `:` and a `:` with one space after it are told from two bytes, for
    /// less than the general loop takes; anything else goes through it.
    /// False when no `:` is here.
    @inline(__always)
    private mutating func nameSeparator() -> Bool {
        if position + 3 <= bytes.count {
            let pair = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt16.self))
            if pair & 0xFF == UInt16(UInt8(ascii: ":")) {
                if pair > 0x20FF {  // no whitespace after it
                    position += 1
                    return true
                }
                if pair >> 8 == 0x20, bytes[position + 2] > 0x20 {
                    position += 2
                    return true
                }
            }
        }
        return separator(UInt8(ascii: ":"))
    }

    /// After a member's value: true when a `,` and the whitespace around it
    /// were skipped, for another member; false otherwise (any whitespace
    /// skipped). `,"` and `, "` are told from two bytes and a third.
    @inline(__always)
    private mutating func memberSeparator() -> Bool {
        if position + 3 <= bytes.count {
            let pair = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt16.self))
            if pair == 0x222C {  // ,"
                position += 1
                return true
            }
            if pair == 0x202C, bytes[position + 2] == UInt8(ascii: "\"") {  // , "
                position += 2
                return true
            }
        }
        return separator(UInt8(ascii: ","))
    }

    /// `byte` and any whitespace around it, by the general loop (kept out of
    /// line: inlined, it made the two-byte tests above calls of their own).
    @inline(never)
    private mutating func separator(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard consume(byte) else { return false }
        skipWhitespace()
        return true
    }

    /// A member name, as a member; nil for a name that is none (or bad JSON).
    @inline(__always)
    private mutating func memberName() -> RequestMember? {
        if let member = commonMemberName() { return member }
        if let member = lastMemberName() { return member }
        let start = position
        if let name = plainString() { return RequestMember(plain: name) }
        guard let name = nonPlainString(from: start, resumingAt: position) else { return nil }
        return RequestMember(.decoded(name))
    }

    /// The names every set has, told by the eight bytes after the opening
    /// quote read as one word (the name and its closing quote, little-endian):
    /// finding the string's end and comparing it cost more than the rest of
    /// the member. Nil, position unchanged, for any other name.
    @inline(__always)
    private mutating func commonMemberName() -> RequestMember? {
        guard position + 9 <= bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt64.self))
        guard let (member, length) = Self.commonName(word) else { return nil }
        position += 1 + length
        return member
    }

    /// ``commonMemberName()`` where fewer than eight bytes follow the quote
    /// (`"id":7}` ends a `json.dumps` line): the line's last eight, shifted
    /// down, zeros above its end. Kept out of line: in ``commonMemberName()``
    /// the branch cost every member more than it saved.
    @inline(never)
    private mutating func lastMemberName() -> RequestMember? {
        guard position + 9 > bytes.count, position + 1 < bytes.count, bytes.count >= 8,
              bytes[position] == UInt8(ascii: "\"") else { return nil }
        let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
            >> (UInt64(position + 9 - bytes.count) << 3)
        guard let (member, length) = Self.commonName(word) else { return nil }
        position += 1 + length
        return member
    }

    /// The common name and its length with the closing quote, when `word`
    /// (the bytes after the opening quote, first lowest) starts with one.
    @inline(__always)
    private static func commonName(_ word: UInt64) -> (RequestMember, Int)? {
        let member: RequestMember
        let length: Int
        if word & 0xFF_FFFF == 0x22_706F {  // op"
            (member, length) = (.op, 3)
        } else if word & 0xFF_FFFF_FFFF_FFFF == 0x22_7463_656A_626F {  // object"
            (member, length) = (.object, 7)
        } else if word == 0x2268_7461_5079_656B {  // keyPath"
            (member, length) = (.keyPath, 8)
        } else if word & 0xFFFF_FFFF_FFFF == 0x2265_756C_6176 {  // value"
            (member, length) = (.value, 6)
        } else if word & 0xFF_FFFF == 0x22_6469 {  // id"
            (member, length) = (.id, 3)
        } else {
            return nil
        }
        return (member, length)
    }

    /// `"set"` and `"observe"`, told as ``commonMemberName()`` tells names;
    /// nil, position unchanged, for anything else.
    @inline(__always)
    private mutating func commonOp() -> Op? {
        guard let word = wordAfterQuote() else { return nil }
        if word & 0xFFFF_FFFF == 0x2274_6573 {  // set"
            position += 5
            return .set
        }
        if word == 0x2265_7672_6573_626F {  // observe"
            position += 9
            return .observe
        }
        return nil
    }

    /// The eight bytes after a quote here, little-endian; four near the
    /// line's end (`"op":"set"}` ends a shuffled line), the rest zero: no op
    /// has a zero byte. Nil when no quote is here, or fewer than four bytes
    /// follow it. (For names too, it cost every member more than it saved.)
    @inline(__always)
    private func wordAfterQuote() -> UInt64? {
        guard position + 5 <= bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        if _fastPath(position + 9 <= bytes.count) {
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt64.self))
        }
        return UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt32.self)))
    }

    /// The value of any member but `op`; false to give up.
    private mutating func read(_ member: RequestMember, into fields: inout Fields) -> Bool {
        if member == .keyPath, position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
            let start = position
            if let text = plainString() {
                fields.keyPathText = text
                return true
            }
            position = start
        }
        if member == .options {
            let start = position
            if let options = optionList() {
                fields.parsedOptions = options
                return true
            }
            // Escaped names, unknown ones, not an array: read whole, for ``Fields`` to judge.
            position = start
        }
        guard let value = anyValue() else { return false }
        fields.assign(member, value)
        return true
    }

    /// An integer or a plain string short enough to be kept as its text
    /// (``RequestID``; most integers are told before, by ``shortDigits()``);
    /// nil, position unchanged, for any other id.
    @inline(__always)
    private mutating func shortID() -> RequestID? {
        guard position < bytes.count else { return nil }
        let start = position
        if bytes[start] == UInt8(ascii: "\"") {
            guard plainString() != nil, position - start <= RequestID.inlineCapacity else {
                position = start
                return nil
            }
        } else {
            guard let end = smallIntegerEnd() else { return nil }
            position = end
        }
        return RequestID(validatedText: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
    }

    /// A non-negative integer of at most seven digits here, as its text in
    /// one word (first byte lowest) and its length, told from the eight bytes
    /// here, or the line's last eight shifted down when fewer are left (an id
    /// often ends the line): the same word makes the ``RequestID``. Nil for
    /// anything else, which ``smallIntegerEnd()`` reads.
    @inline(__always)
    private func shortDigits() -> (word: UInt64, digits: Int)? {
        let word: UInt64
        if position + 8 <= bytes.count {
            word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        } else if bytes.count >= 8 {
            // Zeros come in above the line's end: no digit, no `.`, no `e`.
            word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
                >> (UInt64(position + 8 - bytes.count) << 3)
        } else {
            return nil
        }
        let flags = Self.nonDigits(word)
        let digits = flags.trailingZeroBitCount >> 3
        guard digits > 0, digits < 8, digits == 1 || word & 0xFF != UInt64(UInt8(ascii: "0")) else { return nil }
        let bits = UInt64(digits) << 3
        switch UInt8(truncatingIfNeeded: word >> bits) {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default: return (word & ((1 << bits) &- 1), digits)
        }
    }

    /// `["new","old",…]`: option names; a repeated one counts once, as on the full path.
    private mutating func optionList() -> ObservationOptions? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var options: ObservationOptions = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return options }
        repeat {
            skipWhitespace()
            guard let name = plainString() else { return nil }
            if name.elementsEqual("new") {
                options.insert(.new)
            } else if name.elementsEqual("old") {
                options.insert(.old)
            } else if name.elementsEqual("initial") {
                options.insert(.initial)
            } else if name.elementsEqual("prior") {
                options.insert(.prior)
            } else {
                return nil
            }
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]")) ? options : nil
    }

    /// Any JSON value: a plain string, a small integer, `true`, `false` or
    /// `null` here; anything else by ``JSONReader`` (nesting counted from
    /// inside the request object).
    mutating func anyValue() -> JSONValue? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            let start = position
            if let text = plainString() { return .string(Self.string(text)) }
            if let string = shortEscapedString(from: start, resumingAt: position) { return .string(string) }
            return nonPlainString(from: start, resumingAt: position).map { .string($0) }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if let number = smallInteger() { return .number(number) }
        case UInt8(ascii: "t"):
            if consume(literal: "true") { return .bool(true) }
        case UInt8(ascii: "f"):
            if consume(literal: "false") { return .bool(false) }
        case UInt8(ascii: "n"):
            if consume(literal: "null") { return .null }
        default:
            break
        }
        return readValue()
    }

    private mutating func smallInteger() -> JSONNumber? {
        let start = position
        guard let end = smallIntegerEnd() else { return nil }
        position = end
        return JSONNumber(validatedLiteral: Self.string(UnsafeRawBufferPointer(rebasing: bytes[start..<end])))
    }

    /// Where `-?(0|[1-9][0-9]{0,17})` starting here ends, if a byte that
    /// cannot continue a number follows it: valid JSON, well inside a
    /// double's range. Anything else (fractions, exponents, long literals)
    /// is left to the full reader.
    @inline(__always)
    private func smallIntegerEnd() -> Int? {
        guard position < bytes.count else { return nil }
        var cursor = position
        if bytes[cursor] == UInt8(ascii: "-") { cursor += 1 }
        let digitsStart = cursor
        cursor = digitRunEnd(from: cursor)
        let digits = cursor - digitsStart
        guard digits > 0, digits <= 18, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { return nil }
        if cursor < bytes.count {
            switch bytes[cursor] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        return cursor
    }

    /// Where the run of ASCII digits from `start` ends; the first eight bytes
    /// told at once, for less than a byte loop takes.
    @inline(__always)
    private func digitRunEnd(from start: Int) -> Int {
        var cursor = start
        if start + 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            let flags = Self.nonDigits(word)
            if flags != 0 { return start + flags.trailingZeroBitCount >> 3 }
            cursor += 8
        }
        while cursor < bytes.count, bytes[cursor] &- UInt8(ascii: "0") < 10 { cursor += 1 }
        return cursor
    }

    /// Non-zero bits in each byte of `word` that is no ASCII digit, and maybe
    /// in bytes above the lowest such one, never below it.
    @inline(__always)
    private static func nonDigits(_ word: UInt64) -> UInt64 {
        // A digit's high nibble is 3, and stays 3 with 6 added; a carry
        // out of a byte comes only from one ≥ 0xFA, itself flagged, and
        // spreads upwards: the lowest flagged byte is the first non-digit.
        let highNibbles: UInt64 = 0xF0F0_F0F0_F0F0_F0F0, threes: UInt64 = 0x3030_3030_3030_3030
        return ((word & highNibbles) ^ threes) | (((word &+ 0x0606_0606_0606_0606) & highNibbles) ^ threes)
    }

    /// Consumes `literal` if the bytes spell it (what follows is checked by the caller).
    mutating func consume(literal: StaticString) -> Bool {
        let end = position + literal.utf8CodeUnitCount
        guard end <= bytes.count, UnsafeRawBufferPointer(rebasing: bytes[position..<end]).elementsEqual(literal) else {
            return false
        }
        position = end
        return true
    }

    private mutating func readValue() -> JSONValue? {
        var reader = JSONReader(UnsafeRawBufferPointer(rebasing: bytes[position...]),
                                maxDepth: RequestDecoder.maxDepth - 1)
        do throws(JSONError) {
            let value = try reader.readValue()
            position += reader.offset
            return value
        } catch {
            return nil
        }
    }

    /// A string, as bytes of the line when it is plain, else decoded; nil
    /// (position unchanged) when no string starts here, or a bad one does.
    @inline(__always)
    private mutating func stringText() -> JSONText? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position
        if let text = plainString() { return .plain(text) }
        return nonPlainString(from: start, resumingAt: position).map { .decoded($0) }
    }

    /// The string whose opening quote is at `start`, with escapes or
    /// non-ASCII text from `resume` on (where ``plainString()`` stopped), checked
    /// and decoded in place (``JSONStringBody``); nil (position at `start`)
    /// when it is bad, for the full reader to explain.
    private mutating func nonPlainString(from start: Int, resumingAt resume: Int) -> String? {
        guard resume > start, bytes[start] == UInt8(ascii: "\"") else {
            position = start
            return nil
        }
        if let string = simplyEscapedString(from: start, resumingAt: resume) { return string }
        var end = resume
        do throws(JSONError) {
            let firstEscape = try JSONStringBody.validate(bytes, from: &end)
            position = end
            return JSONStringBody.string(bytes, start + 1..<end - 1, firstEscape: firstEscape)
        } catch {
            position = start
            return nil
        }
    }

    /// The string whose opening quote is at `start`, when it is printable
    /// ASCII whose escapes are all two-character ones (`\/`, `\"`, `\n`…):
    /// checked, then decoded, with no error to carry (cheaper than
    /// ``JSONStringBody``'s general pass, docs/PERFORMANCE.md). Nil, position
    /// unchanged, for any other string.
    private mutating func simplyEscapedString(from start: Int, resumingAt resume: Int) -> String? {
        var cursor = resume
        var escapes = 0
        while true {
            guard cursor < bytes.count else { return nil }
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                guard cursor + 1 < bytes.count, JSONStringBody.simpleEscape(bytes[cursor + 1]) != nil else { return nil }
                escapes += 1
                cursor += 2
            } else if byte < 0x20 || byte >= 0x80 {
                return nil
            } else {
                cursor += 1
            }
        }
        let end = cursor
        position = end + 1
        return String(unsafeUninitializedCapacity: end - start - 1 - escapes) { buffer in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start + 1..<resume]))
            var written = resume - start - 1
            var index = resume
            while index < end {
                var byte = bytes[index]
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    byte = JSONStringBody.simpleEscape(bytes[index]) ?? byte
                }
                buffer[written] = byte
                written += 1
                index += 1
            }
            return written
        }
    }

    /// A value's string whose opening quote is at `start`, printable ASCII
    /// from `resume` on (where ``plainString()`` stopped) with two-character
    /// escapes, at most sixteen bytes decoded: checked and decoded in one pass
    /// into two words, which start as the sixteen bytes after the quote (the
    /// plain part already in place), cheaper than the calls down to
    /// ``simplyEscapedString(from:resumingAt:)`` and its second pass. Nil, position unchanged, for any other
    /// string or when fewer than sixteen bytes follow the quote. Out of line:
    /// inlined into ``anyValue()``, it cost every value more.
    @inline(never)
    private mutating func shortEscapedString(from start: Int, resumingAt resume: Int) -> String? {
        guard start + 17 <= bytes.count else { return nil }
        var words = (bytes.loadUnaligned(fromByteOffset: start + 1, as: UInt64.self),
                     bytes.loadUnaligned(fromByteOffset: start + 9, as: UInt64.self))
        let decodedEnd: (count: Int, quote: Int)? = withUnsafeMutableBytes(of: &words) { decoded in
            var written = resume - start - 1
            var cursor = resume
            while cursor < bytes.count {
                var byte = bytes[cursor]
                if byte == UInt8(ascii: "\"") { return (written, cursor) }
                if byte == UInt8(ascii: "\\") {
                    guard cursor + 1 < bytes.count, let escaped = JSONStringBody.simpleEscape(bytes[cursor + 1]) else {
                        return nil
                    }
                    byte = escaped
                    cursor += 2
                } else {
                    guard byte >= 0x20, byte < 0x80 else { return nil }
                    cursor += 1
                }
                guard written < 16 else { return nil }
                decoded[written] = byte
                written += 1
            }
            return nil
        }
        guard let (count, quote) = decodedEnd else { return nil }
        position = quote + 1
        return withUnsafeBytes(of: words) { Self.string(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// A string of printable ASCII without escapes, as the bytes between its
    /// quotes; nil for anything else, with position at the first byte that is
    /// not plain when a string starts here (unspecified otherwise).
    mutating func plainString() -> UnsafeRawBufferPointer? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = position
        let end = JSONStringScan.endOfPlainRun(in: bytes, from: start, asciiOnly: true)
        position = end
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return nil }
        position = end + 1
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    @inline(__always)
    mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Compact lines have no whitespace at all: one comparison tells; a
    /// lone space (`json.dumps` puts one after each `:` and `,`) takes two.
    @inline(__always)
    mutating func skipWhitespace() {
        guard position < bytes.count, bytes[position] <= 0x20 else { return }
        if bytes[position] == 0x20, position + 1 < bytes.count, bytes[position + 1] > 0x20 {
            position += 1
            return
        }
        skipWhitespaceRun()
    }

    private mutating func skipWhitespaceRun() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// A `String` of bytes known to be ASCII.
    static func string(_ ascii: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: ascii.count) { target in
            UnsafeMutableRawBufferPointer(target).copyMemory(from: ascii)
            return ascii.count
        }
    }
}

/// What kind of value comes next, judged from its first byte by ``JSONReader/peekKind()``.
public enum JSONTokenKind: Sendable, Equatable {
    case object, array, string, number, bool, null
}

/// A string or member name as the pull API read it, made into a `String`
/// only when it has to be.
public enum JSONText {
    /// Printable ASCII without escapes: the bytes between the quotes, valid
    /// as long as the reader's buffer is.
    case plain(UnsafeRawBufferPointer)
    /// Anything else, decoded.
    case decoded(String)

    /// The text as a `String`.
    public var string: String {
        switch self {
        case .plain(let bytes): String(decoding: bytes, as: UTF8.self)
        case .decoded(let string): string
        }
    }
}

/// A strict RFC 8259 pull reader over UTF-8 bytes.
///
/// Strict means: no comments, trailing commas, `NaN`/`Infinity`, leading zeros or
/// whitespace other than space, tab, LF and CR; strings must be valid UTF-8 with
/// no raw control characters, and `\u` escapes must pair surrogates. Member names
/// may not repeat within an object, nesting is bounded by `maxDepth`, and numbers
/// too large for a `Double` are rejected (their literal text is kept otherwise).
///
/// The reader walks the buffer by index without recursion or per-character
/// allocation: Foundation's decoder was an order of magnitude too slow for kvod's
/// request path. Use ``parse(_:maxDepth:)-swift.type.method`` for a whole document,
/// or the pull methods to read a top-level object member by member:
///
/// ```swift
/// var reader = JSONReader(buffer)
/// try reader.beginObject()
/// while let name = try reader.nextMember() {
///     switch name {
///     case "op": op = try reader.readString()
///     default: try reader.skipValue()
///     }
/// }
/// try reader.finish()
/// ```
///
/// The reader does not own its bytes: the caller keeps the memory alive and
/// unchanged for as long as the reader is used. After a method throws, the
/// reader's position is unspecified; discard it.
public struct JSONReader {
    // `bytes`, `position`, `lastStringWasPlainASCII`: internal, not
    // private, only for the string scanning in JSONReader+Strings.swift.
    let bytes: UnsafeRawBufferPointer
    /// The deepest nesting of arrays and objects accepted, pull-API objects included.
    ///
    /// Reading never recurses, but destroying a ``JSONValue`` does, one stack frame
    /// per level: keep this in the hundreds, not the hundreds of thousands.
    public let maxDepth: Int
    var position = 0
    private var depth = 0
    /// True between `nextMember()` returning a name and that member's value being read.
    private var valuePending = false
    /// The innermost object opened with `beginObject()` and not yet closed,
    /// and the ones around it, innermost last. Kept apart so that reading one
    /// flat object (a request) allocates nothing for them.
    private var level: PullLevel?
    private var outerLevels: [PullLevel] = []
    /// Member names seen so far in the open pull-API objects, for duplicate checks.
    private var memberNames: [MemberName] = []
    /// Whether the last string read was printable ASCII without escapes.
    var lastStringWasPlainASCII = false

    private struct MemberName {
        var name: String
        var isASCII: Bool
    }

    private struct PullLevel {
        var firstName: Int
        var hasMembers = false
        /// An array opened with ``beginArray()``: read with ``nextElement()``, not by names.
        var isArray = false
        /// Replaces the linear scan of `memberNames` once an object grows large,
        /// so a hostile request with many members can't make the check quadratic.
        var nameSet: Set<String>?
    }

    /// One open container while `parseValue` builds or skips a nested value.
    private struct Frame {
        var isObject: Bool
        var array: [JSONValue] = []
        var object = JSONObject()
    }

    /// Creates a reader over `bytes`, which must stay valid and unchanged while it is used.
    public init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 512) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// The byte offset of the next unread byte, for callers reporting their own errors.
    public var offset: Int { position }

    // MARK: Whole documents

    /// Parses exactly one JSON value with nothing but whitespace around it.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = 512) throws(JSONError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable {
            parseDocument(UnsafeRawBufferPointer($0), maxDepth: maxDepth)
        }
        return try (result ?? Array(bytes).withUnsafeBytes { parseDocument($0, maxDepth: maxDepth) }).get()
    }

    /// Parses exactly one JSON value, given as text, with nothing but whitespace around it.
    public static func parse(_ text: String, maxDepth: Int = 512) throws(JSONError) -> JSONValue {
        var text = text
        return try text.withUTF8 { parseDocument(UnsafeRawBufferPointer($0), maxDepth: maxDepth) }.get()
    }

    private static func parseDocument(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) -> Result<JSONValue, JSONError> {
        var reader = JSONReader(bytes, maxDepth: maxDepth)
        do throws(JSONError) {
            let value = try reader.readValue()
            try reader.finish()
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Pull API

    /// Consumes the `{` that opens an object, to be read with ``nextMember()``.
    ///
    /// May be called for a member's value too, to read a nested object the same way.
    /// The object counts toward `maxDepth`.
    public mutating func beginObject() throws(JSONError) {
        valuePending = false
        try expect(UInt8(ascii: "{"), describedAs: "'{'")
        try enter()
        if let outer = level { outerLevels.append(outer) }
        level = PullLevel(firstName: memberNames.count)
    }

    /// Consumes the `[` that opens an array, to be read with ``nextElement()``.
    ///
    /// May be called for a member's value or an element, to read a nested array
    /// the same way. The array counts toward `maxDepth`.
    public mutating func beginArray() throws(JSONError) {
        valuePending = false
        try expect(UInt8(ascii: "["), describedAs: "'['")
        try enter()
        if let outer = level { outerLevels.append(outer) }
        level = PullLevel(firstName: memberNames.count, isArray: true)
    }

    /// Whether another element follows, the reader then standing before it
    /// (to be read with any read method, or skipped by the next call); false
    /// once the closing `]` is consumed. Commas are handled here.
    public mutating func nextElement() throws(JSONError) -> Bool {
        guard let current = level, current.isArray else {
            throw JSONError("nextElement() called outside an array", at: position)
        }
        if valuePending { try skipValue() }
        skipWhitespace()
        guard position < bytes.count else { throw .unexpectedEnd(at: position) }
        let byte = bytes[position]
        if byte == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            level = outerLevels.popLast()
            return false
        }
        if current.hasMembers {
            guard byte == UInt8(ascii: ",") else { throw .unexpectedByte(byte, at: position, expecting: "',' or ']'") }
            position += 1
        }
        level!.hasMembers = true
        valuePending = true
        return true
    }

    /// Returns the next member's name, having consumed it and its `:`; or `nil`
    /// once the closing `}` is consumed. Commas are handled here.
    ///
    /// The reader itself rejects a name that repeats within this object, so
    /// callers need not track names. If the previous member's value was not read,
    /// it is skipped (and still validated).
    public mutating func nextMember() throws(JSONError) -> String? {
        guard try advanceToMemberName() else { return nil }
        let nameOffset = position
        let name = try parseString(materialize: true)
        try noteMemberName(name, at: nameOffset)
        try finishMemberName()
        return name
    }

    /// Like ``nextMember()``, but the name comes as ``JSONText`` (no `String`
    /// is made for a plain name) and a repeated name is **not** detected: the
    /// caller must check, as the request decoder does with a bit per known
    /// field. Within one object, use either this or ``nextMember()``.
    /// `nameOffset` is set to where the name starts, for error messages.
    public mutating func nextMemberText(nameOffset: inout Int) throws(JSONError) -> JSONText? {
        guard try advanceToMemberName() else { return nil }
        nameOffset = position
        let name = try parseStringText()
        try finishMemberName()
        return name
    }

    /// Consumes a comma if one is due and stops at the next name's quote
    /// (true), or consumes the closing `}` (false).
    private mutating func advanceToMemberName() throws(JSONError) -> Bool {
        guard let current = level, !current.isArray else {
            throw JSONError("nextMember() called outside an object", at: position)
        }
        if valuePending { try skipValue() }
        skipWhitespace()
        guard position < bytes.count else { throw .unexpectedEnd(at: position) }
        let byte = bytes[position]
        if byte == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            if current.firstName < memberNames.count { memberNames.removeSubrange(current.firstName...) }
            level = outerLevels.popLast()
            return false
        }
        if current.hasMembers {
            guard byte == UInt8(ascii: ",") else { throw .unexpectedByte(byte, at: position, expecting: "',' or '}'") }
            position += 1
            skipWhitespace()
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw unexpected("a member name") }
        return true
    }

    /// Consumes the `:` after a member name.
    private mutating func finishMemberName() throws(JSONError) {
        try expect(UInt8(ascii: ":"), describedAs: "':'")
        level!.hasMembers = true
        valuePending = true
    }

    /// Reads any value, with its nesting bounded by `maxDepth` counting from the current depth.
    public mutating func readValue() throws(JSONError) -> JSONValue {
        valuePending = false
        return try parseValue(build: true)
    }

    /// Reads a value that must be a string.
    public mutating func readString() throws(JSONError) -> String {
        valuePending = false
        guard let kind = peekKind() else { throw unexpected("a string") }
        guard kind == .string else { throw JSONError("expected a string, found \(kind)", at: position) }
        return try parseString(materialize: true)
    }

    /// Reads a value that must be a string, as ``JSONText``.
    public mutating func readStringText() throws(JSONError) -> JSONText {
        valuePending = false
        guard let kind = peekKind() else { throw unexpected("a string") }
        guard kind == .string else { throw JSONError("expected a string, found \(kind)", at: position) }
        return try parseStringText()
    }

    /// Validates and passes over one value without building it.
    public mutating func skipValue() throws(JSONError) {
        valuePending = false
        _ = try parseValue(build: false)
    }

    /// Skips whitespace and tells what kind of value starts next, or `nil` at the
    /// end of input or before a byte that cannot start a value. Judged from one
    /// byte only: the value may still turn out to be invalid.
    public mutating func peekKind() -> JSONTokenKind? {
        skipWhitespace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: return nil
        }
    }

    /// Checks that only whitespace remains and every object begun has been closed.
    public mutating func finish() throws(JSONError) {
        skipWhitespace()
        if position < bytes.count { throw unexpected("end of input") }
        if level != nil { throw .unexpectedEnd(at: position) }
    }

    // MARK: Values

    /// Reads one value iteratively, with an explicit stack of open containers, so
    /// even a huge `maxDepth` cannot overflow the thread's stack. When `build` is
    /// false, strings and numbers are validated but not materialised; member names
    /// still are, to catch duplicates.
    private mutating func parseValue(build: Bool) throws(JSONError) -> JSONValue {
        var stack: [Frame] = []
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw .unexpectedEnd(at: position) }
            var value: JSONValue
            switch bytes[position] {
            case UInt8(ascii: "{"):
                try enter()
                position += 1
                skipWhitespace()
                if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    depth -= 1
                    value = .object([:])
                } else {
                    // Room for a few members up front saves the 1-2-4 regrowth of both of
                    // OrderedDictionary's arrays, which a typical request's few members would pay.
                    stack.append(Frame(isObject: true, object: JSONObject(minimumCapacity: 4)))
                    try readMemberName(into: &stack[stack.count - 1].object)
                    continue
                }
            case UInt8(ascii: "["):
                try enter()
                position += 1
                skipWhitespace()
                if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    depth -= 1
                    value = .array([])
                } else {
                    stack.append(Frame(isObject: false))
                    continue
                }
            case UInt8(ascii: "\""):
                let string = try parseString(materialize: build)
                value = build ? .string(string) : .null
            case UInt8(ascii: "t"):
                try expectWord("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectWord("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectWord("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let literal = try parseNumber(build: build)
                value = build ? .number(JSONNumber(validatedLiteral: literal)) : .null
            default:
                throw unexpected("a value")
            }
            // Store the finished value in its container, then close every
            // container that ends right after it.
            while let top = stack.indices.last {
                let isObject = stack[top].isObject
                if build {
                    if isObject {
                        let last = stack[top].object.count - 1
                        stack[top].object.values[last] = value
                    } else {
                        stack[top].array.append(value)
                    }
                }
                skipWhitespace()
                guard position < bytes.count else { throw .unexpectedEnd(at: position) }
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: ",") {
                    if isObject {
                        skipWhitespace()
                        try readMemberName(into: &stack[top].object)
                    }
                    break
                }
                guard byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    position -= 1
                    throw unexpected(isObject ? "',' or '}'" : "',' or ']'")
                }
                depth -= 1
                let frame = stack.removeLast()
                value = isObject ? .object(frame.object) : .array(frame.array)
            }
            if stack.isEmpty { return value }
        }
    }

    /// Reads `"name":` and reserves the member's slot, rejecting a repeated name.
    ///
    /// Names are compared as Swift strings, i.e. by canonical equivalence, so
    /// `"é"` and `"e\u0301"` count as duplicates: a `JSONObject` could not keep both.
    private mutating func readMemberName(into object: inout JSONObject) throws(JSONError) {
        let nameOffset = position
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw unexpected("a member name") }
        let name = try parseString(materialize: true)
        if object.updateValue(.null, forKey: name) != nil { throw .duplicateMember(name, at: nameOffset) }
        try expect(UInt8(ascii: ":"), describedAs: "':'")
    }

    /// Records a pull-API member name: a linear scan while the object is small
    /// (the common request), a set once it is not.
    ///
    /// Two plain-ASCII names of different lengths cannot be equal, which skips
    /// most full comparisons. (Only when both are ASCII: Swift equates "K" and
    /// the Kelvin sign U+212A, for instance.)
    private mutating func noteMemberName(_ name: String, at nameOffset: Int) throws(JSONError) {
        if level!.nameSet != nil {
            guard level!.nameSet!.insert(name).inserted else { throw .duplicateMember(name, at: nameOffset) }
            return
        }
        let first = level!.firstName
        let isASCII = lastStringWasPlainASCII
        let length = name.utf8.count
        for index in first..<memberNames.count {
            let seen = memberNames[index]
            if isASCII && seen.isASCII && seen.name.utf8.count != length { continue }
            if seen.name == name { throw .duplicateMember(name, at: nameOffset) }
        }
        memberNames.append(MemberName(name: name, isASCII: isASCII))
        if memberNames.count - first > 16 {
            level!.nameSet = Set(memberNames[first...].lazy.map(\.name))
            memberNames.removeSubrange(first...)
        }
    }

    // MARK: Scalars

    /// Validates an RFC 8259 number and returns its literal (empty when not `build`,
    /// unless needed for the range check).
    private mutating func parseNumber(build: Bool) throws(JSONError) -> String {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        guard position < bytes.count else { throw .unexpectedEnd(at: position) }
        switch bytes[position] {
        case UInt8(ascii: "0"):
            position += 1
            if position < bytes.count && isDigit(bytes[position]) {
                throw .invalidNumber("leading zero", at: integerStart)
            }
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            skipDigits()
        default:
            throw .invalidNumber("expected a digit", at: position)
        }
        let integerDigits = position - integerStart
        if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
            position += 1
            try requireDigits(after: "'.'")
        }
        var hasExponent = false
        if position < bytes.count && bytes[position] | 0x20 == UInt8(ascii: "e") {
            hasExponent = true
            position += 1
            if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) {
                position += 1
            }
            try requireDigits(after: "exponent")
        }
        // Without an exponent, 308 integer digits always fit a Double (max ≈ 1.8e308);
        // only other literals pay for a conversion to check the range.
        let needsRangeCheck = hasExponent || integerDigits > 308
        guard build || needsRangeCheck else { return "" }
        let literal = makeString(start..<position)
        if needsRangeCheck {
            guard let double = Double(literal), double.isFinite else { throw .numberOutOfRange(at: start) }
        }
        return literal
    }

    private mutating func requireDigits(after what: String) throws(JSONError) {
        guard position < bytes.count else { throw .unexpectedEnd(at: position) }
        guard isDigit(bytes[position]) else { throw .invalidNumber("expected a digit after \(what)", at: position) }
        skipDigits()
    }

    @inline(__always)
    private mutating func skipDigits() {
        while position < bytes.count && isDigit(bytes[position]) { position += 1 }
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private mutating func expectWord(_ word: StaticString) throws(JSONError) {
        let count = word.utf8CodeUnitCount
        for index in 0..<count {
            guard position < bytes.count else { throw .unexpectedEnd(at: position) }
            guard bytes[position] == word.utf8Start[index] else { throw unexpected("'\(word)'") }
            position += 1
        }
    }

    // MARK: Helpers

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, describedAs name: String) throws(JSONError) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw unexpected(name) }
        position += 1
    }

    /// Opens a container, enforcing `maxDepth` before any work is done inside it.
    @inline(__always)
    private mutating func enter() throws(JSONError) {
        guard depth < maxDepth else { throw .tooDeep(maxDepth, at: position) }
        depth += 1
    }

    /// The error for the byte at `position` (or the end of input) not being `expected`.
    private func unexpected(_ expected: String) -> JSONError {
        guard position < bytes.count else { return .unexpectedEnd(at: position) }
        return .unexpectedByte(bytes[position], at: position, expecting: expected)
    }

    /// Makes a `String` from bytes already validated as UTF-8 (copied, then checked again by the stdlib).
    @inline(__always)
    func makeString(_ range: Range<Int>) -> String {
        let source = UnsafeRawBufferPointer(rebasing: bytes[range])
        return String(unsafeUninitializedCapacity: source.count) { target in
            UnsafeMutableRawBufferPointer(target).copyMemory(from: source)
            return source.count
        }
    }
}

/// The fast path of ``RequestDecoder``: one pass over a request of the usual
/// shape, straight into ``Fields``.
///
/// It takes a flat object whose member names are known fields written in
/// plain ASCII; `op`, `object` and `keyPath` plain ASCII strings; `options`
/// an array of option names; any other value is read by ``JSONReader``. On
/// anything else (an escape, a non-ASCII or unknown name, a repeat, bad JSON)
/// it gives up and returns nil, and the full reader decodes the line and
/// explains what is wrong with it: for every line, either both paths give the
/// same fields or the scanner gives none (tested in `RequestScannerTests`).
struct RequestScanner {
    private let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Reads the request's fields into `fields` (empty on entry); false when
    /// the line needs the full reader, and `fields` holds a part of it.
    /// (Filled in place: `Fields` is a dozen optional values, and copying it
    /// in and out of an optional cost a tenth of a decode.)
    static func scan(_ line: UnsafeRawBufferPointer, into fields: inout Fields) -> Bool {
        var scanner = RequestScanner(line)
        return scanner.scanObject(into: &fields)
    }

    private mutating func scanObject(into fields: inout Fields) -> Bool {
        var seen: UInt32 = 0
        guard consume(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if !consume(UInt8(ascii: "}")) {
            repeat {
                skipWhitespace()
                guard let name = plainString(), let field = Field(plain: name) else { return false }
                let bit = UInt32(1) << field.rawValue
                guard seen & bit == 0 else { return false }
                seen |= bit
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return false }
                skipWhitespace()
                guard read(field, into: &fields) else { return false }
                skipWhitespace()
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "}")) else { return false }
        }
        skipWhitespace()
        return position == bytes.count
    }

    /// Reads the value of `field`; false to give up.
    private mutating func read(_ field: Field, into fields: inout Fields) -> Bool {
        switch field {
        case .op:
            guard let name = plainString(), let code = OpCode(.plain(name)) else { return false }
            fields.opCode = code
        case .object:
            guard let name = plainString() else { return false }
            fields.object = .string(Self.string(name))
        case .keyPath:
            guard let path = plainString() else { return false }
            fields.keyPath = .string(Self.string(path))
        case .options:
            guard let options = optionList() else { return false }
            fields.parsedOptions = options
        default:
            guard let value = anyValue() else { return false }
            switch field {
            case .id: fields.id = value
            case .keyPaths: fields.keyPaths = value
            case .value: fields.value = value
            case .values: fields.values = value
            case .index: fields.index = value
            case .indexes: fields.indexes = value
            case .context: fields.context = value
            case .since: fields.since = value
            case .epoch: fields.epoch = value
            case .policy: fields.policy = value
            case .prefix: fields.prefix = value
            case .after: fields.after = value
            case .limit: fields.limit = value
            case .ifModSeq: fields.ifModSeq = value
            case .ifValue: fields.ifValue = value
            case .ops: fields.ops = value
            case .ephemeral: fields.ephemeral = value
            case .ttl: fields.ttl = value
            case .distinct: fields.distinct = value
            case .kinds: fields.kinds = value
            case .throttle: fields.throttle = value
            case .op, .object, .keyPath, .options: return false
            }
        }
        return true
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
            position = start
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

    /// `-?(0|[1-9][0-9]{0,17})` followed by a byte that cannot continue a
    /// number: valid JSON, well inside a double's range. Anything else
    /// (fractions, exponents, long literals) is left to the full reader.
    private mutating func smallInteger() -> JSONNumber? {
        let start = position
        var cursor = position
        if bytes[cursor] == UInt8(ascii: "-") { cursor += 1 }
        let digitsStart = cursor
        while cursor < bytes.count, bytes[cursor] &- UInt8(ascii: "0") < 10 { cursor += 1 }
        let digits = cursor - digitsStart
        guard digits > 0, digits <= 18, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { return nil }
        if cursor < bytes.count {
            switch bytes[cursor] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        position = cursor
        return JSONNumber(validatedLiteral: Self.string(UnsafeRawBufferPointer(rebasing: bytes[start..<cursor])))
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

    /// A string of printable ASCII without escapes, as the bytes between its
    /// quotes; nil (position unspecified) for anything else.
    mutating func plainString() -> UnsafeRawBufferPointer? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = position
        let end = JSONStringScan.endOfPlainRun(in: bytes, from: start, asciiOnly: true)
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

    @inline(__always)
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// A `String` of bytes known to be ASCII.
    private static func string(_ ascii: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: ascii.count) { target in
            UnsafeMutableRawBufferPointer(target).copyMemory(from: ascii)
            return ascii.count
        }
    }
}

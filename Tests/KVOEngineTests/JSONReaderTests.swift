import KVOEngine
import KVOValues
import Testing

/// The error `JSONReader.parse` throws for `text`, or nil if it accepts it.
private func rejection(_ text: String, maxDepth: Int = 512) -> JSONError? {
    rejection(Array(text.utf8), maxDepth: maxDepth)
}

private func rejection(_ bytes: [UInt8], maxDepth: Int = 512) -> JSONError? {
    do {
        _ = try JSONReader.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// Wraps raw bytes in quotes, to test what a string may contain.
private func quoted(_ bytes: [UInt8]) -> [UInt8] { [0x22] + bytes + [0x22] }

private func number(_ literal: String) -> JSONValue { .number(JSONNumber(validatedLiteral: literal)) }

@Suite struct JSONReaderTests {
    // MARK: Values and grammar

    @Test func readWhenDocumentHasEveryKindReturnsValuesInOrder() throws {
        let value = try JSONReader.parse(#" {"z":[null,true,false,0,-1.5e3,"x"],"a":{},"m":[]} "#)
        let expected: JSONValue = ["z": [nil, true, false, number("0"), number("-1.5e3"), "x"], "a": [:], "m": []]
        #expect(value == expected)
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(Array(members.keys) == ["z", "a", "m"])
    }

    @Test func readKeepsNumberLiteralsVerbatim() throws {
        for literal in ["-12.50E+03", "0", "-0", "0.0", "1e-2", "18446744073709551616", "-123456789012345678901234567890"] {
            #expect(try JSONReader.parse(literal) == number(literal))
        }
    }

    @Test func readWhenNumberOverflowsDoubleThrows() {
        let tooBig = ["1e400", "-1e400", "1.7976931348623159e308", "[0,1E+99999]", String(repeating: "9", count: 309)]
        for text in tooBig {
            #expect(rejection(text)?.message.hasPrefix("number out of range") == true, "\(text)")
        }
        #expect(rejection("[0,1e400]")?.offset == 3)
        #expect(rejection(String(repeating: "9", count: 308)) == nil)
        #expect(rejection("1.7976931348623157e308") == nil)
    }

    @Test func readWhenNumberUnderflowsAcceptsIt() {
        for text in ["1e-400", "-1e-400", "0e999", "4.9e-324", "1e-99999999999999999999"] {
            #expect(rejection(text) == nil, "\(text)")
        }
    }

    @Test func readWhenNumberHasLeadingZeroThrows() {
        for text in ["01", "-01", "00", "[00]", "0123", "-00.5"] {
            #expect(rejection(text)?.message.contains("leading zero") == true, "\(text)")
        }
        for text in ["0", "-0", "0.5", "0e1", "-0.0E-0", "10", "[0,0]"] {
            #expect(rejection(text) == nil, "\(text)")
        }
    }

    @Test func readWhenNumberGrammarIsBrokenThrows() {
        for text in ["-", "+1", ".5", "1.", "1.e3", "1e", "1e+", "1E-", "-a", "1..2", "0x10", "1_000", "1.5.2", "- 1", "[1e]"] {
            #expect(rejection(text) != nil, "\(text)")
        }
    }

    @Test func readWhenInputIsNaNOrInfinityThrows() {
        for text in ["NaN", "nan", "Infinity", "-Infinity", "[1,NaN]", "inf"] {
            #expect(rejection(text) != nil, "\(text)")
        }
    }

    @Test func readWhenContainerHasTrailingCommaThrows() {
        for text in ["[1,]", "[,]", "[1,,2]", "[,1]", #"{"a":1,}"#, "{,}", #"{"a":1,,"b":2}"#] {
            #expect(rejection(text) != nil, "\(text)")
        }
        #expect(rejection("[1,]") == JSONError("unexpected byte 0x5D (']'), expected a value", at: 3))
    }

    @Test func readWhenInputHasCommentThrows() {
        for text in ["// c\n1", "/* c */1", "[1/*c*/]", "1 # c", "1 // c"] {
            #expect(rejection(text) != nil, "\(text)")
        }
    }

    @Test func readWhenWhitespaceIsNotOneOfTheFourThrows() {
        #expect(rejection(" \t\n\r[ \t\n\r1 \t\n\r] \t\n\r") == nil)
        for bytes: [UInt8] in [[0x0B, 0x31], [0x0C, 0x31], [0xC2, 0xA0, 0x31], [0x31, 0xE2, 0x80, 0xA8], [0xEF, 0xBB, 0xBF, 0x31]] {
            #expect(rejection(bytes) != nil, "\(bytes)")
        }
    }

    @Test func readWhenNulIsOutsideStringThrows() {
        #expect(rejection([0x20, 0x00]) == JSONError("unexpected byte 0x00, expected a value", at: 1))
        for bytes: [UInt8] in [[0x00], [0x31, 0x00], [0x5B, 0x00, 0x5D], [0x5B, 0x31, 0x00, 0x5D], [0x7B, 0x00, 0x7D]] {
            #expect(rejection(bytes) != nil, "\(bytes)")
        }
    }

    @Test func readWhenDocumentHasTrailingDataThrows() {
        for text in ["1 2", "[] []", "{}x", "nullx", "true false", #""a""b""#, "]", "}"] {
            #expect(rejection(text) != nil, "\(text)")
        }
        #expect(rejection("1 2") == JSONError("unexpected byte 0x32 ('2'), expected end of input", at: 2))
    }

    @Test func readWhenDocumentIsEmptyOrTruncatedThrows() {
        for text in ["", "   ", "[", "[1", "{", #"{"a""#, #"{"a":"#, #"{"a":1"#, "tru", "nul", "fals", "-"] {
            #expect(rejection(text)?.message.hasPrefix("unexpected end of input") == true, "\(text)")
        }
    }

    @Test func readWhenMemberSyntaxIsBrokenThrows() {
        for text in [#"{"a"1}"#, "{a:1}", #"{"a":}"#, "{'a':1}", #"{"a":1 "b":2}"#, "{1:2}", #"{"a"::1}"#, #"["a":1]"#] {
            #expect(rejection(text) != nil, "\(text)")
        }
    }

    // MARK: Strings

    @Test func readWhenStringHasControlCharacterThrows() throws {
        for byte: UInt8 in 0..<0x20 {
            let error = rejection(quoted([0x61, byte]))
            #expect(error?.message.hasPrefix("unescaped control character") == true, "\(byte)")
            #expect(error?.offset == 2)
        }
        #expect(try JSONReader.parse(quoted([0x7F])) == .string("\u{7F}"))
    }

    @Test func readWhenStringHasInvalidUTF8Throws() {
        let invalid: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF],  // stray continuation, overlong 2-byte
            [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],  // overlongs
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // UTF-16 surrogates encoded in UTF-8
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8], [0xFE], [0xFF],  // beyond U+10FFFF
            [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3, 0x41], [0xE2, 0x41, 0xAC],  // truncated
        ]
        for sequence in invalid {
            #expect(rejection(quoted([0x61] + sequence)) == JSONError("invalid UTF-8 in string", at: 2), "\(sequence)")
        }
        #expect(rejection([0x22, 0xE2, 0x82]) == JSONError("invalid UTF-8 in string", at: 1))
    }

    @Test func readWhenStringHasValidUTF8AcceptsIt() throws {
        let valid: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sequence in valid {
            #expect(try JSONReader.parse(quoted(sequence)) == .string(String(decoding: sequence, as: UTF8.self)))
        }
        #expect(try JSONReader.parse(#"["é€😀", "plain", "mixed é \n"]"#) == ["é€😀", "plain", "mixed é \n"])
    }

    @Test func readWhenStringHasEscapesDecodesThem() throws {
        #expect(try JSONReader.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try JSONReader.parse(#""\u0041\u00e9\u20AC\ud83d\uDE00\u0000""#) == .string("Aé€😀\u{0}"))
        #expect(try JSONReader.parse(#""a\nb é \u00e9 c""#) == .string("a\nb é é c"))
    }

    @Test func readWhenStringHasLoneSurrogateThrows() {
        for text in [#""\ud800""#, #""\udc00""#, #""\ud800x""#, #""\ud800\u0041""#, #""\ud800\ud800""#, #""\udfff\ud800""#, #""\uDBFF\n""#] {
            #expect(rejection(text)?.message.hasPrefix("lone surrogate escape") == true, "\(text)")
        }
        #expect(rejection(#"["\ud800"]"#) == JSONError(#"lone surrogate escape \uD800 in string"#, at: 2))
    }

    @Test func readWhenEscapeIsInvalidThrows() {
        for text in [#""\x""#, #""\'""#, #""\u12""#, #""\u12g4""#, #""\U0041""#, #""\a""#, #""\ud800\u12""#, "\"\\\u{0}\""] {
            #expect(rejection(text)?.message.hasPrefix("invalid escape sequence") == true, "\(text)")
        }
        #expect(rejection(#""\"#) != nil)
        #expect(rejection(#""\u"#) != nil)
    }

    @Test func readWhenStringIsUnterminatedThrows() {
        for text in [#""abc"#, #""ab\""#, #"["a]"#, #""é"#] {
            #expect(rejection(text)?.message.hasPrefix("unexpected end of input") == true, "\(text)")
        }
    }

    // MARK: Depth and duplicates

    @Test func readWhenNestingExceedsMaxDepthThrows() {
        let fine = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(rejection(fine) == nil)
        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(rejection(deep) == JSONError("nesting deeper than 512", at: 512))
        let objects = String(repeating: #"{"a":"#, count: 513) + "1" + String(repeating: "}", count: 513)
        #expect(rejection(objects)?.message.hasPrefix("nesting deeper than 512") == true)
        #expect(rejection("[[1]]", maxDepth: 2) == nil)
        #expect(rejection(#"[{"a":[]}]"#, maxDepth: 2)?.message.hasPrefix("nesting deeper than 2") == true)
        #expect(rejection("[]", maxDepth: 0) != nil)
        #expect(rejection("1", maxDepth: 0) == nil)
    }

    @Test func readWhenNestingIs100000DeepThrowsQuickly() {
        let clock = ContinuousClock()
        let start = clock.now
        #expect(rejection([UInt8](repeating: 0x5B, count: 100_000))?.message.hasPrefix("nesting deeper") == true)
        #expect(rejection(String(repeating: #"{"a":"#, count: 100_000))?.message.hasPrefix("nesting deeper") == true)
        #expect(clock.now - start < .seconds(5))
    }

    @Test func skipDoesNotRecurseEvenWithAHugeMaxDepth() {
        // The reader keeps its own stack, so depth is bounded by maxDepth, not by the
        // thread's stack. (Skipped, not built: destroying a 200,000-deep JSONValue
        // would itself recurse, which is why maxDepth should stay modest.)
        func skip(_ bytes: [UInt8]) -> JSONError? {
            bytes.withUnsafeBytes { raw in
                var reader = JSONReader(raw, maxDepth: 1_000_000)
                do throws(JSONError) {
                    try reader.skipValue()
                    try reader.finish()
                    return nil
                } catch {
                    return error
                }
            }
        }
        let deep = [UInt8](repeating: 0x5B, count: 200_000) + [UInt8](repeating: 0x5D, count: 200_000)
        #expect(skip(deep) == nil)
        #expect(skip(Array(deep.dropLast()))?.message.hasPrefix("unexpected end of input") == true)
    }

    @Test func readWhenObjectRepeatsMemberThrows() {
        #expect(rejection(#"{"a":1,"a":2}"#) == JSONError(#"duplicate member "a""#, at: 7))
        for text in [#"{"x":{"b":1,"b":[]}}"#, #"{"a":1,"\u0061":2}"#, #"[{"k":1,"j":2,"k":3}]"#, #"{"é":1,"e\u0301":2}"#] {
            #expect(rejection(text)?.message.hasPrefix("duplicate member") == true, "\(text)")
        }
        for text in [#"[{"a":1},{"a":2}]"#, #"{"a":{"a":1}}"#, #"{"a":1,"A":2,"a ":3}"#] {
            #expect(rejection(text) == nil, "\(text)")
        }
    }

    // MARK: Entry points

    @Test func parseAcceptsAnyCollectionOfBytes() throws {
        let bytes = Array(#"x[1,"é"]"#.utf8)
        #expect(try JSONReader.parse(bytes[1...]) == [number("1"), "é"])
        #expect(try JSONReader.parse(bytes.dropFirst().lazy.map { $0 }) == [number("1"), "é"])
        #expect(try JSONReader.parse(#"[1,"é"]"#.utf8) == [number("1"), "é"])
    }

    @Test func errorDescriptionIsItsMessage() {
        let error = JSONError("nesting deeper than 512", at: 40)
        #expect(error.description == "nesting deeper than 512 at byte 40")
        #expect(error.offset == 40)
        #expect(JSONError(message: "custom", offset: 3).description == "custom")
    }
}

/// Runs `body` on a reader over `text`'s bytes, kept alive for the duration.
private func pull<T>(
    _ text: String, maxDepth: Int = 512, _ body: (inout JSONReader) throws(JSONError) -> T
) -> Result<T, JSONError> {
    Array(text.utf8).withUnsafeBytes { raw in
        var reader = JSONReader(raw, maxDepth: maxDepth)
        do throws(JSONError) {
            return .success(try body(&reader))
        } catch {
            return .failure(error)
        }
    }
}

/// Reads a top-level object member by member, as the request decoder does.
private func members(_ text: String, maxDepth: Int = 512) -> Result<[String: JSONValue], JSONError> {
    pull(text, maxDepth: maxDepth) { (reader: inout JSONReader) throws(JSONError) in
        var result: [String: JSONValue] = [:]
        try reader.beginObject()
        while let name = try reader.nextMember() { result[name] = try reader.readValue() }
        try reader.finish()
        return result
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

@Suite struct JSONPullReaderTests {
    @Test func pullReadsMembersInOrderWithEachReadMethod() throws {
        let text = #" {"op":"get", "id":7,"skip":[1,{"x":"\u00e9"}],"s":"v\n","last":{}} "#
        let log = try pull(text) { (reader: inout JSONReader) throws(JSONError) in
            var log: [String] = []
            try reader.beginObject()
            while let name = try reader.nextMember() {
                switch name {
                case "op", "s": log.append("\(name)=\(try reader.readString())")
                case "skip": try reader.skipValue(); log.append("skip")
                default: log.append("\(name)=\(try reader.readValue().jsonString)")
                }
            }
            try reader.finish()
            return log
        }.get()
        #expect(log == ["op=get", "id=7", "skip", "s=v\n", "last={}"])
    }

    @Test func pullWhenObjectIsEmptyReturnsNoMembers() throws {
        #expect(try members(" { } ").get().isEmpty)
    }

    @Test func pullWhenTopLevelObjectRepeatsMemberThrows() {
        #expect(members(#"{"op":"a","op":"b"}"#).failure == JSONError(#"duplicate member "op""#, at: 10))
        // Past 16 members the reader switches from a linear scan to a set; both must catch repeats.
        let many = (0..<40).map { #""m\#($0)":\#($0)"# }.joined(separator: ",")
        #expect((try? members("{\(many)}").get().count) == 40)
        #expect(members(#"{\#(many),"m0":1}"#).failure?.message.hasPrefix(#"duplicate member "m0""#) == true)
        #expect(members(#"{\#(many),"m39":1}"#).failure?.message.hasPrefix(#"duplicate member "m39""#) == true)
    }

    @Test func pullWhenNamesAreCanonicallyEquivalentThrows() {
        // Swift equates "K" with the Kelvin sign U+212A: the ASCII length shortcut must not hide that.
        #expect(members(#"{"K":1,"\u212A":2}"#).failure?.message.hasPrefix("duplicate member") == true)
        #expect(members(#"{"\u212A":1,"K":2}"#).failure?.message.hasPrefix("duplicate member") == true)
        #expect(members(#"{"é":1,"e\u0301":2}"#).failure?.message.hasPrefix("duplicate member") == true)
        #expect(members(#"{"ab":1,"ba":2,"a":3,"abc":4}"#).failure == nil)
    }

    @Test func pullWhenNestedObjectsReuseNamesAccepts() throws {
        let names = try pull(#"{"a":{"a":1,"b":2},"b":{"a":3}}"#) { (reader: inout JSONReader) throws(JSONError) in
            var names: [String] = []
            try reader.beginObject()
            while let outer = try reader.nextMember() {
                names.append(outer)
                try reader.beginObject()
                while let inner = try reader.nextMember() {
                    names.append(inner)
                    try reader.skipValue()
                }
            }
            try reader.finish()
            return names
        }.get()
        #expect(names == ["a", "a", "b", "b", "a"])
        let nestedDuplicate = pull(#"{"a":{"x":1,"x":2}}"#) { (reader: inout JSONReader) throws(JSONError) in
            try reader.beginObject()
            _ = try reader.nextMember()
            try reader.beginObject()
            while try reader.nextMember() != nil {}
        }
        #expect(nestedDuplicate.failure?.message.hasPrefix(#"duplicate member "x""#) == true)
    }

    @Test func pullWhenValueIsNotReadSkipsIt() throws {
        let names = try pull(#"{"a":[1,2],"b":"x","c":null}"#) { (reader: inout JSONReader) throws(JSONError) in
            var names: [String] = []
            try reader.beginObject()
            while let name = try reader.nextMember() { names.append(name) }
            try reader.finish()
            return names
        }.get()
        #expect(names == ["a", "b", "c"])
    }

    @Test func pullWhenSkippedValueIsInvalidThrows() {
        for text in [#"{"a":[1,],"b":1}"#, #"{"a":{"x":1,"x":2}}"#, #"{"a":"\ud800"}"#, #"{"a":01}"#, #"{"a":1e400}"#] {
            let result = pull(text) { (reader: inout JSONReader) throws(JSONError) in
                try reader.beginObject()
                while try reader.nextMember() != nil { try reader.skipValue() }
            }
            #expect(result.failure != nil, "\(text)")
        }
    }

    @Test func pullWhenObjectSyntaxIsBrokenThrows() {
        for text in [#"{"a":1,}"#, #"{,"a":1}"#, #"{"a":1 "b":2}"#, #"{"a" 1}"#, #"{"a":1"#, "[1]", "", #"{"a":1}x"#, "{a:1}"] {
            #expect(members(text).failure != nil, "\(text)")
        }
        #expect(members(#"{"a":1,}"#).failure == JSONError("unexpected byte 0x7D ('}'), expected a member name", at: 7))
    }

    @Test func pullReadStringWhenValueIsNotStringThrows() {
        let result = pull(#"{"op":42}"#) { (reader: inout JSONReader) throws(JSONError) in
            try reader.beginObject()
            _ = try reader.nextMember()
            return try reader.readString()
        }
        #expect(result.failure == JSONError("expected a string, found number", at: 6))
    }

    @Test func pullFinishWhenObjectIsNotClosedThrows() {
        let result = pull(#"{"a":1}"#) { (reader: inout JSONReader) throws(JSONError) in
            try reader.beginObject()
            _ = try reader.nextMember()
            _ = try reader.readValue()
            try reader.finish()
        }
        #expect(result.failure != nil)
    }

    @Test func pullDepthCountsOpenObjects() {
        #expect(members(#"{"a":{"b":1}}"#, maxDepth: 2).failure == nil)
        #expect(members(#"{"a":{"b":[1]}}"#, maxDepth: 2).failure?.message.hasPrefix("nesting deeper than 2") == true)
        #expect(members("{}", maxDepth: 0).failure?.message.hasPrefix("nesting deeper than 0") == true)
    }

    @Test func pullPeekKindReportsTheNextValue() throws {
        let kinds = try pull(#"{"a":{},"b":[],"c":"","d":-1,"e":true,"f":false,"g":null}"#) {
            (reader: inout JSONReader) throws(JSONError) in
            var kinds: [JSONTokenKind?] = []
            try reader.beginObject()
            while try reader.nextMember() != nil {
                kinds.append(reader.peekKind())
                try reader.skipValue()
            }
            kinds.append(reader.peekKind())
            return kinds
        }.get()
        #expect(kinds == [.object, .array, .string, .number, .bool, .bool, .null, nil])
    }

    @Test func pullOffsetTracksPosition() throws {
        let offsets = try pull(#"  {"a":1}  "#) { (reader: inout JSONReader) throws(JSONError) in
            var offsets = [reader.offset]
            try reader.beginObject()
            offsets.append(reader.offset)
            _ = try reader.nextMember()
            offsets.append(reader.offset)
            _ = try reader.nextMember()
            try reader.finish()
            offsets.append(reader.offset)
            return offsets
        }.get()
        #expect(offsets == [0, 3, 7, 11])
    }
}

@Suite struct JSONPullReaderArrayTests {
    @Test func pullReadsElementsInOrderSkippingThoseNotRead() throws {
        let text = #"{"a":[ 1, {"b":[]}, "s" , [2,[3]], null ],"c":[]}"#
        let log = try pull(text) { (reader: inout JSONReader) throws(JSONError) in
            var log: [String] = []
            try reader.beginObject()
            while let name = try reader.nextMember() {
                try reader.beginArray()
                var index = 0
                while try reader.nextElement() {
                    defer { index += 1 }
                    if index == 1 { continue }  // not read: skipped by the next call
                    if index == 3 {
                        try reader.beginArray()
                        while try reader.nextElement() { log.append("\(name)[3][]=\(try reader.readValue().jsonString)") }
                        continue
                    }
                    log.append("\(name)[\(index)]=\(try reader.readValue().jsonString)")
                }
                log.append("\(name) ends")
            }
            try reader.finish()
            return log
        }.get()
        #expect(log == ["a[0]=1", "a[2]=\"s\"", "a[3][]=2", "a[3][]=[3]", "a[4]=null", "a ends", "c ends"])
    }

    @Test func pullRefusesABrokenArrayAndNamesOutsideObjects() {
        let elements = { (reader: inout JSONReader) throws(JSONError) -> Int in
            var count = 0
            try reader.beginArray()
            while try reader.nextElement() { count += 1 }
            try reader.finish()
            return count
        }
        #expect(pull("[1,2,3]", elements) == .success(3))
        #expect(pull("[]", elements) == .success(0))
        for text in ["[1,]", "[1 2]", "[1,2", "[,1]", "{}", "[1]]"] {
            #expect(pull(text, elements).failure != nil, "\(text)")
        }
        #expect(pull("[[[1]]]", maxDepth: 2, elements).failure != nil)
        let nameInArray = pull(#"[{"a":1}]"#) { (reader: inout JSONReader) throws(JSONError) in
            try reader.beginArray()
            _ = try reader.nextMember()
        }
        #expect(nameInArray.failure != nil)
        let elementInObject = pull(#"{"a":1}"#) { (reader: inout JSONReader) throws(JSONError) in
            try reader.beginObject()
            _ = try reader.nextElement()
        }
        #expect(elementInObject.failure != nil)
    }
}

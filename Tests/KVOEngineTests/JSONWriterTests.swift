import KVOEngine
import KVOValues
import Testing

private func written(_ value: JSONValue) -> String { value.jsonString }

private func writtenString(_ string: String) -> String {
    var buffer: [UInt8] = []
    JSONWriter.writeString(string, into: &buffer)
    return String(decoding: buffer, as: UTF8.self)
}

@Suite struct JSONWriterTests {
    @Test func writeWhenValueIsScalarProducesItsLiteral() {
        #expect(written(nil) == "null")
        #expect(written(true) == "true")
        #expect(written(false) == "false")
        #expect(written(42) == "42")
        #expect(written(-7) == "-7")
        #expect(written("hi") == #""hi""#)
    }

    @Test func writeProducesCompactOutputWithMembersInStoredOrder() {
        let value: JSONValue = ["z": 1, "a": [1, nil, [true]], "m": [:], "e": [], "s": "x"]
        #expect(written(value) == #"{"z":1,"a":[1,null,[true]],"m":{},"e":[],"s":"x"}"#)
    }

    @Test func writeNumberKeepsItsLiteral() {
        for literal in ["1.50e+10", "-0", "18446744073709551616", "0.000001", "1E-7"] {
            #expect(written(.number(JSONNumber(validatedLiteral: literal))) == literal)
        }
        var buffer: [UInt8] = []
        JSONWriter.writeNumber(Int.min, into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "-9223372036854775808")
    }

    @Test func writeStringEscapesQuoteAndBackslash() {
        #expect(writtenString(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(writtenString(#"""#) == #""\"""#)
        #expect(writtenString(#"\\"#) == #""\\\\""#)
    }

    @Test func writeStringUsesShortEscapesForCommonControlCharacters() {
        #expect(writtenString("\n\r\t\u{8}\u{C}") == #""\n\r\t\b\f""#)
    }

    @Test func writeStringEscapesOtherControlCharactersAsU00XX() {
        #expect(writtenString("\u{0}") == #""\u0000""#)
        #expect(writtenString("a\u{1}b\u{B}c\u{1F}") == #""a\u0001b\u000bc\u001f""#)
    }

    @Test func writeStringEscapesEveryControlCharacterAndNothingElseBelow0x80() throws {
        for scalar in 0..<0x80 {
            let string = String(Character(Unicode.Scalar(UInt8(scalar))))
            let text = writtenString(string)
            let mustEscape = scalar < 0x20 || scalar == 0x22 || scalar == 0x5C
            #expect(text.utf8.count == (mustEscape ? (text.contains("u00") ? 8 : 4) : 3), "\(scalar)")
            #expect(try JSONReader.parse(text) == .string(string), "\(scalar)")
        }
    }

    @Test func writeStringEmitsNonASCIIAsUTF8() {
        let string = "é€😀\u{2028}\u{7F}/𝄞e\u{301}"
        var buffer: [UInt8] = []
        JSONWriter.writeString(string, into: &buffer)
        #expect(buffer == [0x22] + Array(string.utf8) + [0x22])
    }

    @Test func writeStringHandlesEmptyAndLongStrings() {
        #expect(writtenString("") == #""""#)
        let long = String(repeating: "abc\"é\n", count: 1000)
        #expect(writtenString(long) == "\"" + String(repeating: #"abc\"é\n"#, count: 1000) + "\"")
    }

    @Test func writeStringHandlesStringsMadeFromSubstrings() {
        let base = "xx\"é\u{1}yy"
        let middle = String(base.dropFirst(2).dropLast(2))
        #expect(writtenString(middle) == #""\"é\u0001""#)
    }

    @Test func writeAppendsToExistingBuffer() {
        var buffer = Array("prefix:".utf8)
        JSONWriter.write(["a": [1, "b"]], into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:{"a":[1,"b"]}"#)
    }

    @Test func jsonStringMatchesJsonBytes() {
        let value: JSONValue = ["k\u{0}": ["é", true, nil]]
        #expect(value.jsonString == String(decoding: value.jsonBytes, as: UTF8.self))
        #expect(value.jsonString == #"{"k\u0000":["é",true,null]}"#)
    }

    @Test func writeThenReadRoundTripsMemberNamesNeedingEscapes() throws {
        let value: JSONValue = ["\"": 1, "\\": 2, "\n": 3, "\u{1F}": 4, "😀": 5, "": 6]
        #expect(try JSONReader.parse(value.jsonBytes) == value)
    }
}

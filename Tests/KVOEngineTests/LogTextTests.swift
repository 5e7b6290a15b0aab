import KVOEngine
import Testing

@Suite struct LogTextTests {
    @Test func quotedEscapesQuotesBackslashesAndControlCharacters() {
        #expect(LogText.quoted("person/1") == #""person/1""#)
        #expect(LogText.quoted("a\"b\\c\nd\u{1b}[31m") == #""a\"b\\c\nd\u001b[31m""#)
        #expect(LogText.quoted("é") == "\"é\"")
    }

    @Test func escapingControlCharactersLeavesOneLine() {
        #expect(LogText.escapingControlCharacters("plain é") == "plain é")
        let forged = "x\n2026-01-01T00:00:00+0000 critical kvod: [kvod] forged\r\u{7f}\u{85}\t"
        let escaped = LogText.escapingControlCharacters(forged)
        #expect(escaped == #"x\n2026-01-01T00:00:00+0000 critical kvod: [kvod] forged\r\u{7f}\u{85}\t"#)
        #expect(!escaped.contains("\n") && !escaped.contains("\r"))
    }
}

import KVOValues
import Testing
@testable import KVOEngine

/// A frame as a value that can be compared: the line copied out, or too large.
private enum Framed: Equatable, CustomStringConvertible {
    case line(String)
    case tooLarge

    var description: String {
        switch self {
        case .line(let text): "line(\(text.debugDescription))"
        case .tooLarge: "tooLarge"
        }
    }
}

extension LineFramer {
    /// Feeds `bytes`; returns the frames they complete.
    fileprivate mutating func frames(_ bytes: [UInt8]) -> [Framed] {
        var frames: [Framed] = []
        bytes.withUnsafeBytes { buffer in
            feed(buffer) { frame in
                switch frame {
                case .line(let line): frames.append(.line(String(decoding: line, as: UTF8.self)))
                case .tooLarge: frames.append(.tooLarge)
                }
            }
        }
        return frames
    }

    fileprivate mutating func frames(_ text: String) -> [Framed] { frames(Array(text.utf8)) }
}

@Suite struct LineFramerTests {
    @Test func feedOneByteAtATimeYieldsEachLineWhenItEnds() {
        var framer = LineFramer(maxLineBytes: 64)
        let text = "{\"op\":\"ping\"}\n{\"op\":\"info\"}\r\n\nabc\n"
        var frames: [Framed] = []
        for byte in text.utf8 {
            let got = framer.frames([byte])
            if byte != UInt8(ascii: "\n") { #expect(got.isEmpty) }
            frames += got
        }
        #expect(frames == [.line(#"{"op":"ping"}"#), .line(#"{"op":"info"}"#), .line("abc")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedWhenLineEndsWithCRLFDropsTheCR() {
        var framer = LineFramer(maxLineBytes: 64)
        #expect(framer.frames("a\r\nb\r\n") == [.line("a"), .line("b")])
        // Only the one before the newline: others are part of the line.
        #expect(framer.frames("\rc\r\r\n") == [.line("\rc\r")])
        // A CR and its LF in different chunks.
        #expect(framer.frames("d\r").isEmpty)
        #expect(framer.frames("\n") == [.line("d")])
    }

    @Test func feedSkipsEmptyLines() {
        var framer = LineFramer(maxLineBytes: 64)
        #expect(framer.frames("\n\n\r\n\n").isEmpty)
        #expect(framer.frames("a\n\n\r\nb\n") == [.line("a"), .line("b")])
        #expect(framer.frames("\r").isEmpty)
        #expect(framer.frames("\n").isEmpty)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedSkipsLinesOfOnlyWhitespace() {
        var framer = LineFramer(maxLineBytes: 64)
        #expect(framer.frames("  \n\t\n \t \r\n").isEmpty)
        #expect(framer.frames("a\n \n b\n") == [.line("a"), .line(" b")])
    }

    @Test func feedWhenChunkHoldsManyLinesYieldsEachInOrder() {
        var framer = LineFramer(maxLineBytes: 16)
        let lines = (0..<1_000).map { "line \($0)" }
        let frames = framer.frames(lines.joined(separator: "\n") + "\n")
        #expect(frames == lines.map(Framed.line))
    }

    @Test func feedWhenLineSplitAcrossChunksJoinsIt() {
        var framer = LineFramer(maxLineBytes: 64)
        #expect(framer.frames("first\n{\"op\"").asLines == ["first"])
        #expect(framer.bufferedByteCount == 5)
        #expect(framer.frames(":\"pi").isEmpty)
        #expect(framer.bufferedByteCount == 9)
        #expect(framer.frames("ng\"}\nnext") == [.line(#"{"op":"ping"}"#)])
        #expect(framer.bufferedByteCount == 4)
        #expect(framer.frames("\n") == [.line("next")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedWhenLineExactlyMaxBytesYieldsIt() {
        let max = 10
        let exact = String(repeating: "x", count: max)
        var whole = LineFramer(maxLineBytes: max)
        #expect(whole.frames(exact + "\n") == [.line(exact)])
        var split = LineFramer(maxLineBytes: max)
        #expect(split.frames(String(exact.prefix(4))).isEmpty)
        #expect(split.frames(String(exact.dropFirst(4))).isEmpty)
        #expect(split.bufferedByteCount == max)
        #expect(split.frames("\n") == [.line(exact)])
    }

    /// `\r\n` is a terminator (docs/PROTOCOL.md): its `\r` is not content and
    /// does not count toward the limit, however the bytes are split.
    @Test func feedWhenLineOfMaxBytesEndsWithCRLFYieldsIt() {
        let max = 10
        let exact = String(repeating: "x", count: max)
        var whole = LineFramer(maxLineBytes: max)
        #expect(whole.frames(exact + "\r\n") == [.line(exact)])
        // The content first, then the CR, then the LF: a held CR is not yet over.
        var split = LineFramer(maxLineBytes: max)
        #expect(split.frames(exact).isEmpty)
        #expect(split.frames("\r").isEmpty)
        #expect(split.bufferedByteCount == max + 1)
        #expect(split.frames("\n") == [.line(exact)])
        // Content and CR together, the LF alone.
        #expect(split.frames(exact + "\r").isEmpty)
        #expect(split.frames("\n") == [.line(exact)])
        // A partial line completed by a chunk that ends in CRLF.
        #expect(split.frames("xxxx").isEmpty)
        #expect(split.frames("xxxxxx\r\n") == [.line(exact)])
        #expect(split.bufferedByteCount == 0)
    }

    @Test func feedWhenLineOfMaxPlusOneBytesEndsWithCRLFReportsTooLarge() {
        let max = 10
        let over = String(repeating: "x", count: max + 1)
        var framer = LineFramer(maxLineBytes: max)
        #expect(framer.frames(over + "\r\nok\r\n") == [.tooLarge, .line("ok")])
        #expect(framer.frames(over) == [.tooLarge])  // over before any CR: reported at once
        #expect(framer.frames("\r\nok\n") == [.line("ok")])
        // Only the last CR is the terminator's: one before it is content.
        #expect(framer.frames(String(repeating: "x", count: max) + "\r").isEmpty)
        #expect(framer.frames("\r\nok\n") == [.tooLarge, .line("ok")])
        // A CR that is followed by more content was content after all.
        #expect(framer.frames(String(repeating: "x", count: max) + "\r").isEmpty)
        #expect(framer.frames("y") == [.tooLarge])
        #expect(framer.frames("\r\nok\n") == [.line("ok")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedWhenLineOverMaxInOneChunkReportsTooLargeAndGoesOn() {
        var framer = LineFramer(maxLineBytes: 10)
        let frames = framer.frames("short\n" + String(repeating: "x", count: 11) + "\nafter\n")
        #expect(frames == [.line("short"), .tooLarge, .line("after")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedWhenLineCrossesMaxAcrossChunksReportsTooLargeOnce() {
        var framer = LineFramer(maxLineBytes: 10)
        #expect(framer.frames("123456").isEmpty)
        #expect(framer.frames("7890").isEmpty)  // exactly 10: still a line
        #expect(framer.frames("1") == [.tooLarge])  // 11: over, reported now
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.frames("more and more bytes").isEmpty)
        #expect(framer.frames("still more").isEmpty)
        #expect(framer.frames("end of it\nok\n") == [.line("ok")])
    }

    @Test func feedWhenPartialLineEndsOverMaxReportsTooLarge() {
        var framer = LineFramer(maxLineBytes: 10)
        #expect(framer.frames("12345678").isEmpty)
        #expect(framer.frames("901\nnext\n") == [.tooLarge, .line("next")])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedWhenTenMebibytesWithoutNewlineKeepsBufferBoundedAndReportsOnce() {
        let max = 64 * 1024
        var framer = LineFramer(maxLineBytes: max)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 48 * 1024 + 7)
        var frames: [Framed] = []
        var fed = 0
        var largest = 0
        while fed < 10 * 1024 * 1024 {
            frames += framer.frames(chunk)
            largest = Swift.max(largest, framer.bufferedByteCount)
            fed += chunk.count
        }
        #expect(frames == [.tooLarge])
        #expect(largest <= max)
        #expect(framer.bufferedByteCount <= max)
        // The oversized line ends; the next one is read normally, even split.
        #expect(framer.frames(Array("xxx\n{\"op\":".utf8)) == [])
        #expect(framer.frames("\"ping\"}\n") == [.line(#"{"op":"ping"}"#)])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func feedWhenOneChunkHoldsHugeLineAndMoreReportsOnceAndReadsTheRest() {
        var framer = LineFramer(maxLineBytes: 100)
        let huge = String(repeating: "y", count: 1_000_000)
        #expect(framer.frames("a\n" + huge + "\r\nb\n" + huge) == [.line("a"), .tooLarge, .line("b"), .tooLarge])
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.frames("\nc\n") == [.line("c")])
    }

    @Test func feedWhenEmptyChunkDoesNothing() {
        var framer = LineFramer(maxLineBytes: 8)
        #expect(framer.frames([]).isEmpty)
        #expect(framer.frames("ab").isEmpty)
        #expect(framer.frames([]).isEmpty)
        #expect(framer.bufferedByteCount == 2)
        #expect(framer.frames("\n") == [.line("ab")])
    }

    /// The daemon's path: framer, then engine, then the client's output.
    @Test func feedIntoEngineAnswersEachLineAndTooLargeWithoutId() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        let max = 64
        var framer = LineFramer(maxLineBytes: max)
        let input = #"{"op":"ping","id":1}"# + "\r\n" + String(repeating: " ", count: 100) + "\n" + #"{"op":"ping","id":2}"# + "\n"
        Array(input.utf8).withUnsafeBytes { bytes in
            framer.feed(bytes) { frame in
                switch frame {
                case .line(let line): fixture.engine.handle(line: line, from: client)
                case .tooLarge: fixture.engine.handleLineTooLarge(maxLineBytes: max, from: client)
                }
            }
        }
        let output = fixture.take(from: client)
        #expect(output.lines.map { $0.member("id") } == [1, nil, 2])
        #expect(output.lines.map(\.errorCode) == [nil, "too_large", nil])
    }
}

extension [Framed] {
    fileprivate var asLines: [String] {
        compactMap { if case .line(let text) = $0 { text } else { nil } }
    }
}

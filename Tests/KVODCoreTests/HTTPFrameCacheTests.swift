import KVODCore
import Testing

/// The frames that watches share (``HTTPFrameCache``): a stream framed from
/// the cache gets the bytes it would have framed alone, and one whose lines or
/// state differ is not given another stream's.
@Suite struct HTTPFrameCacheTests {
    static let reply = Array(#"{"id":1,"ok":true,"seq":4,"epoch":"e1"}"#.utf8)
    static let lines = [#"{"event":"change","seq":5,"new":1}"#, #"{"event":"change","seq":5,"new":2}"#,
                        #"{"event":"change","seq":6,"new":3}"#]

    static func framer(resumed: HTTPEventID? = nil) -> HTTPEventFramer {
        var framer = HTTPEventFramer(resumed: resumed)
        _ = framer.start(reply: reply)
        return framer
    }

    /// Frames `lines` as one write, line by line through the cache's slots.
    static func frame(_ lines: [String], _ framer: inout HTTPEventFramer, _ cache: HTTPFrameCache?) -> String {
        var output: [UInt8] = []
        for (slot, line) in lines.enumerated() {
            Array(line.utf8).withUnsafeBytes { line in
                if let cache {
                    framer.frame(event: line, into: &output, sharing: cache, slot: slot)
                } else {
                    framer.frame(event: line, into: &output)
                }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    @Test func streamsFramedFromTheCacheGetWhatTheyWouldHaveFramedAlone() {
        let cache = HTTPFrameCache()
        var alone = Self.framer()
        let expected = Self.frame(Self.lines, &alone, nil)
        #expect(expected.hasPrefix("id: e1:5:1\nevent: change\ndata: {"))
        #expect(expected.contains("id: e1:5:2\n") && expected.contains("id: e1:6:1\n"))
        for _ in 0..<3 {
            var framer = Self.framer()
            #expect(Self.frame(Self.lines, &framer, cache) == expected)
        }
        // Another stream's other lines in the same slots, and a stream resumed
        // after the first event: each gets its own frames, not the cache's.
        var other = Self.framer()
        let otherLines = [#"{"event":"change","seq":7,"new":4}"#, #"{"event":"error","seq":7}"#]
        var otherAlone = Self.framer()
        #expect(Self.frame(otherLines, &other, cache) == Self.frame(otherLines, &otherAlone, nil))
        var resumed = Self.framer(resumed: HTTPEventID(epoch: "e1", seq: 5, count: 1))
        var resumedAlone = Self.framer(resumed: HTTPEventID(epoch: "e1", seq: 5, count: 1))
        let framedResumed = Self.frame(Self.lines, &resumed, cache)
        #expect(framedResumed == Self.frame(Self.lines, &resumedAlone, nil))
        #expect(framedResumed.hasPrefix("id: e1:5:2\n"))
    }

    @Test func aWriteIsReplayedOnlyForAFramerInTheSameState() {
        let cache = HTTPFrameCache()
        let write = Array(Self.lines.joined(separator: "\n").utf8) + [0x0A]
        var first = Self.framer()
        let before = first
        let framed = Self.frame(Self.lines, &first, cache)
        write.withUnsafeBytes { write in
            cache.remember(write, frames: ArraySlice(framed.utf8), before: before, after: first)
            var same = Self.framer()
            let replayed = cache.replay(write, framer: &same)
            #expect(replayed.map { String(decoding: $0.bytes, as: UTF8.self) } == framed)
            #expect(same == first)
            // One that already had an event of seq 5 numbers the next one 2: not the cache's.
            var ahead = Self.framer()
            var scratch: [UInt8] = []
            Array(Self.lines[0].utf8).withUnsafeBytes { ahead.frame(event: $0, into: &scratch) }
            let aheadBefore = ahead
            #expect(cache.replay(write, framer: &ahead) == nil)
            #expect(ahead == aheadBefore)
            var resumed = Self.framer(resumed: HTTPEventID(epoch: "e1", seq: 5, count: 1))
            #expect(cache.replay(write, framer: &resumed) == nil)
        }
        // Other bytes are not replayed.
        Array(Self.lines[0].utf8 + [0x0A]).withUnsafeBytes { other in
            var same = Self.framer()
            #expect(cache.replay(other, framer: &same) == nil)
        }
    }
}

@testable import KVOClient
import KVOTestSupport
import KVOValues
import Testing

/// The scanner the reader thread tries first (``LineScanner``) against the
/// full JSON reader (``InboundLine/parse(_:)``), line by line: on every shape
/// of line kvod sends, and on the same lines with their members reordered and
/// spaced out, the scanner reads what the full reader reads, or leaves the line to it.
@Suite struct LineScannerTests {
    /// Every kind of event and reply kvod writes (docs/PROTOCOL.md), as it writes them.
    static let kvodLines = [
        // Full events: set, with old, insertion/removal/replacement, prior, initial, replay, coalesced, cause.
        #"{"event":"change","object":"person/1","keyPath":"name","kind":"setting","new":"xsc","old":"xz","seq":17}"#,
        #"{"event":"change","object":"bench/0","keyPath":"v","kind":"setting","new":12345,"seq":12346}"#,
        #"{"event":"change","object":"l","keyPath":"items","kind":"insertion","new":[4,5],"indexes":[2,3],"seq":8}"#,
        #"{"event":"change","object":"l","keyPath":"items","kind":"removal","old":[{"a":1}],"indexes":[0],"seq":9}"#,
        #"{"event":"change","object":"l","keyPath":"items","kind":"replacement","new":[7],"old":[6],"indexes":[1],"seq":10}"#,
        #"{"event":"change","object":"person/1","keyPath":"name","kind":"setting","old":"a","prior":true,"seq":18}"#,
        #"{"event":"change","object":"person/1","keyPath":"name","kind":"setting","initial":true,"new":null,"seq":0}"#,
        #"{"event":"change","object":"progress","keyPath":"done","kind":"setting","new":2000,"seq":2000,"coalesced":1998}"#,
        #"{"event":"change","object":"election/web","keyPath":"leader","kind":"setting","new":null,"cause":"disconnect","seq":9}"#,
        #"{"event":"change","object":"lease","keyPath":"holder","kind":"setting","new":null,"old":"me","cause":"ttl","seq":11}"#,
        // Whole document, a change under an observed path, a prefix's, an aggregate's.
        #"{"event":"change","object":"person/1","kind":"setting","new":{"address":{"city":"Oslo"}},"changedKeyPath":"address.city","seq":3}"#,
        #"{"event":"change","object":"person/1","kind":"setting","new":null,"old":{"name":"x"},"seq":4}"#,
        #"{"event":"change","object":"person/1","keyPath":"address","kind":"setting","new":{"city":"Bergen"},"old":{"city":"Oslo"},"changedKeyPath":"address.city","seq":45}"#,
        #"{"event":"change","object":"services/db","prefix":"services/","keyPath":"addr","kind":"setting","new":"10.0.0.6:5432","seq":2}"#,
        #"{"event":"change","object":"services/web","prefix":"services/","keyPath":"addr","kind":"setting","initial":true,"new":"10.0.0.5:80","seq":1}"#,
        #"{"event":"change","object":"cart","keyPath":"orders.@sum.amount","kind":"setting","new":12.5,"old":10,"changedKeyPath":"orders","seq":30}"#,
        #"{"event":"change","object":"t","keyPath":"tags.@count","kind":"setting","new":3,"old":2,"changedKeyPath":"tags","seq":31}"#,
        // Values of every JSON type, and strings that need escapes.
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":"tab\there \"q\" \u00e9 😀","old":-1.5e3,"seq":5}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":[true,false,null,{"x":[1,{"y":"z"}]}],"seq":6}"#,
        #"{"event":"change","object":"o/\u00e9","keyPath":"k","kind":"setting","new":1,"seq":7}"#,
        // Compact events: plain, with kind, a prefix's (with object), prior, initial, coalesced, cause.
        #"{"o":1,"new":"123456,1732676400123456789","seq":48211}"#,
        #"{"o":2,"object":"services/db","new":"10.0.0.7:5432","old":"10.0.0.6:5432","seq":48212}"#,
        #"{"o":3,"kind":"insertion","new":[1],"indexes":[0],"seq":12}"#,
        #"{"o":1,"old":5,"prior":true,"seq":13}"#,
        #"{"o":1,"initial":true,"new":null,"seq":0}"#,
        #"{"o":4,"new":9,"seq":90,"coalesced":80}"#,
        #"{"o":5,"new":null,"cause":"disconnect","seq":91}"#,
        #"{"o":6,"new":{"a":1},"changedKeyPath":"a","seq":92}"#,
        // kvod's order, which the scanner reads without its member loop: new, old, both, neither.
        #"{"o":7,"new":"x","old":{"y":[1,2]},"seq":93}"#,
        #"{"o":7,"old":-0.5,"seq":94}"#,
        #"{"o":7,"seq":95}"#,
        #"{"o":18446744073709551615,"new":0,"seq":18446744073709551615}"#,
        // And in other orders, which the loop reads.
        #"{"o":7,"old":1,"new":2,"seq":96}"#,
        #"{"seq":97,"new":2,"o":7}"#,
        #"{ "o": 7, "new": 2, "seq": 98 }"#,
        // Replies the scanner reads itself.
        #"{"ok":true,"seq":48211}"#,
        #"{"ok":true}"#,
        #"{"ok":true,"id":7,"seq":3}"#,
        #"{"id":"x","ok":true}"#,
    ]

    /// Lines the scanner leaves to the full reader; the full reader must still read them (or refuse them).
    static let otherLines = [
        #"{"ok":true,"seq":48210,"epoch":"9f0c2d41a7b35e18","o":1}"#,
        #"{"ok":true,"value":{"a":1},"seq":4,"modSeq":3}"#,
        #"{"ok":false,"error":{"code":"not_found","message":"no such object","seq":4}}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":3,"resync":true,"seq":57}"#,
        #"{"event":"change","object":"person/1","keyPath":"name","kind":"setting","new":"x","seq":17,"context":"c1"}"#,
        #"{"event":"later","object":"o","seq":1}"#,
        #"{"event":"chan\u0067e","object":"o","keyPath":"k","kind":"setting","new":1,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"sideways","new":1,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"seq":-2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"seq":2.0}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"seq":99999999999999999999}"#,
        #"{"event":"change","object":"o","keyPath":7,"kind":"setting","new":1,"seq":2}"#,
        #"{"event":"change","object":"o","prefix":5,"keyPath":"k","kind":"setting","new":1,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"new":2,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"prior":"yes","seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"coalesced":-1,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"indexes":{"a":1},"seq":2}"#,
        #"{"event":"change","o\u0062ject":"o","keyPath":"k","kind":"setting","new":1,"seq":2}"#,
        #"{"o":"1","new":1,"seq":2}"#,
        #"{"o":1,"event":"change","new":1,"seq":2}"#,
        #"{"o":1,"new":1}"#,
        #"{"o":01,"new":1,"seq":2}"#,
        #"{"o":1,"new":1,"seq":02}"#,
        #"{"o":18446744073709551616,"new":1,"seq":2}"#,
        #"{"o":1,"new":1,"new":2,"seq":2}"#,
        #"{"o":1,"new":01,"seq":2}"#,
        #"{"o":1,"new":1,"seq":2} x"#,
        #"{"o":1,"new":1,"seq":2"#,
        #"{"o":1,"new":1,"seq":2,}"#,
        #"{"o":1,"new":[1,"seq":2}"#,
        #"{"ok":true,"o":1,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"seq":2,"ok":true}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"seq":2} x"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":01,"seq":2}"#,
        #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":1,"seq":2,}"#,
        #"[1,2]"#,
        #"{"ok":null}"#,
        #""#,
    ]

    /// The observations compact events are routed to in these tests: a plain one and a prefix.
    static let keys = [ObservationKey(object: "o", keyPath: "k"),
                       ObservationKey(object: "services/", keyPath: "addr", isPrefix: true)]

    /// What a line means, comparable: the event it routes (per key for a compact one) or the reply.
    private enum Reading: Equatable {
        case event(WireEvent)
        case compact(UInt64, [WireEvent?])
        case reply(String, UInt64?)
        case other
        case refused(String)
    }

    private static func reading(_ inbound: InboundLine) -> Reading {
        switch inbound {
        case .event(let event): .event(event)
        case .compactChange(let number, let event, let object):
            .compact(number, keys.map { key in
                // place(in:) fills the event in: each key gets a copy of its own.
                let copy = WireEvent(object: event.object, keyPath: event.keyPath, kind: event.kind, new: event.new,
                                     old: event.old, indexes: event.indexes, isPrior: event.isPrior,
                                     isInitial: event.isInitial, seq: event.seq, changedKeyPath: event.changedKeyPath,
                                     prefix: event.prefix, cause: event.cause, coalesced: event.coalesced)
                return copy.place(in: key, object: object) ? copy : nil
            })
        case .reply(let result, let seq):
            switch result {
            case .success(let fields): .reply("ok \(JSONValue.object(fields).jsonString)", seq)
            case .failure(let error): .reply("error \(error)", seq)
            }
        case .otherEvent: .other
        }
    }

    private static func full(_ line: String) -> Reading {
        full(Array(line.utf8))
    }

    private static func full(_ line: [UInt8]) -> Reading {
        var bytes = line
        return bytes.withUnsafeMutableBytes { raw in
            do throws(KVOClientError) {
                return reading(try InboundLine.parse(UnsafeRawBufferPointer(raw)))
            } catch {
                return .refused(error.message)
            }
        }
    }

    private static func scanned(_ line: String, _ scanner: inout LineScanner) -> Reading? {
        scanned(Array(line.utf8), &scanner)
    }

    private static func scanned(_ bytes: [UInt8], _ scanner: inout LineScanner) -> Reading? {
        bytes.withUnsafeBytes { raw in scanner.scan(raw).map(reading) }
    }

    @Test(arguments: kvodLines)
    func theScannerReadsEveryShapeKvodSendsAsTheFullReaderDoes(_ line: String) {
        var scanner = LineScanner()
        let scanned = Self.scanned(line, &scanner)
        #expect(scanned != nil, "the scanner reads it itself")
        #expect(scanned == Self.full(line))
        // A second time, with the names' strings reused.
        #expect(Self.scanned(line, &scanner) == Self.full(line))
    }

    /// Each member the scanner knows is in a line of ``kvodLines``, which the test above has it read itself: a
    /// member whose spelling it has wrong (its table of fields out of case order) leaves such lines to the full reader.
    @Test(arguments: ["event", "ok", "id", "o", "seq", "coalesced", "object", "keyPath", "prefix", "changedKeyPath",
                      "cause", "kind", "new", "old", "indexes", "prior", "initial"])
    func everyMemberTheScannerKnowsIsInALineItReads(_ name: String) {
        #expect(Self.kvodLines.contains { $0.contains("\"\(name)\":") })
    }

    @Test(arguments: otherLines)
    func aLineTheScannerDoesNotKnowIsLeftToTheFullReader(_ line: String) {
        var scanner = LineScanner()
        if let scanned = Self.scanned(line, &scanner) {
            #expect(scanned == Self.full(line))
        }
        if case .refused = Self.full(line) { #expect(Self.scanned(line, &scanner) == nil) }
    }

    /// A value nested as deep as readers allow, and one level deeper, reads the same
    /// through kvod's-order path as through the full reader (which refuses the deeper).
    @Test func aCompactValueAtTheDepthLimitReadsAsTheFullReaderReadsIt() {
        for depth in [DocumentDepth.readerLimit - 2, DocumentDepth.readerLimit - 1, DocumentDepth.readerLimit] {
            let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let line = #"{"o":1,"new":"# + value + #","seq":2}"#
            var scanner = LineScanner()
            let full = Self.full(line)
            if case .refused = full {
                #expect(Self.scanned(line, &scanner) == nil, "depth \(depth)")
            } else {
                #expect(Self.scanned(line, &scanner) == full, "depth \(depth)")
            }
        }
    }

    @Test func anyMemberOrderAndSpacingReadsTheSame() throws {
        var random = SplitMix64(seed: 30)
        var scanner = LineScanner()
        for line in Self.kvodLines {
            guard case .object(let members) = try JSONReader.parse(line) else { continue }
            for _ in 0..<20 {
                let spaces = [" ", "\t", "", "  ", "\r\n"]
                func space() -> String { spaces[Int(random.next() % UInt64(spaces.count))] }
                var order = Array(members)
                for index in order.indices.reversed() { order.swapAt(index, Int(random.next() % UInt64(index + 1))) }
                let body = order.map { name, value in
                    space() + JSONValue.string(name).jsonString + space() + ":" + space() + value.jsonString + space()
                }
                let written = space() + "{" + body.joined(separator: ",") + "}" + space()
                let scanned = Self.scanned(written, &scanner)
                #expect(scanned != nil, "read by the scanner: \(written)")
                #expect(scanned == Self.full(written), "\(written)")
            }
        }
    }

    @Test func namesRepeatedAcrossLinesAreReusedButNeverConfused() {
        var scanner = LineScanner()
        let first = #"{"event":"change","object":"a/1","keyPath":"v","kind":"setting","new":1,"seq":1}"#
        let second = #"{"event":"change","object":"a/2","keyPath":"v","kind":"setting","new":2,"seq":2}"#
        for line in [first, second, first, first, second] {
            #expect(Self.scanned(line, &scanner) == Self.full(line))
        }
    }

    /// A fuzz corpus of kvod's own lines, mutated byte by byte as a fuzzer
    /// would (a byte replaced by one that matters to JSON or UTF-8, deleted,
    /// inserted, a run repeated, the line cut short): whatever the scanner
    /// reads, the full reader reads the same; what the full reader refuses,
    /// the scanner leaves to it. One scanner throughout, so that names reused
    /// from earlier lines are exercised too.
    @Test func mutatedLinesAreReadAsTheFullReaderReadsThemOrLeftToIt() {
        let corpus = (Self.kvodLines + Self.otherLines).map { Array($0.utf8) }.filter { !$0.isEmpty }
        let interesting: [UInt8] = Array(#"{}[]:,"\ 0123456789-+.eEtrufalsn"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xE2, 0xFF]
        var random = SplitMix64(seed: 3030)
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        var scanner = LineScanner()
        var readByTheScanner = 0
        for _ in 0..<20_000 {
            var line = corpus[below(corpus.count)]
            for _ in 0...below(3) where !line.isEmpty {
                let at = below(line.count)
                switch below(5) {
                case 0: line[at] = interesting[below(interesting.count)]
                case 1: line.remove(at: at)
                case 2: line.insert(interesting[below(interesting.count)], at: at)
                case 3: line.insert(contentsOf: line[at..<min(line.count, at + 1 + below(8))], at: at)
                default: line.removeLast(line.count - at)
                }
            }
            let full = Self.full(line)
            guard let scanned = Self.scanned(line, &scanner) else { continue }
            readByTheScanner += 1
            #expect(scanned == full, "\(String(decoding: line, as: UTF8.self))")
            if case .refused = full {
                Issue.record("the scanner read a line the full reader refuses: \(String(decoding: line, as: UTF8.self))")
            }
        }
        // The mutations leave many lines whole in meaning (a digit for a digit, a space): the scanner reads those.
        #expect(readByTheScanner > 200, "\(readByTheScanner)")
    }
}

@testable import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// The word-at-a-time scan against the byte-by-byte definition, on random
/// bytes where the special ones are placed at every offset of a word.
@Suite struct JSONStringScanTests {
    private static func reference(_ bytes: [UInt8], from start: Int, asciiOnly: Bool) -> Int {
        for index in start..<bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (asciiOnly && byte >= 0x80) {
                return index
            }
        }
        return bytes.count
    }

    private static func scanned(_ bytes: [UInt8], from start: Int, asciiOnly: Bool) -> Int {
        bytes.withUnsafeBytes { JSONStringScan.endOfPlainRun(in: $0, from: start, asciiOnly: asciiOnly) }
    }

    @Test(arguments: [true, false])
    func findsTheFirstSpecialByteWhereverItIs(asciiOnly: Bool) {
        // Bytes next to each boundary of the tests: 0x1F/0x20, 0x21/0x22/0x23,
        // 0x5B/0x5C/0x5D, 0x7F/0x80, 0xFF, 0x00, and their neighbours in a word.
        let edges: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]
        var random = SplitMix64(seed: 0x5eed_5ca9)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
            for _ in 0..<Int.random(in: 0...3, using: &random) where count > 0 {
                bytes[Int.random(in: 0..<count, using: &random)] = edges.randomElement(using: &random)!
            }
            let start = count == 0 ? 0 : Int.random(in: 0...count, using: &random)
            #expect(Self.scanned(bytes, from: start, asciiOnly: asciiOnly)
                    == Self.reference(bytes, from: start, asciiOnly: asciiOnly), "\(bytes) from \(start)")
        }
    }

    @Test func everyByteValueAtEveryPositionOfAWord() {
        for value in 0...255 {
            for position in 0..<16 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 16)
                bytes[position] = UInt8(value)
                for asciiOnly in [true, false] {
                    #expect(Self.scanned(bytes, from: 0, asciiOnly: asciiOnly)
                            == Self.reference(bytes, from: 0, asciiOnly: asciiOnly))
                }
            }
        }
    }
}

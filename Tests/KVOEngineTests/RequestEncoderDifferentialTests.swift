import KVOEngine
import KVOProtocol
import KVOTestSupport
import KVOValues
import Testing

/// KVOProtocol's request encoder writes strings and integers with the bytes
/// of the engine's `JSONWriter`, which KVOClient's requests were written with
/// before the encoder moved into KVOProtocol: the same requests, byte for byte.
@Suite struct RequestEncoderDifferentialTests {
    /// Strings of ASCII, control characters, quotes, backslashes and
    /// multi-byte scalars, mixed at random.
    static func randomString(_ random: inout SplitMix64) -> String {
        let pieces: [Unicode.Scalar] = ["a", "Z", "0", " ", "/", ".", "\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{c}",
                                        "\u{0}", "\u{1}", "\u{1f}", "\u{7f}", "é", "☃", "😀"]
        let count = Int.random(in: 0...24, using: &random)
        return String(String.UnicodeScalarView((0..<count).map { _ in pieces.randomElement(using: &random)! }))
    }

    @Test func stringsAreTheBytesOfTheEnginesWriter() {
        var random = SplitMix64(seed: 20)
        let differing = (0..<5000).map { _ in Self.randomString(&random) }.filter { string in
            var engine: [UInt8] = []
            JSONWriter.writeString(string, into: &engine)
            var shared: [UInt8] = []
            RequestEncoder.appendString(string, to: &shared)
            return shared != engine
        }
        #expect(differing.isEmpty, "\(differing.count) strings differ, first \(differing.first.debugDescription)")
    }

    @Test func integersAreTheBytesOfTheEnginesWriter() {
        var random = SplitMix64(seed: 21)
        // Shifted right at random, so that every length of number comes up.
        let randoms = (0..<5000).map { _ in
            Int.random(in: .min ... .max, using: &random) >> Int.random(in: 0...62, using: &random)
        }
        let differing = ([0, 1, -1, 9, 10, 99, 100, Int.max, Int.min] + randoms).filter { value in
            var engine: [UInt8] = []
            JSONWriter.writeNumber(value, into: &engine)
            var shared: [UInt8] = []
            RequestEncoder.appendDecimal(value, to: &shared)
            return shared != engine
        }
        #expect(differing.isEmpty, "\(differing.count) integers differ, first \(differing.first.debugDescription)")
        // KVOClient wrote a seq as a number literal of its digits.
        var seq: [UInt8] = []
        RequestEncoder.appendDecimal(UInt64.max, to: &seq)
        #expect(seq == JSONValue.number(JSONNumber(validatedLiteral: String(UInt64.max))).jsonBytes)
    }
}

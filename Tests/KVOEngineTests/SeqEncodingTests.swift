@_spi(Benchmarks) @testable import KVOEngine
import KVOTestSupport
import Testing

/// The end of every event and a set's reply, whose digits are written two at
/// a time: every number of digits, every pair, and the extremes.
@Suite struct SeqEncodingTests {
    private static func seqTail(_ seq: UInt64) -> String {
        var bytes: [UInt8] = []
        EventEncoder.appendSeqAndEnd(seq, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func seqIsWrittenInDecimalWhateverItsLength() {
        var values: [UInt64] = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 10_001, 123_456_789, UInt64.max, UInt64.max - 1]
        var power: UInt64 = 1
        while power <= UInt64.max / 10 {
            values += [power - 1, power, power + 1, power * 10 - 1]
            power *= 10
        }
        var random = SplitMix64(seed: 0x5e9)
        values += (0..<2_000).map { _ in UInt64.random(in: 0...UInt64.max, using: &random) >> UInt64.random(in: 0...63, using: &random) }
        for value in values {
            #expect(Self.seqTail(value) == ",\"seq\":\(value)}\n")
        }
    }

    @Test func aChangesReplyIsItsSeqInOneLineAndASeqFollowedByFieldsKeepsItsPlace() {
        for value: UInt64 in [0, 7, 42, 100, 65_535, UInt64.max] {
            var output = GrowableBytes()
            var reply = ReplyEncoder()
            reply.seq(value)
            reply.write(id: nil, to: &output)
            #expect(String(decoding: output, as: UTF8.self) == "{\"ok\":true,\"seq\":\(value)}\n")
            #expect(String(decoding: reply.finish(id: 7), as: UTF8.self) == "{\"id\":7,\"ok\":true,\"seq\":\(value)}\n")
            var observe = ReplyEncoder()
            observe.seq(value)
            observe.field(.epoch, .string("e"))
            #expect(String(decoding: observe.finish(id: "r"), as: UTF8.self)
                == "{\"id\":\"r\",\"ok\":true,\"seq\":\(value),\"epoch\":\"e\"}\n")
        }
    }
}

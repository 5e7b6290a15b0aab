@testable import KVOEtcd
import Testing

/// How the watch stream is cut into messages, without etcd: the gateway's
/// objects may arrive in any pieces.
@Suite struct WatchStreamFramingTests {
    static let messages = [
        #"{"result":{"header":{"revision":"3"},"created":true}}"#,
        #"{"result":{"events":[{"kv":{"key":"e30=","value":"In0ie30i"}}],"note":"a } and a { and \" in a string \\"}}"#,
        #"{"result":{"header":{"revision":"4"}}}"#,
    ]

    @Test func messagesCutAtEveryBytePositionComeOutWholeAndInOrder() throws {
        let text = Array(Self.messages.joined(separator: "\n").utf8)
        for cut in 1..<text.count {
            var stream = JSONObjectStream(maxObjectBytes: 1 << 20)
            let objects = try stream.append(Array(text[..<cut])) + stream.append(Array(text[cut...]))
            #expect(objects.map { String(decoding: $0, as: UTF8.self) } == Self.messages, "cut at \(cut)")
        }
    }

    @Test func anIncompleteMessageLargerThanTheLimitIsRefusedNamingTheLimit() throws {
        var stream = JSONObjectStream(maxObjectBytes: 64)
        #expect(throws: EtcdError.responseTooLarge(limit: 64)) {
            _ = try stream.append(Array(#"{"result":{"events":["#.utf8) + [UInt8](repeating: 0x20, count: 64))
        }
    }

    @Test func base64RoundTripsEveryLengthAndRefusesOtherText() {
        for length in 0..<10 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 97 + 200) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("foo".utf8)) == "Zm9v" && Base64.encode(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.decode("Zm9v!") == nil)
    }

    @Test func prefixRangeEndsAtThePrefixWithItsLastByteIncremented() {
        #expect(EtcdKeyRange.prefix("/kvod/").rangeEnd == Array("/kvod0".utf8))
        #expect(EtcdKeyRange.prefix([0x61, 0xFF]).rangeEnd == [0x62])
        #expect(EtcdKeyRange.prefix([UInt8]()).rangeEnd == [0])
    }
}

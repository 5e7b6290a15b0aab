import KVOProtocol

/// Writes replies: `{"id":…,"ok":true,…}` or
/// `{"id":…,"ok":false,"error":{"code":…,"message":…}}`, one line each.
///
/// The only place where a ``KVOEngineError`` becomes wire bytes.
struct ReplyEncoder {
    private(set) var bytes: [UInt8] = []

    /// Starts a success reply; add fields, then take ``finish()``.
    init(okFor id: JSONValue?) {
        bytes.reserveCapacity(32)
        bytes.append(UInt8(ascii: "{"))
        if let id {
            bytes.append(literal: LineFragment.idMember)
            JSONWriter.write(id, into: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(literal: LineFragment.okTrue)
    }

    mutating func field(_ name: StaticString, _ value: JSONValue) {
        bytes.append(literal: #",""#)
        bytes.append(literal: name)
        bytes.append(literal: #"":"#)
        JSONWriter.write(value, into: &bytes)
    }

    /// A field whose value `write` appends as JSON itself.
    mutating func field(_ name: StaticString, writing write: (inout [UInt8]) -> Void) {
        bytes.append(literal: #",""#)
        bytes.append(literal: name)
        bytes.append(literal: #"":"#)
        write(&bytes)
    }

    mutating func field(_ name: StaticString, integer: some BinaryInteger) {
        bytes.append(literal: #",""#)
        bytes.append(literal: name)
        bytes.append(literal: #"":"#)
        EventEncoder.appendDecimal(integer, to: &bytes)
    }

    /// The finished line, `}\n` included; the encoder is spent.
    mutating func finish() -> [UInt8] {
        bytes.append(literal: "}\n")
        return bytes
    }

    /// Appends `{"ok":true,"seq":N}\n`, a set's reply when the request had no
    /// id, straight into `bytes` (a client's output): no array of its own.
    static func appendOK(seq: UInt64, to bytes: inout ByteBuffer) {
        EventEncoder.appendLine(endingWithSeq: seq, after: LineFragment.okSeqStart, to: &bytes)
    }

    /// Appends `{"id":…,"ok":true,"seq":N}\n`, a set's reply, straight into
    /// `bytes`: the same bytes as ``init(okFor:)`` with its `seq` field.
    static func appendOK(id: RequestID, seq: UInt64, to bytes: inout ByteBuffer) {
        bytes.append(literal: LineFragment.idStart)
        id.write(to: &bytes)
        EventEncoder.appendLine(endingWithSeq: seq, after: LineFragment.okSeqAfterID, to: &bytes)
    }

    /// A complete error reply.
    static func failure(id: JSONValue?, _ error: KVOEngineError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        bytes.append(UInt8(ascii: "{"))
        if let id {
            bytes.append(literal: LineFragment.idMember)
            JSONWriter.write(id, into: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(literal: LineFragment.failureCode)
        JSONWriter.writeString(error.code.rawValue, into: &bytes)
        bytes.append(literal: LineFragment.messageMember)
        JSONWriter.writeString(error.message, into: &bytes)
        for (name, value) in error.details {
            bytes.append(UInt8(ascii: ","))
            JSONWriter.writeString(name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &bytes)
        }
        bytes.append(literal: "}}\n")
        return bytes
    }
}

import KVOProtocol
import KVOValues

/// Writes replies: `{"id":…,"ok":true,…}` or
/// `{"id":…,"ok":false,"error":{"code":…,"message":…}}`, one line each.
///
/// The only place where a ``KVOEngineError`` becomes wire bytes.
/// A success reply is begun empty and takes the request's id when written
/// (the request keeps it meanwhile: no copy of it).
struct ReplyEncoder {
    /// The fields after `"ok":true`, as JSON text: no array until one is written.
    private var fields: [UInt8] = []
    /// A `seq` that is the reply's only field so far, kept as a number: a
    /// change's reply has nothing else, and is then written straight into
    /// the client's output with no array of its own.
    private var onlySeq: UInt64?
    /// Members written once beforehand (`,"epoch":"…"`) that follow the kept
    /// `seq`: an `observe`'s reply is then written straight into the output too.
    private var membersAfterSeq: [UInt8]?

    /// Starts a success reply; add fields, then ``write(id:to:)`` or ``finish(id:)``.
    init() {}

    /// The `seq` field.
    mutating func seq(_ seq: UInt64) {
        if fields.isEmpty, onlySeq == nil {
            onlySeq = seq
        } else {
            field(.seq, integer: seq)
        }
    }

    /// The `seq` field, then `members` (`,"name":value`…, written beforehand).
    mutating func seq(_ seq: UInt64, followedBy members: [UInt8]) {
        if fields.isEmpty, onlySeq == nil {
            onlySeq = seq
            membersAfterSeq = members
        } else {
            field(.seq, integer: seq)
            fields.append(contentsOf: members)
        }
    }

    /// A field of `value` (names are KVOProtocol's: none is spelled here).
    mutating func field(_ name: KVOProtocol.Field, _ value: JSONValue) {
        begin(name)
        JSONWriter.write(value, into: &fields)
    }

    /// A field whose value `write` appends as JSON itself.
    mutating func field(_ name: KVOProtocol.Field, writing write: (inout [UInt8]) -> Void) {
        begin(name)
        write(&fields)
    }

    mutating func field(_ name: KVOProtocol.Field, integer: some BinaryInteger) {
        begin(name)
        fields.append(decimal: integer)
    }

    /// Starts a field after those written (a kept `seq` first, in its place).
    private mutating func begin(_ name: KVOProtocol.Field) {
        // Room for the usual reply's fields at once (an `observe`'s seq and
        // epoch): growing from empty cost three reallocations.
        if fields.capacity == 0 { fields.reserveCapacity(64) }
        if let seq = onlySeq {
            onlySeq = nil
            fields.append(literal: LineFragment.seqMember)
            fields.append(decimal: seq)
            if let members = membersAfterSeq {
                membersAfterSeq = nil
                fields.append(contentsOf: members)
            }
        }
        fields.append(literal: #",""#)
        var spelling = name.rawValue
        spelling.withUTF8 { fields.append(contentsOf: $0) }
        fields.append(literal: #"":"#)
    }

    /// Appends the finished line, `}\n` included, to `output`; `id` is the request's.
    func write<Sink: ByteSink>(id: RequestID?, to output: inout Sink) {
        if case .none = id, fields.isEmpty, let onlySeq {
            // A change's reply without an id, the usual one: one append.
            guard let members = membersAfterSeq else {
                return EventEncoder.appendLine(endingWithSeq: onlySeq, after: LineFragment.okTrueSeqStart, to: &output)
            }
            output.append(literal: LineFragment.okTrueSeqStart)
            return Self.write(onlySeq, followedBy: members, to: &output)
        }
        if let id {
            if let (words, count) = id.text {
                output.append(LineFragment.idStart, words: words, count: count, LineFragment.okTrueAfterID)
            } else {
                output.append(literal: LineFragment.idStart)
                id.write(to: &output)
                output.append(literal: LineFragment.okTrueAfterID)
            }
        } else {
            output.append(literal: LineFragment.okTrueStart)
        }
        if !fields.isEmpty { fields.withUnsafeBytes { output.append(bytes: $0) } }
        if let onlySeq, let members = membersAfterSeq {
            output.append(literal: LineFragment.seqMember)
            Self.write(onlySeq, followedBy: members, to: &output)
        } else if let onlySeq {
            EventEncoder.appendLine(endingWithSeq: onlySeq, after: LineFragment.seqMember, to: &output)
        } else {
            output.append(literal: "}\n")
        }
    }

    /// `seq`'s digits, `members`, and the line's end.
    private static func write<Sink: ByteSink>(_ seq: UInt64, followedBy members: [UInt8], to output: inout Sink) {
        output.append(decimal: seq)
        members.withUnsafeBytes { output.append(bytes: $0) }
        output.append(literal: "}\n")
    }

    /// The finished line, `}\n` included; `id` is the request's.
    func finish(id: RequestID?) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(32 + fields.count)
        write(id: id, to: &line)
        return line
    }

    /// A complete error reply.
    static func failure(id: RequestID?, _ error: KVOEngineError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        bytes.append(UInt8(ascii: "{"))
        if let id {
            bytes.append(literal: LineFragment.idMember)
            id.write(to: &bytes)
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

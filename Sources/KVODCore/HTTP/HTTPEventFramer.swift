import KVOEngine
import KVOValues
import KVOProtocol

/// Turns a watch's lines, the `observe` reply and then its events, into
/// Server-Sent Events (`text/event-stream`, docs/HTTP.md): each event one
/// `event:` (its `event` member: `change`), `id:` (``HTTPEventID``) and
/// `data:` (the event's JSON line as the socket sends it), and a stream that
/// resumes leaves out what its `Last-Event-ID` says was had.
public struct HTTPEventFramer: Sendable {
    /// How the reply to `observe` starts the stream.
    public enum Start: Equatable, Sendable {
        /// Stream, beginning with `prelude` (a compact watch's `event: observed`).
        case stream(prelude: [UInt8])
        /// Answer the request with this instead (the observe was refused).
        case refused(HTTPAnswer)
    }

    private var epoch = ""
    private var seq = 0
    /// Events of `seq` framed so far, skipped ones included.
    private var count = 0
    /// What a resumed stream had: its events are left out.
    private var had: HTTPEventID?

    public init(resumed: HTTPEventID?) {
        had = resumed
    }

    /// A comment line, which keeps proxies from closing an idle stream.
    public static let heartbeat = Array(": keep-alive\n\n".utf8)

    /// Reads the observe's reply; nil for a line that is not a reply (an
    /// `initial` event comes before it), which the caller frames once started.
    public mutating func start(reply: some Collection<UInt8>) -> Start? {
        guard case .object(var members)? = try? JSONReader.parse(reply) else {
            return .refused(HTTPAnswer(reply: reply, shape: .reply))
        }
        guard members[Field.ok] != nil else { return nil }
        guard members[Field.ok] == .bool(true) else { return .refused(HTTPAnswer(reply: reply, shape: .reply)) }
        if case .string(let epoch)? = members[Field.epoch] { self.epoch = epoch }
        // Headers go with the first part: a stream says something at once. A
        // browser that loses it tries again after a second, not three.
        var prelude = Array("retry: 1000\n\n".utf8)
        guard members[Field.observation] != nil else { return .stream(prelude: prelude) }
        members[Field.id] = nil
        members[Field.ok] = nil
        prelude += Array("event: observed\ndata: ".utf8)
        prelude += JSONValue.object(members).jsonBytes
        prelude += Array("\n\n".utf8)
        return .stream(prelude: prelude)
    }

    /// Appends the frame of one event line (without its newline) to `output`,
    /// unless a resumed stream had it already.
    public mutating func frame(event line: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        let members = EventLineMembers(line)
        if let seq = members.seq {
            if seq == self.seq { count += 1 } else { (self.seq, count) = (seq, 1) }
            if let had {
                if seq == had.seq, count <= had.count { return }
                if seq >= had.seq { self.had = nil }
            }
            output.append(contentsOf: Self.idField)
            output.append(contentsOf: epoch.utf8)
            output.append(UInt8(ascii: ":"))
            RequestEncoder.appendDecimal(seq, to: &output)
            output.append(UInt8(ascii: ":"))
            RequestEncoder.appendDecimal(count, to: &output)
            output.append(0x0A)
        }
        output.append(contentsOf: Self.eventField)
        if members.failed {
            output.append(contentsOf: Self.errorName)
        } else if let name = members.event {
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[name]))
        } else {
            output.append(contentsOf: Self.changeName)
        }
        output.append(contentsOf: Self.dataField)
        output.append(contentsOf: line)
        output.append(contentsOf: Self.frameEnd)
    }

    /// ``frame(event:into:)`` of bytes in an array.
    public mutating func frame(event line: [UInt8], into output: inout [UInt8]) {
        line.withUnsafeBytes { frame(event: $0, into: &output) }
    }

    private static let idField = Array("id: ".utf8)
    private static let eventField = Array("event: ".utf8)
    private static let dataField = Array("\ndata: ".utf8)
    private static let frameEnd = Array("\n\n".utf8)
    private static let changeName = Array("change".utf8)
    private static let errorName = Array("error".utf8)
}

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
    public mutating func frame(event line: some Collection<UInt8>, into output: inout [UInt8]) {
        guard case .object(let members)? = try? JSONReader.parse(line) else { return }
        var name = "change"
        if case .string(let event)? = members[Field.event] { name = event }
        if members[Field.ok] == .bool(false) { name = "error" }
        if case .number(let number)? = members[Field.seq], let seq = number.intValue {
            if seq == self.seq { count += 1 } else { (self.seq, count) = (seq, 1) }
            if let had {
                if seq == had.seq, count <= had.count { return }
                if seq >= had.seq { self.had = nil }
            }
            output += Array("id: \(HTTPEventID(epoch: epoch, seq: seq, count: count))\n".utf8)
        }
        output += Array("event: \(name)\ndata: ".utf8)
        output += line
        output += Array("\n\n".utf8)
    }
}

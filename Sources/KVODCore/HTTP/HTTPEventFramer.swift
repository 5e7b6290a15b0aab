import KVOEngine
import KVOValues
import KVOProtocol

/// Turns a watch's lines, the `observe` reply and then its events, into
/// Server-Sent Events (`text/event-stream`, docs/HTTP.md): each event one
/// `event:` (its `event` member: `change`), `id:` (``HTTPEventID``) and
/// `data:` (the event's JSON line as the socket sends it), and a stream that
/// resumes leaves out what its `Last-Event-ID` says was had.
public struct HTTPEventFramer: Equatable, Sendable {
    /// How the reply to `observe` starts the stream.
    public enum Start: Equatable, Sendable {
        /// Stream, beginning with `prelude` (a compact watch's `event: observed`).
        case stream(prelude: [UInt8])
        /// Answer the request with this instead (the observe was refused).
        case refused(HTTPAnswer)
    }

    /// The daemon's epoch, as the reply gave it (the `id:` lines' first part).
    private var epoch: [UInt8] = []
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
        if case .string(let epoch)? = members[Field.epoch] { self.epoch = Array(epoch.utf8) }
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
    /// unless a resumed stream had it already. `cache` may have its frame: the
    /// line is the `slot`th of a write, and other streams' writes of the same
    /// events came before (``HTTPFrameCache``).
    public mutating func frame(event line: UnsafeRawBufferPointer, into output: inout [UInt8],
                               sharing cache: HTTPFrameCache, slot: Int) {
        switch cache.frame(of: line, slot: slot) {
        case .cached(let slot):
            guard admits(seq: cache.seq(inSlot: slot)) else { return }
            cache.appendFrame(inSlot: slot, epoch: epoch, count: count, to: &output)
        case .own(var frame):
            guard admits(seq: frame.seq) else { return }
            frame.append(epoch: epoch, count: count, to: &output)
        }
    }

    /// Appends the frame of one event line (without its newline) to `output`,
    /// unless a resumed stream had it already.
    public mutating func frame(event line: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        var frame = HTTPFrame(line)
        guard admits(seq: frame.seq) else { return }
        frame.append(epoch: epoch, count: count, to: &output)
    }

    /// Counts an event of `seq` (if it has one); false when a resumed stream had it.
    private mutating func admits(seq: Int?) -> Bool {
        guard let seq else { return true }
        if seq == self.seq { count += 1 } else { (self.seq, count) = (seq, 1) }
        if let had {
            if seq == had.seq, count <= had.count { return false }
            if seq >= had.seq { self.had = nil }
        }
        return true
    }

    /// ``frame(event:into:)`` of bytes in an array.
    public mutating func frame(event line: [UInt8], into output: inout [UInt8]) {
        line.withUnsafeBytes { frame(event: $0, into: &output) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import KVODCore

/// A watch (`/v1/watch`) served as a client connection: the ``ClientStream`` of
/// a ``ClientConnection`` whose input is one `observe` line and whose output,
/// the reply and then the events, goes out as Server-Sent Events
/// (``HTTPEventFramer``). What H2O has not yet written counts as the
/// connection's queued output, so a stream that does not keep up meets the
/// socket's slow-reader policy and output limits. Loop-confined.
final class HTTPEventStream: HTTPRequestStream {
    let key: UInt64
    private let request: H2ORequest
    private unowned let server: H2OServer
    var input: HTTPRequestLine
    private var framer: HTTPEventFramer
    /// The server's frames of the last write's lines, shared by its streams.
    private let frames: HTTPFrameCache
    /// The next line's place in the write being framed.
    private var slot = 0
    private enum Phase { case awaitingReply, streaming, ended }
    private var phase = Phase.awaitingReply
    /// Output up to the next newline.
    private var partialLine: [UInt8] = []
    /// Events that came before the reply (`initial`), framed once it came.
    private var early: [[UInt8]] = []
    /// Frames not yet handed to H2O.
    private var pending: [UInt8] = []
    /// ``pending``'s storage is kept between sends up to this size (as the shim keeps its buffer).
    private static let keptCapacity = 4096
    /// Bytes handed to H2O that it has not said it wrote.
    private var inFlight = 0
    /// The shared frames in flight, if they are (H2O reads them until it proceeds).
    private var sharedInFlight: HTTPFrozenBytes?
    /// The stream ends once what is in flight is written.
    private var endsAfterInFlight = false
    /// Whether the request is still H2O's (not gone).
    var isRequestAlive = true

    var queuedBytes: Int { pending.count + inFlight + early.reduce(0) { $0 + $1.count } }
    var onDrained: (() -> Void)?
    var onWritten: (() -> Void)?
    var onWriteError: ((UVError) -> Void)?

    /// Headers of the stream's answer besides its own (CORS).
    private let headers: [(String, String)]

    init(key: UInt64, request: H2ORequest, server: H2OServer, requestLine: [UInt8], resumed: HTTPEventID?,
         frames: HTTPFrameCache, headers: [(String, String)]) {
        self.key = key
        self.headers = headers
        self.request = request
        self.server = server
        input = HTTPRequestLine(requestLine)
        framer = HTTPEventFramer(resumed: resumed)
        self.frames = frames
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard phase != .ended, isRequestAlive else { return }
        guard let base = bytes.baseAddress else { return }
        // Whole lines, as a turn's events usually come: framed by another
        // stream already, or kept for the next ones.
        if phase == .streaming, partialLine.isEmpty, bytes.last == 0x0A {
            if let framed = frames.replay(bytes, framer: &framer) {
                if pending.isEmpty, inFlight == 0 {
                    send(shared: framed)
                    return
                }
                pending.append(contentsOf: framed.bytes)
            } else {
                let (before, start) = (framer, pending.count)
                takeLines(bytes, base: base)
                frames.remember(bytes, frames: pending[start...], before: before, after: framer)
            }
            sendPending()
            return
        }
        takeLines(bytes, base: base)
        sendPending()
    }

    /// Takes each whole line of `bytes`, and keeps the rest for the next write.
    private func takeLines(_ bytes: UnsafeRawBufferPointer, base: UnsafeRawPointer) {
        var start = 0
        // Each line's place in this write, where the shared cache may have its frame.
        slot = 0
        while start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) {
            let newline = base.distance(to: UnsafeRawPointer(found))
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            if partialLine.isEmpty {
                take(line: line)
            } else {
                partialLine.append(contentsOf: line)
                partialLine.withUnsafeBytes { take(line: $0) }
                partialLine.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        partialLine.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
    }

    private func take(line: UnsafeRawBufferPointer) {
        switch phase {
        case .awaitingReply:
            switch framer.start(reply: line) {
            case nil:
                early.append(Array(line))
            case .stream(let prelude)?:
                phase = .streaming
                request.startStream(status: 200, contentType: "text/event-stream",
                                    headers: [("cache-control", "no-cache")] + headers, on: server, key: key)
                pending += prelude
                for event in early { framer.frame(event: event, into: &pending) }
                early = []
            case .refused(let answer)?:
                phase = .ended
                request.respond(status: answer.status, contentType: answer.contentType,
                                headers: answer.headers.map { ($0.name, $0.value) } + headers, body: answer.body)
            }
        case .streaming:
            framer.frame(event: line, into: &pending, sharing: frames, slot: slot)
            slot += 1
        case .ended:
            break
        }
    }

    /// A comment, when nothing else waits: proxies close streams that say nothing.
    func sendHeartbeat() {
        guard phase == .streaming, queuedBytes == 0 else { return }
        pending += HTTPEventFramer.heartbeat
        sendPending()
    }

    /// Hands what waits to H2O, one part at a time.
    private func sendPending() {
        guard phase == .streaming, isRequestAlive, inFlight == 0, !pending.isEmpty else { return }
        inFlight = pending.count
        request.send(pending, final: false)
        // H2O has its own copy: a large buffer kept here would be memory the output limits no longer count.
        pending.removeAll(keepingCapacity: pending.capacity <= Self.keptCapacity)
    }

    /// Hands H2O frames other streams send too, without copying them: they
    /// are held until H2O has written them.
    private func send(shared framed: HTTPFrozenBytes) {
        guard phase == .streaming, isRequestAlive else { return }
        inFlight = framed.bytes.count
        sharedInFlight = framed
        request.send(borrowing: framed.bytes)
    }

    /// H2O wrote the part in flight.
    func proceeded() {
        inFlight = 0
        sharedInFlight = nil
        guard isRequestAlive else { return }
        if endsAfterInFlight {
            endStream()
            return
        }
        sendPending()
        onWritten?()
        if queuedBytes == 0 { onDrained?() }
    }

    /// Ends the stream with what waits.
    private func endStream() {
        guard phase == .streaming else { return }
        phase = .ended
        request.send(pending, final: true)
        pending = []
    }

    func close(onClosed: (() -> Void)?) {
        input.end()
        if isRequestAlive {
            switch phase {
            case .awaitingReply:
                phase = .ended
                let answer = HTTPAnswer(HTTPRefusal(.unavailable, "kvod closed the watch before it began"))
                request.respond(status: answer.status, contentType: answer.contentType, headers: headers, body: answer.body)
            case .streaming:
                if inFlight == 0 { endStream() } else { endsAfterInFlight = true }
            case .ended:
                break
            }
        }
        onClosed?()
    }
}

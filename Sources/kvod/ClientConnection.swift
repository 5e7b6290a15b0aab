import KVOEngine
import Logging

/// One connected client: its socket, its line framer and its engine-side
/// ``ClientController``. Loop-confined.
///
/// Reads become lines, lines become engine calls; the engine's output is
/// written when the daemon flushes, once per loop iteration. With a data
/// directory, output that reports uncommitted changes is held until the
/// storage writer has committed them (``GroupCommit``). Closing unobserves
/// everything at once and frees the socket only after libuv's close callback.
final class ClientConnection: ClientOutputDelegate {
    let stream: UVStream
    let controller: ClientController
    private unowned let daemon: Daemon
    private var framer: LineFramer
    private(set) var isClosing = false
    /// Whether the connection waits in the daemon's list of connections to flush.
    var isScheduledForFlush = false
    /// Whether the last flush wrote more than ``smallOutput`` bytes.
    private var lastFlushWasLarge = false
    /// Output buffers up to this size are always kept for the next flush.
    private static let smallOutput = 4096
    /// Output waiting for its batch to be committed: (batch id, bytes), oldest first.
    private var held: [(batch: UInt64, bytes: [UInt8])] = []
    /// Whether the connection waits in the daemon's list of connections holding output.
    var isHoldingOutput: Bool { !held.isEmpty }
    /// Set by a flushing close while output is held: close once it is written.
    private var closesWhenReleased = false
    let peer: String

    init(stream: UVStream, daemon: Daemon) {
        self.stream = stream
        self.daemon = daemon
        self.controller = daemon.engine.makeClient()
        self.framer = LineFramer(maxLineBytes: daemon.configuration.maxLineBytes)
        if let credentials = stream.peerCredentials() {
            peer = "pid=\(credentials.pid) uid=\(credentials.uid) gid=\(credentials.gid)"
        } else {
            peer = "pid=? uid=? gid=?"
        }
        controller.outputDelegate = self
    }

    func start() {
        do {
            try stream.startReading(
                onBytes: { [unowned self] bytes in self.received(bytes) },
                onEnd: { [unowned self] error in self.ended(error) })
        } catch {
            daemon.logger.debug("client #\(controller.id) cannot be read: \(error)")
            close(flush: false)
            return
        }
        stream.onWriteError = { [unowned self] error in
            self.daemon.logger.debug("client #\(self.controller.id) write failed: \(error)")
            self.close(flush: false)
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        let engine = daemon.engine
        let maxLineBytes = framer.maxLineBytes
        framer.feed(bytes) { frame in
            switch frame {
            case .line(let line): engine.handle(line: line, from: controller)
            case .tooLarge: engine.handleLineTooLarge(maxLineBytes: maxLineBytes, from: controller)
            }
        }
    }

    /// The peer closed its side (nil) or the read failed.
    private func ended(_ error: UVError?) {
        if let error {
            daemon.logger.debug("client #\(controller.id) read failed: \(error)")
        }
        // A client that half-closes after its last request still gets the replies.
        close(flush: error == nil)
    }

    func clientControllerHasOutput(_ controller: ClientController) {
        daemon.scheduleFlush(self)
    }

    /// Hands pending output to the socket, or holds it until the changes it
    /// may report are committed. Returns how many bytes of buffer capacity it
    /// gave back.
    @discardableResult
    func flush() -> Int {
        guard !isClosing, !controller.output.isEmpty else { return 0 }
        if let batch = daemon.groupCommit?.batchToWaitFor {
            hold(controller.output, until: batch)
        } else {
            controller.output.withUnsafeBytes { stream.write($0) }
        }
        // The buffer's storage is kept for the next flush when it is small, or
        // when large flushes come in a row (a busy observer: regrowing it each
        // time would cost more than the events). A single large burst gives
        // it back: 10,000 clients that each got 100 replies at once kept a
        // fifth of the daemon's memory that way (docs/PERFORMANCE.md).
        let large = controller.output.count > Self.smallOutput
        let capacity = controller.output.capacity
        let keep = capacity <= Self.smallOutput || (large && lastFlushWasLarge && capacity <= 1 << 16)
        controller.output.removeAll(keepingCapacity: keep)
        lastFlushWasLarge = large
        return keep ? 0 : capacity
    }

    private func hold(_ bytes: [UInt8], until batch: UInt64) {
        if held.isEmpty { daemon.connectionHoldsOutput(self) }
        if held.last?.batch == batch {
            held[held.count - 1].bytes.append(contentsOf: bytes)
        } else {
            held.append((batch, bytes))
        }
    }

    /// Writes the output held for batches up to `committed`, in one write.
    func releaseOutput(upTo committed: UInt64) {
        let ready = held.prefix { $0.batch <= committed }
        guard !ready.isEmpty else { return }
        held.removeFirst(ready.count)
        stream.write(ready.count == 1 ? ready.first!.bytes : ready.flatMap(\.bytes))
        if held.isEmpty && closesWhenReleased { stream.shutdownThenClose(onClosed: closedCallback) }
    }

    /// Ends the connection: its observations go at once; with `flush`, what
    /// is queued is written before the socket closes.
    func close(flush: Bool) {
        guard !isClosing else { return }
        if flush { self.flush() }
        isClosing = true
        daemon.engine.closeClient(controller)
        daemon.logger.debug("client #\(controller.id) disconnected (\(peer))")
        if flush && !held.isEmpty {
            // No more requests: their changes would be applied and never answered.
            stream.stopReading()
            closesWhenReleased = true
        } else if flush {
            stream.shutdownThenClose(onClosed: closedCallback)
        } else {
            held = []
            stream.close(onClosed: closedCallback)
        }
    }

    private var closedCallback: () -> Void {
        { [daemon] in daemon.connectionClosed(self) }
    }
}

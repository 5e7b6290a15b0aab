import KVOEngine
import Logging

/// One connected client: its socket, its line framer and its engine-side
/// ``ClientController``. Loop-confined.
///
/// Reads become lines, lines become engine calls; the engine's output is
/// written when the daemon flushes, once per loop iteration. Closing unobserves
/// everything at once and frees the socket only after libuv's close callback.
final class ClientConnection: ClientOutputDelegate {
    let stream: UVStream
    let controller: ClientController
    private unowned let daemon: Daemon
    private var framer: LineFramer
    private(set) var isClosing = false
    /// Whether the connection waits in the daemon's list of connections to flush.
    var isScheduledForFlush = false
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

    /// Hands pending output to the socket.
    func flush() {
        guard !isClosing, !controller.output.isEmpty else { return }
        controller.output.withUnsafeBytes { stream.write($0) }
        controller.output.removeAll(keepingCapacity: controller.output.capacity <= 1 << 16)
    }

    /// Ends the connection: its observations go at once; with `flush`, what
    /// is queued is written before the socket closes.
    func close(flush: Bool) {
        guard !isClosing else { return }
        if flush { self.flush() }
        isClosing = true
        daemon.engine.closeClient(controller)
        daemon.logger.debug("client #\(controller.id) disconnected (\(peer))")
        let onClosed: () -> Void = { [daemon] in daemon.connectionClosed(self) }
        if flush {
            stream.shutdownThenClose(onClosed: onClosed)
        } else {
            stream.close(onClosed: onClosed)
        }
    }
}

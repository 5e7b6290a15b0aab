import KVOEngine
import Logging

/// One connected client: its socket, its line framer and its engine-side
/// ``ClientController``. Loop-confined.
///
/// Reads become lines, lines become engine calls; the engine's output is
/// written when the daemon flushes, once per loop iteration. Closing unobserves
/// everything at once and frees the socket only after libuv's close callback.
///
/// Output limits (``OutputLimits``): after each write the controller learns how
/// much more it may queue; over that, or over the soft limit for too long, it
/// is congested and holds or drops events by each observation's policy. A
/// client whose replies pile up is not read from until they drain (see
/// ``InputThrottle``), so nothing it asked for is ever dropped.
final class ClientConnection: ClientOutputDelegate {
    let stream: UVStream
    let controller: ClientController
    private unowned let daemon: Daemon
    private var framer: LineFramer
    private var throttle = InputThrottle()
    private(set) var isClosing = false
    /// Whether the connection waits in the daemon's list of connections to flush.
    var isScheduledForFlush = false
    /// Loop time (ms) since which queued output has stayed over the soft limit.
    private var overSoftLimitSince: UInt64?
    /// `pid=… uid=… gid=…`, for log lines.
    let peer: String

    init(stream: UVStream, daemon: Daemon) {
        self.stream = stream
        self.daemon = daemon
        self.controller = daemon.engine.makeClient()
        self.framer = LineFramer(maxLineBytes: daemon.configuration.maxLineBytes)
        if let peer = stream.peerCredentials() {
            controller.credentials = PeerCredentials(pid: peer.pid, uid: peer.uid, gid: peer.gid,
                                                     groups: stream.peerGroups())
        }
        peer = controller.credentials?.description ?? "pid=? uid=? gid=?"
        controller.outputDelegate = self
        controller.outputAllowance = daemon.configuration.outputLimits.hardBytes
    }

    private var limits: OutputLimits { daemon.configuration.outputLimits }
    private var logName: String { "client #\(controller.id) (\(peer))" }

    func start() {
        do {
            try stream.startReading(
                onBytes: { [unowned self] bytes in self.received(bytes) },
                onEnd: { [unowned self] error in self.ended(error) })
        } catch {
            daemon.logger.debug("\(logName) cannot be read: \(error)")
            close(flush: false)
            return
        }
        stream.onWriteError = { [unowned self] error in
            self.daemon.logger.debug("\(self.logName) write failed: \(error)")
            self.close(flush: false)
        }
        stream.onDrained = { [unowned self] in self.daemon.scheduleFlush(self) }
    }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer) {
        framer.feed(bytes) { frame in
            if throttle.isActive {
                throttle.defer(frame)
            } else {
                handle(frame)
                if isOverHardLimit { pauseInput() }
            }
        }
    }

    private func handle(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let line): daemon.engine.handle(line: line, from: controller)
        // Not framer.maxLineBytes: this runs inside framer.feed's exclusive access.
        case .tooLarge: daemon.engine.handleLineTooLarge(maxLineBytes: daemon.configuration.maxLineBytes,
                                                         from: controller)
        }
    }

    /// Output waiting for this client, in the engine and in the socket's queue.
    private var pendingOutputBytes: Int { controller.output.count + stream.queuedBytes }
    private var isOverHardLimit: Bool { pendingOutputBytes > limits.hardBytes }

    private func pauseInput() {
        guard !throttle.isActive else { return }
        throttle.isActive = true
        stream.stopReading()
        daemon.logger.debug("\(logName) not read from: \(pendingOutputBytes) bytes of replies wait")
    }

    /// Answers what was put aside while paused, then reads again, unless the
    /// replies fill the limit again first.
    private func resumeInput() {
        guard throttle.isActive else { return }
        while !isOverHardLimit, throttle.handleNext({ handle($0) }) {}
        guard !throttle.hasDeferred, !isOverHardLimit, !isClosing else { return }
        throttle.isActive = false
        if throttle.peerFinished { return close(flush: true) }
        do {
            try stream.resumeReading()
        } catch {
            // Reading had ended (EOF seen before the pause): nothing more will come.
        }
    }

    /// The peer closed its side (nil) or the read failed.
    private func ended(_ error: UVError?) {
        if let error {
            daemon.logger.debug("\(logName) read failed: \(error)")
        }
        // A client that half-closes after its last request still gets the
        // replies, also those to lines put aside while it was throttled.
        if error == nil, throttle.hasDeferred {
            throttle.peerFinished = true
            return
        }
        close(flush: error == nil)
    }

    // MARK: Output

    func clientControllerHasOutput(_ controller: ClientController) {
        daemon.scheduleFlush(self)
    }

    func clientControllerBecameCongested(_ controller: ClientController) {
        daemon.logger.notice("\(logName) is not keeping up (\(pendingOutputBytes) bytes wait); holding its events")
    }

    func clientController(_ controller: ClientController, mustDisconnectBecause reason: String) {
        // Called during dispatch: close from the flush, not from inside the engine.
        daemon.scheduleFlush(self)
    }

    /// Hands pending output to the socket, updates the controller's allowance
    /// and, once the socket's queue is empty, ends congestion and throttling.
    func flush() {
        while !isClosing {
            if let reason = controller.disconnectReason {
                daemon.logger.warning("\(logName) disconnected: \(reason) (\(stream.queuedBytes) bytes were waiting)")
                close(flush: false)
                return
            }
            if !controller.output.isEmpty {
                controller.output.withUnsafeBytes { stream.write($0) }
                controller.output.removeAll(keepingCapacity: controller.output.capacity <= 1 << 16)
            }
            checkLimits()
            // Both steps below may produce output; loop to write it now rather
            // than after the next poll, which might wait for a client that
            // waits for us.
            guard stream.queuedBytes == 0, controller.isCongested || throttle.isActive else { return }
            if controller.isCongested {
                daemon.logger.info("\(logName) caught up; sending \(controller.heldEventCount) held event(s)")
            }
            controller.markDrained()
            resumeInput()
            if controller.output.isEmpty { return }
        }
    }

    /// Redis's client-output-buffer-limit, applied to what the socket queues.
    private func checkLimits() {
        let queued = stream.queuedBytes
        controller.outputAllowance = max(0, limits.hardBytes - queued)
        guard queued > limits.softBytes else {
            overSoftLimitSince = nil
            return
        }
        let now = daemon.loopNow
        if let since = overSoftLimitSince {
            if now - since >= limits.softMilliseconds { controller.markCongested() }
        } else {
            overSoftLimitSince = now
        }
    }

    /// Ends the connection: its observations go at once; with `flush`, what
    /// is queued is written before the socket closes.
    func close(flush: Bool) {
        guard !isClosing else { return }
        if flush { self.flush() }
        guard !isClosing else { return }
        isClosing = true
        throttle = InputThrottle()
        daemon.engine.closeClient(controller)
        daemon.logger.debug("\(logName) disconnected")
        let onClosed: () -> Void = { [daemon] in daemon.connectionClosed(self) }
        if flush {
            stream.shutdownThenClose(onClosed: onClosed)
        } else {
            stream.close(onClosed: onClosed)
        }
    }
}

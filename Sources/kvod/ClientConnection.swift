import KVODCore
import KVOEngine
import KVOProtocol
import KVOValues
import Logging

/// One connected client: its socket, its line framer and its engine-side
/// ``ClientController``. Loop-confined. Reads become lines, lines become
/// engine calls; the engine's output is written when the daemon flushes, once
/// per loop iteration, or held until its changes are committed (``GroupCommit``).
/// Closing unobserves everything at once and frees the socket only after
/// libuv's close callback.
///
/// The decisions are ``ConnectionState``'s (reading, pausing, flushing,
/// closing) and its ``SlowReaderPolicy``'s (output limits): this class feeds
/// them libuv's callbacks and the engine's state, and performs the actions
/// they return. It reaches the daemon only through its ``ConnectionHost``.
final class ClientConnection: ClientOutputDelegate {
    let stream: any ClientStream
    let controller: ClientController
    /// All the connection reaches of the daemon, which holds its connections
    /// and outlives them: no reference counting on a path taken several times
    /// per connection per turn. An unowned(unsafe) reference still took a
    /// retain and a release around each call through it; ``withHost(_:)`` borrows it.
    private let hostReference: Unmanaged<ConnectionHost>
    private var host: ConnectionHost { hostReference.takeUnretainedValue() }
    private var framer: LineFramer
    /// Reading, pausing and closing, decided.
    private var state: ConnectionState
    /// Whether the connection waits in the daemon's list to be read next turn.
    var isWaitingForTurn = false
    var isClosing: Bool { state.isClosing }
    /// Whether the connection waits in the daemon's list of connections to flush.
    var isScheduledForFlush = false
    /// Output waiting for its batch to be committed.
    private var held = HeldOutput()
    /// What this connection last told the daemon's ``ClientMemoryBudget``.
    var clientMemoryReport = ClientMemoryBudget.Report()
    /// Since when (loop ms) output has waited for the client without it
    /// taking all of it; nil: nothing waits (``ClientMemoryBudget/evictee(among:now:patienceMilliseconds:bytes:unreadSince:)``).
    private(set) var unreadSince: UInt64?
    /// Whether the connection waits in the daemon's list of connections holding output.
    var isHoldingOutput: Bool { !held.isEmpty }
    /// When (loop ms) the oldest output held now was held (`info`'s `storage.heldOutputOldestMs`).
    var heldSince: UInt64? { held.oldestSince }
    /// `pid=… uid=… gid=…`, for log lines: written when a line is, not for
    /// each connection (an HTTP request's is one, and is rarely logged).
    var peer: String { controller.credentials?.description ?? "pid=? uid=? gid=?" }

    /// `credentials`: who connected, as the kernel said (nil: it did not).
    init(stream: any ClientStream, credentials: PeerCredentials?, host: ConnectionHost) {
        self.stream = stream
        hostReference = Unmanaged.passUnretained(host)
        self.controller = host.engine.makeClient()
        self.framer = LineFramer(maxLineBytes: host.maxLineBytes)
        self.state = ConnectionState(limits: host.outputLimits)
        controller.credentials = credentials
        controller.outputDelegate = self
        controller.outputAllowance = host.outputLimits.hardBytes
    }

    deinit { controller.outputDelegate = nil }

    /// Runs `body` with the host borrowed, neither retained nor released: for
    /// the paths every flushed connection takes each turn.
    @inline(__always)
    private func withHost<Result>(_ body: (ConnectionHost) -> Result) -> Result {
        hostReference._withUnsafeGuaranteedRef(body)
    }

    var logName: String { "client #\(controller.id) (\(peer))" }

    func start() {
        do {
            try stream.startReading(
                onBytes: { [unowned self] bytes in self.received(bytes) },
                onEnd: { [unowned self] error in self.ended(error) })
        } catch {
            host.logger.debug("\(logName) cannot be read: \(error)")
            close(flush: false)
            return
        }
        stream.onWriteError = { [unowned self] error in
            self.host.logger.debug("\(self.logName) write failed: \(error)")
            self.close(flush: false)
        }
        stream.onDrained = { [unowned self] in self.host.scheduleFlush(self) }
        stream.onWritten = { [unowned self] in self.reportWritten() }
    }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer) {
        // One strong reference for the whole read: each use of the unowned
        // one retains and releases it again.
        let host = self.host
        host.receivedBytes += bytes.count
        let readStarted = UVLoop.hrtime
        var lastHandled = readStarted
        framer.feed(bytes) { frame in
            guard state.frameArrived(frame) else { return }
            lastHandled = handle(frame, host, since: readStarted, after: lastHandled)
            perform(state.frameHandled(inputHeld: isInputHeld, turn: host.turn))
        }
        queuePipelinedChanges()
    }

    /// Over etcd, the change requests just read in a row go as one proposal,
    /// with other connections' at the turn's end (`Daemon.flushQueued`);
    /// nothing more is read until they are answered.
    private func queuePipelinedChanges() {
        guard host.engine.queuePipelinedChanges(of: controller) else { return }
        perform(state.frameHandled(inputHeld: true, turn: host.turn))
    }

    /// The next turn began: handles what waited, within the new budget.
    func continueTurn() {
        if state.turnBegan() { resumeInput() }
    }

    /// `host`: the connection's, held strongly by the caller; `started`: when kvod began on the
    /// bytes (``ConnectionHost/requestDurations``), `previous`: when the frame before this one was
    /// handled. Returns when this one was.
    @discardableResult
    private func handle(_ frame: LineFramer.Frame, _ host: ConnectionHost, since started: UInt64,
                        after previous: UInt64) -> UInt64 {
        host.pacing.noteRequest()
        switch frame {
        case .line(let line):
            state.budget.spend(bytes: line.count, turn: host.turn)
            let outcome = host.requestDecoder.decode(line)
            host.engine.handle(outcome, from: controller)
            let handled = UVLoop.hrtime
            state.budget.spend(nanoseconds: handled &- previous, turn: host.turn)
            if case .request(let request) = outcome {
                let opIndex = request.operation.op.ordinal
                host.requestDurations.record(labelIndex: opIndex, nanoseconds: handled &- started)
                host.slowTurns.noteRequest(opIndex: opIndex, nanoseconds: handled &- previous, client: controller.id)
            }
            return handled
        // Not framer.maxLineBytes: this runs inside framer.feed's exclusive access.
        case .tooLarge:
            host.engine.handleLineTooLarge(maxLineBytes: host.maxLineBytes, from: controller)
            return UVLoop.hrtime
        }
    }

    /// Counts `bytes` of work (a `backup` chunk) against this turn's share of the loop.
    func spendTurn(bytes: Int) {
        state.budget.spend(bytes: bytes, turn: host.turn)
    }

    /// Output written or held for a commit, not yet taken by the client.
    private var queuedOutputBytes: Int { stream.queuedBytes + held.byteCount }
    /// Output waiting for this client: in the engine, held for a commit, in the socket's queue.
    var pendingOutputBytes: Int { controller.output.count + queuedOutputBytes }
    /// Whether no further request is read now: replies pile up, or the last
    /// change's reply waits for its observers (`await`; replies keep request order).
    private var isInputHeld: Bool {
        state.holdsInput(pendingBytes: pendingOutputBytes, awaiting: controller.isAwaiting)
    }

    /// Answers what was put aside while paused, then reads again, unless the
    /// replies fill the limit again first.
    private func resumeInput() {
        let resumed = UVLoop.hrtime
        var lastHandled = resumed
        while let frame = state.nextDeferred(inputHeld: isInputHeld, turn: host.turn) {
            frame.withFrame { lastHandled = handle($0, host, since: resumed, after: lastHandled) }
        }
        _ = host.engine.queuePipelinedChanges(of: controller)
        perform(state.resumed(inputHeld: isInputHeld, turn: host.turn))
    }

    /// The peer closed its side (nil) or the read failed.
    private func ended(_ error: UVError?) {
        if let error {
            host.logger.debug("\(logName) read failed: \(error)")
        }
        perform(state.peerEnded(failed: error != nil, awaiting: controller.isAwaiting))
    }

    private func perform(_ actions: [ConnectionState.Action]) {
        for action in actions {
            switch action {
            case .stopReading(let logged):
                stream.stopReading()
                guard logged else { continue }
                host.logger.debug(controller.isAwaiting
                    ? "\(logName) not read from while its change awaits its observers"
                    : "\(logName) not read from: \(pendingOutputBytes) bytes of replies wait")
            case .resumeReading:
                // It fails once reading had ended (EOF seen before the pause): nothing more will come.
                try? stream.resumeReading()
            case .continueNextTurn:
                host.turnYield?.continueNextTurn(self)
            case .close(let flush):
                close(flush: flush)
            }
        }
    }

    // MARK: Reuse

    /// Whether the connection is idle with nothing of its own left: not
    /// closing, paused, read or flushed next, holding output for a commit or
    /// part of a line. The engine's side is ``Engine/setAside(_:)``'s to judge.
    var isIdle: Bool {
        !state.isClosing && !state.isPaused && !state.isPausedForTurn && !state.hasDeferred
            && !isScheduledForFlush && !isWaitingForTurn && held.isEmpty && framer.bufferedByteCount == 0
    }

    /// Starts over, set aside for a later request: reading, pausing and the
    /// turn's budget as a new connection's (no line buffer kept), the output
    /// allowance whole again.
    func startOver() {
        state = ConnectionState(limits: host.outputLimits)
        framer = LineFramer(maxLineBytes: host.maxLineBytes)
        controller.outputAllowance = host.outputLimits.hardBytes
        controller.holdsQueuedOutput = false
        unreadSince = nil
    }

    // MARK: Output

    func clientControllerHasOutput(_ controller: ClientController) {
        withHost { $0.scheduleFlush(self) }
    }

    func clientControllerBecameCongested(_ controller: ClientController) {
        // A change to many clients may hold hundreds at once for the budget: not a line each at notice.
        if controller.isCongestedForClientMemory {
            host.logger.debug("\(logName): all clients' output is at --max-client-memory; holding its events")
        } else {
            host.logger.notice("\(logName) is not keeping up (\(pendingOutputBytes) bytes wait); holding its events")
        }
    }

    func clientController(_ controller: ClientController, mustDisconnectBecause reason: String) {
        // Called during dispatch: close from the flush, not from inside the engine.
        host.scheduleFlush(self)
    }

    /// Hands pending output to the socket, or holds it until the changes it
    /// may report are committed; updates the controller's allowance and, once
    /// nothing waits (neither in the socket's queue nor for a commit), ends
    /// congestion and throttling. Returns how many bytes of buffer capacity
    /// it gave back. The steps are ``ConnectionState``'s to decide.
    @discardableResult
    func flush() -> Int {
        var released = 0
        var action = state.flushBegan(disconnecting: controller.disconnectReason != nil,
                                      outputBytes: controller.output.count, uncommittedBatch: uncommittedBatch)
        while true {
            switch action {
            case .disconnect:
                host.logger.warning("\(logName) disconnected: \(controller.disconnectReason ?? "") (\(queuedOutputBytes) bytes were waiting)")
                close(flush: false)
                return released
            case .write, .hold:
                released += writeOutput(action)
                fallthrough
            case .applyLimits:
                applyLimits()
                action = state.limitsApplied(queuedBytes: queuedOutputBytes, congested: controller.isCongested)
            case .drain:
                let wasCongested = controller.isCongested
                let heldBefore = controller.heldEventCount
                controller.markDrained()
                if wasCongested, !controller.isCongested {
                    host.logger.info("\(logName) caught up; sending the last \(heldBefore) held event(s)")
                }
                resumeInput()
                action = state.drained(outputBytes: controller.output.count,
                                       disconnecting: controller.disconnectReason != nil, uncommittedBatch: uncommittedBatch)
            case .done:
                return released
            }
        }
    }

    /// The batch whose commit output written now must wait for (group commit).
    private var uncommittedBatch: UInt64? { withHost { $0.groupCommit?.batchToWaitFor } }

    /// Writes the controller's output, or holds it for its batch (`.hold`);
    /// returns the buffer capacity given back (``ConnectionState/outputTaken(bytes:capacity:)``).
    private func writeOutput(_ action: ConnectionState.FlushAction) -> Int {
        let count = controller.output.count
        withHost { $0.sentBytes += count }
        // Unretained: the output is neither changed nor released until it is taken below.
        if case .hold(let batch) = action {
            hold(controller.output.unsafeBytes, until: batch)
        } else {
            stream.write(controller.output.unsafeBytes)
        }
        controller.noteOutputTaken()
        let capacity = controller.output.capacity
        let keep = state.outputTaken(bytes: controller.output.count, capacity: capacity)
        controller.output.removeAll(keepingCapacity: keep)
        reportWritten()
        return keep ? 0 : capacity
    }

    /// Redis's client-output-buffer-limit, applied to what the socket queues
    /// and what waits for a commit.
    private func applyLimits() {
        withHost { host in
            // Each figure read once: a flush per connection per turn takes this path.
            let now = host.now
            let inSocket = stream.queuedBytes
            let queued = inSocket + held.byteCount
            let (allowance, congested) = state.outputQueued(queued, now: now)
            controller.outputAllowance = allowance
            noteQueue(queued, inSocket: inSocket, now: now)
            let heldEvents = controller.heldEventBytes
            let waiting = controller.output.count + queued + heldEvents
            if congested || host.clientMemory.report(waiting, held: heldEvents, replacing: &clientMemoryReport) {
                controller.markCongested()
            }
        }
    }

    /// Whether anything waits for the client (`queued`: the engine's small events still
    /// reach one that holds nothing), and since when its socket (`inSocket`) has not been
    /// emptied: output held for a commit is kvod's wait, not the client's.
    private func noteQueue(_ queued: Int, inSocket: Int, now: UInt64) {
        controller.holdsQueuedOutput = queued > 0
        if inSocket == 0 { unreadSince = nil } else if unreadSince == nil { unreadSince = now }
    }

    private func hold(_ bytes: UnsafeRawBufferPointer, until batch: UInt64) {
        if held.hold(bytes, until: batch, now: host.now) { host.holdingOutput.append(self) }
    }

    /// Writes the output held for batches up to `committed`, in one write.
    func releaseOutput(upTo committed: UInt64) {
        guard let bytes = held.release(upTo: committed) else { return }
        stream.write(bytes)
        // Written whole, no drain will call back: what the engine knows of the queue is renewed here.
        noteQueue(queuedOutputBytes, inSocket: stream.queuedBytes, now: host.now)
        reportWritten()
        if state.outputReleased(holdsMore: !held.isEmpty) {
            stream.shutdownThenClose(onClosed: closedCallback)
        } else if state.wantsFlushAfterRelease(congested: controller.isCongested) {
            // Less waits for a commit now: the flush looks at the limits again
            // (and ends congestion or throttling once everything is written).
            host.scheduleFlush(self)
        }
    }

    /// Tells the controller how far its output reached the kernel, for
    /// writers that await it (`await: written`); nothing when none does.
    private func reportWritten() {
        guard controller.hasWrittenWaits else { return }
        let pending = UInt64(queuedOutputBytes)
        controller.outputReachedKernel(upTo: controller.outputBytesTaken - pending)
    }

    /// Ends the connection: its observations go at once; with `flush`, what
    /// is queued is written before the socket closes.
    func close(flush: Bool) {
        guard !isClosing else { return }
        if flush { self.flush() }
        guard let ending = state.close(flush: flush, holdsOutput: !held.isEmpty) else { return }
        host.timed("a client closed") { host.engine.closeClient(controller) }
        host.clientClosed(controller)
        host.logger.debug("\(logName) disconnected")
        switch ending {
        case .afterHeldOutput:
            stream.stopReading()
        case .shutdownThenClose:
            stream.shutdownThenClose(onClosed: closedCallback)
        case .closeNow:
            held.discard()
            stream.close(onClosed: closedCallback)
        }
    }

    private var closedCallback: () -> Void {
        { [host] in host.connectionClosed(self) }
    }
}

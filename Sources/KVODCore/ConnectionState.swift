import KVOEngine
import KVOValues

/// One client connection's reading, flow control and closing as a pure value:
/// the daemon's ``ClientConnection`` (the shell around libuv) feeds it what
/// happened and performs the ``Action``s it returns. No sockets, no clock of
/// its own: the loop's turn and time come in with the events, so it is
/// tested by feeding events and reading actions.
///
/// Reading pauses for three reasons, and resumes only when none holds:
/// replies pile up past the hard limit or the last change awaits its
/// observers (`inputHeld`, which the shell reads off the engine), or the
/// connection used up this turn's ``TurnBudget``. Lines that arrived in the
/// read under way wait in ``DeferredFrames``, in order.
public struct ConnectionState: Sendable {
    /// What the shell does.
    public enum Action: Sendable, Equatable {
        /// Stop reading the socket; `logged`: say so (paused for the replies
        /// or an await, not for a turn).
        case stopReading(logged: Bool)
        /// Read the socket again.
        case resumeReading
        /// Call ``turnBegan()`` at the start of the next loop turn.
        case continueNextTurn
        /// End the connection; `flush`: write what waits first.
        case close(flush: Bool)
    }

    /// How the socket is closed once the connection ends.
    public enum Ending: Sendable, Equatable {
        /// Written output first, then shut down and closed.
        case shutdownThenClose
        /// Closed at once; what waited is dropped.
        case closeNow
        /// Not read any more; shut down and closed once the output held for
        /// a commit is written (``outputReleased(holdsMore:)``).
        case afterHeldOutput
    }

    private var deferred = DeferredFrames()
    /// This turn's share of the loop: the shell counts each line (and its time) into it.
    public var budget = TurnBudget()
    /// Whether the socket is not read (for any reason).
    public private(set) var isPaused = false
    /// Whether the pause ends with the next turn rather than with drained output.
    public private(set) var isPausedForTurn = false
    /// Whether the pause was said to be for the replies or an await (logged once).
    private var isPausedForInput = false
    /// The peer half-closed while lines still waited or a change awaited: close after them.
    public private(set) var peerFinished = false
    public private(set) var isClosing = false
    /// Closing waits for output held for a commit.
    public private(set) var closesWhenReleased = false
    /// Whether the engine's last output was over ``smallOutputBytes`` (``outputTaken(bytes:capacity:)``).
    @usableFromInline var lastOutputWasLarge = false
    /// Output buffers up to this size are always kept for the next flush.
    @usableFromInline static let smallOutputBytes = 4096
    /// Output limits and the soft limit's clock.
    public private(set) var slowReader: SlowReaderPolicy

    public init(limits: OutputLimits) {
        slowReader = SlowReaderPolicy(limits: limits)
    }

    /// Whether lines wait to be handled.
    public var hasDeferred: Bool { deferred.hasDeferred }

    // MARK: Reading

    /// A frame was read: handle it now (true), or it was kept because
    /// reading is paused (false).
    public mutating func frameArrived(_ frame: LineFramer.Frame) -> Bool {
        guard isPaused else { return true }
        deferred.defer(frame)
        return false
    }

    /// A frame read from the socket was handled; `inputHeld`: the engine
    /// says no further request is read now.
    public mutating func frameHandled(inputHeld: Bool, turn: UInt64) -> [Action] {
        if inputHeld {
            guard !isPaused else { return [] }
            isPaused = true
            isPausedForInput = true
            return [.stopReading(logged: true)]
        }
        guard budget.isSpent(turn: turn) else { return [] }
        isPaused = true
        return [.stopReading(logged: false)] + yieldTurn()
    }

    /// The next frame put aside, if reading may go on (`inputHeld` false, the
    /// turn's budget not spent); call ``resumed(inputHeld:turn:)`` once it
    /// returns nil.
    public mutating func nextDeferred(inputHeld: Bool, turn: UInt64) -> DeferredFrames.Frame? {
        guard isPaused, !isPausedForTurn, !inputHeld, !budget.isSpent(turn: turn) else { return nil }
        return deferred.takeNext()
    }

    /// The lines put aside were handled as far as they could: what next.
    public mutating func resumed(inputHeld: Bool, turn: UInt64) -> [Action] {
        guard isPaused, !isPausedForTurn, !isClosing else { return [] }
        if inputHeld {
            // Paused for a turn first, then held by the replies or an await: said once.
            guard !isPausedForInput else { return [] }
            isPausedForInput = true
            return [.stopReading(logged: true)]
        }
        if budget.isSpent(turn: turn) { return yieldTurn() }
        guard !deferred.hasDeferred else { return [] }
        isPaused = false
        isPausedForInput = false
        return peerFinished ? [.close(flush: true)] : [.resumeReading]
    }

    /// The next loop turn began: the budget is new. Returns whether the
    /// connection goes on (then handle the deferred lines as after a drain).
    public mutating func turnBegan() -> Bool {
        guard isPausedForTurn, !isClosing else { return false }
        isPausedForTurn = false
        return true
    }

    private mutating func yieldTurn() -> [Action] {
        isPausedForTurn = true
        return [.continueNextTurn]
    }

    /// The peer closed its side (`failed` false) or the read failed;
    /// `awaiting`: the last change's reply still waits for its observers.
    public mutating func peerEnded(failed: Bool, awaiting: Bool) -> [Action] {
        // A client that half-closes after its last request still gets the
        // replies, also those to lines put aside while it was paused.
        if !failed, deferred.hasDeferred || awaiting {
            peerFinished = true
            return []
        }
        return [.close(flush: !failed)]
    }

    // MARK: Output

    /// After a write, `queuedBytes` wait for the client at loop time `now`:
    /// how much more the engine may produce, and whether the client is
    /// congested for staying over the soft limit too long.
    public mutating func outputQueued(_ queuedBytes: Int, now: UInt64) -> (allowance: Int, congested: Bool) {
        let congested = slowReader.noteQueued(queuedBytes, now: now)
        return (slowReader.allowance(queuedBytes: queuedBytes), congested)
    }

    /// Whether no further request is read while `pendingBytes` wait for the
    /// client or (`awaiting`) its last change waits for its observers.
    public func holdsInput(pendingBytes: Int, awaiting: Bool) -> Bool {
        awaiting || !slowReader.readsRequests(pendingBytes: pendingBytes)
    }

    // MARK: Flushing

    /// What a flush does next, from ``flushBegan(disconnecting:outputBytes:uncommittedBatch:)`` to `done`.
    public enum FlushAction: Sendable, Equatable {
        /// The engine gave up on the client: close without writing what waits.
        case disconnect
        /// Hand the engine's output to the socket, then apply the output limits.
        case write
        /// Hold the engine's output until `batch` is committed, then apply the output limits.
        case hold(batch: UInt64)
        /// Apply the output limits (``outputQueued(_:now:)``).
        case applyLimits
        /// Nothing waits for the client: send held events, handle the lines put aside, read again.
        case drain
        /// The flush is over.
        case done
    }

    /// A flush begins: `outputBytes`, what the engine produced; `uncommittedBatch`,
    /// the batch to commit before output may tell of its changes (group commit).
    @inlinable
    public func flushBegan(disconnecting: Bool, outputBytes: Int, uncommittedBatch: UInt64?) -> FlushAction {
        if isClosing { return .done }
        if disconnecting { return .disconnect }
        guard outputBytes > 0 else { return .applyLimits }
        if let uncommittedBatch { return .hold(batch: uncommittedBatch) }
        return .write
    }

    /// The limits were applied (`queuedBytes` wait in the socket or for a commit). A drain's
    /// output is written now, not after a poll that might wait for a client that waits for us.
    @inlinable
    public func limitsApplied(queuedBytes: Int, congested: Bool) -> FlushAction {
        queuedBytes == 0 && (congested || isPaused) ? .drain : .done
    }

    /// A drain is over: flush again if it made output (it may leave held events for the next one).
    @inlinable
    public func drained(outputBytes: Int, disconnecting: Bool, uncommittedBatch: UInt64?) -> FlushAction {
        guard outputBytes > 0 else { return .done }
        return flushBegan(disconnecting: disconnecting, outputBytes: outputBytes, uncommittedBatch: uncommittedBatch)
    }

    /// The engine's output (`bytes` in `capacity`) was taken: whether to keep the buffer, when small or
    /// when large outputs come in a row (a busy observer: regrowing it would cost more than the events);
    /// a single large burst gives it back (docs/PERFORMANCE.md).
    @inlinable
    public mutating func outputTaken(bytes: Int, capacity: Int) -> Bool {
        let large = bytes > Self.smallOutputBytes
        defer { lastOutputWasLarge = large }
        return capacity <= Self.smallOutputBytes || (large && lastOutputWasLarge && capacity <= 1 << 16)
    }

    /// Output held for a commit was written; `holdsMore`: some still waits.
    /// Returns whether to close now (a flushing close waited for it).
    public mutating func outputReleased(holdsMore: Bool) -> Bool {
        !holdsMore && closesWhenReleased
    }

    /// Whether a flush should look at the limits again after held output
    /// was written.
    public func wantsFlushAfterRelease(congested: Bool) -> Bool {
        !isClosing && (congested || isPaused || slowReader.overSoftLimitSince != nil)
    }

    // MARK: Closing

    /// The connection ends (`flush`: its output is written first; `holdsOutput`:
    /// some waits for a commit). Nil if it was ending already.
    public mutating func close(flush: Bool, holdsOutput: Bool) -> Ending? {
        guard !isClosing else { return nil }
        isClosing = true
        deferred = DeferredFrames()
        isPaused = false
        isPausedForTurn = false
        if flush && holdsOutput {
            // No more requests: their changes would be applied and never answered.
            closesWhenReleased = true
            return .afterHeldOutput
        }
        return flush ? .shutdownThenClose : .closeNow
    }
}

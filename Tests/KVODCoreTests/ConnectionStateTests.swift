import KVODCore
import KVOEngine
import Testing

/// The state machine in a box, so that `#expect` may call its mutating
/// methods, plus what the shell would do with lines: feed them as read, and
/// handle those put aside.
private final class Machine {
    var state: ConnectionState

    init(limits: OutputLimits = ConnectionStateTests.limits) {
        state = ConnectionState(limits: limits)
    }

    var isPaused: Bool { state.isPaused }
    var hasDeferred: Bool { state.hasDeferred }
    var peerFinished: Bool { state.peerFinished }

    /// Feeds a line read off the socket; returns whether it is handled now.
    func arrives(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { state.frameArrived(.line($0)) }
    }

    /// Handles every line put aside that reading may go on with now.
    func drain(inputHeld: Bool = false, turn: UInt64) -> [String] {
        var lines: [String] = []
        while let frame = state.nextDeferred(inputHeld: inputHeld, turn: turn) {
            switch frame {
            case .line(let bytes):
                state.budget.spend(bytes: bytes.count, turn: turn)
                lines.append(String(decoding: bytes, as: UTF8.self))
            case .tooLarge: lines.append("<too large>")
            }
        }
        return lines
    }

    func spend(bytes: Int, turn: UInt64) { state.budget.spend(bytes: bytes, turn: turn) }
    func spend(nanoseconds: UInt64, turn: UInt64) { state.budget.spend(nanoseconds: nanoseconds, turn: turn) }
    func frameHandled(inputHeld: Bool, turn: UInt64) -> [ConnectionState.Action] {
        state.frameHandled(inputHeld: inputHeld, turn: turn)
    }
    func resumed(inputHeld: Bool, turn: UInt64) -> [ConnectionState.Action] {
        state.resumed(inputHeld: inputHeld, turn: turn)
    }
    func turnBegan() -> Bool { state.turnBegan() }
    func peerEnded(failed: Bool, awaiting: Bool) -> [ConnectionState.Action] {
        state.peerEnded(failed: failed, awaiting: awaiting)
    }
    func outputQueued(_ bytes: Int, now: UInt64) -> (allowance: Int, congested: Bool) {
        state.outputQueued(bytes, now: now)
    }
    func holdsInput(pendingBytes: Int, awaiting: Bool) -> Bool {
        state.holdsInput(pendingBytes: pendingBytes, awaiting: awaiting)
    }
    func flushBegan(disconnecting: Bool = false, outputBytes: Int, batch: UInt64? = nil) -> ConnectionState.FlushAction {
        state.flushBegan(disconnecting: disconnecting, outputBytes: outputBytes, uncommittedBatch: batch)
    }
    func limitsApplied(queuedBytes: Int, congested: Bool) -> ConnectionState.FlushAction {
        state.limitsApplied(queuedBytes: queuedBytes, congested: congested)
    }
    func drained(disconnecting: Bool = false, outputBytes: Int, batch: UInt64? = nil) -> ConnectionState.FlushAction {
        state.drained(outputBytes: outputBytes, disconnecting: disconnecting, uncommittedBatch: batch)
    }
    func outputTaken(bytes: Int, capacity: Int) -> Bool { state.outputTaken(bytes: bytes, capacity: capacity) }
    func wantsFlushAfterRelease(congested: Bool) -> Bool { state.wantsFlushAfterRelease(congested: congested) }
    func outputReleased(holdsMore: Bool) -> Bool { state.outputReleased(holdsMore: holdsMore) }
    func close(flush: Bool, holdsOutput: Bool) -> ConnectionState.Ending? {
        state.close(flush: flush, holdsOutput: holdsOutput)
    }
}

/// A connection's reading, pausing and closing, fed events with no socket
/// and no clock: what `ClientConnection` does with libuv's callbacks.
@Suite struct ConnectionStateTests {
    static let limits = OutputLimits(hardBytes: 1000, softBytes: 100, softMilliseconds: 50)

    @Test func linesAreHandledAsTheyArriveWhileNothingHoldsInput() {
        let state = Machine()
        #expect(state.arrives("a"))
        state.spend(bytes: 1, turn: 1)
        #expect(state.frameHandled(inputHeld: false, turn: 1) == [])
        #expect(!state.isPaused)
    }

    @Test func repliesOverTheHardLimitStopReadingAndDrainingResumesItAfterTheLinesPutAside() {
        let state = Machine()
        #expect(state.holdsInput(pendingBytes: 1001, awaiting: false))
        #expect(state.arrives("a"))
        #expect(state.frameHandled(inputHeld: true, turn: 1) == [.stopReading(logged: true)])
        #expect(!state.arrives("b"), "the rest of the read waits")
        #expect(!state.arrives("c"))
        #expect(state.limitsApplied(queuedBytes: 0, congested: false) == .drain)
        // Still over the limit: nothing is handled, reading stays off.
        #expect(state.drain(inputHeld: true, turn: 1) == [])
        #expect(state.resumed(inputHeld: true, turn: 1) == [])
        // Drained: the lines put aside first, in order, then the socket.
        #expect(state.drain(turn: 1) == ["b", "c"])
        #expect(state.resumed(inputHeld: false, turn: 1) == [.resumeReading])
        #expect(!state.isPaused)
    }

    @Test func aChangeAwaitingItsObserversHoldsInputWhateverTheOutput() {
        let state = Machine()
        #expect(state.holdsInput(pendingBytes: 0, awaiting: true))
        #expect(!state.holdsInput(pendingBytes: 1000, awaiting: false))
    }

    @Test func aSpentTurnBudgetYieldsUntilTheNextTurn() {
        let state = Machine()
        for index in 0..<TurnBudget.maxRequests - 1 {
            #expect(state.arrives("\(index)"))
            state.spend(bytes: 1, turn: 7)
            #expect(state.frameHandled(inputHeld: false, turn: 7) == [])
        }
        #expect(state.arrives("last"))
        state.spend(bytes: 4, turn: 7)
        #expect(state.frameHandled(inputHeld: false, turn: 7) == [.stopReading(logged: false), .continueNextTurn])
        #expect(!state.arrives("next turn's"))
        // A drain within the same turn does not resume it.
        #expect(state.drain(turn: 7) == [])
        #expect(state.resumed(inputHeld: false, turn: 7) == [])
        #expect(state.turnBegan())
        #expect(!state.turnBegan(), "once per yield")
        #expect(state.drain(turn: 8) == ["next turn's"])
        #expect(state.resumed(inputHeld: false, turn: 8) == [.resumeReading])
    }

    /// The time share: a slow line spends the turn; if the replies then hold
    /// input when the next turn begins, the pause is said once, as when the
    /// replies stop reading first.
    @Test func aTurnSpentInTimeYieldsAndAHoldFoundNextTurnIsSaidOnce() {
        let state = Machine()
        #expect(state.arrives("slow"))
        state.spend(bytes: 1, turn: 4)
        state.spend(nanoseconds: TurnBudget.maxNanoseconds - 1, turn: 4)
        #expect(state.frameHandled(inputHeld: false, turn: 4) == [])
        #expect(state.arrives("slower"))
        state.spend(bytes: 1, turn: 4)
        state.spend(nanoseconds: 1, turn: 4)
        #expect(state.frameHandled(inputHeld: false, turn: 4) == [.stopReading(logged: false), .continueNextTurn])
        #expect(!state.arrives("waits"))
        #expect(state.turnBegan())
        #expect(state.drain(inputHeld: true, turn: 5) == [])
        #expect(state.resumed(inputHeld: true, turn: 5) == [.stopReading(logged: true)])
        #expect(state.resumed(inputHeld: true, turn: 5) == [], "said once")
        #expect(state.drain(turn: 5) == ["waits"])
        #expect(state.resumed(inputHeld: false, turn: 5) == [.resumeReading])
        #expect(!state.isPaused)
    }

    @Test func linesPutAsideBeyondOneTurnsBudgetWaitForTheTurnAfter() {
        let state = Machine()
        #expect(state.arrives("first"))
        #expect(state.frameHandled(inputHeld: true, turn: 1) == [.stopReading(logged: true)])
        for index in 0..<TurnBudget.maxRequests + 2 { #expect(!state.arrives("\(index)")) }
        #expect(state.drain(turn: 2).count == TurnBudget.maxRequests)
        #expect(state.resumed(inputHeld: false, turn: 2) == [.continueNextTurn])
        #expect(state.turnBegan())
        #expect(state.drain(turn: 3) == ["\(TurnBudget.maxRequests)", "\(TurnBudget.maxRequests + 1)"])
        #expect(state.resumed(inputHeld: false, turn: 3) == [.resumeReading])
    }

    @Test func aPeerThatHalfClosesWithLinesWaitingGetsTheirRepliesThenTheConnectionCloses() {
        let state = Machine()
        #expect(state.arrives("a"))
        #expect(state.frameHandled(inputHeld: true, turn: 1) == [.stopReading(logged: true)])
        #expect(!state.arrives("b"))
        #expect(state.peerEnded(failed: false, awaiting: false) == [], "b is still to be answered")
        #expect(state.peerFinished)
        #expect(state.drain(turn: 1) == ["b"])
        #expect(state.resumed(inputHeld: false, turn: 1) == [.close(flush: true)])
    }

    @Test func aPeerThatEndsWithNothingWaitingClosesAtOnceFlushingUnlessTheReadFailed() {
        let clean = Machine()
        #expect(clean.peerEnded(failed: false, awaiting: false) == [.close(flush: true)])
        let awaiting = Machine()
        #expect(awaiting.peerEnded(failed: false, awaiting: true) == [], "its change's reply is still due")
        let failed = Machine()
        #expect(failed.peerEnded(failed: true, awaiting: true) == [.close(flush: false)])
    }

    @Test func closingOnceForgetsWhatWaitedAndASecondCloseDoesNothing() {
        let state = Machine()
        #expect(state.arrives("a"))
        #expect(state.frameHandled(inputHeld: true, turn: 1) == [.stopReading(logged: true)])
        #expect(!state.arrives("b"))
        #expect(state.close(flush: false, holdsOutput: false) == .closeNow)
        #expect(!state.hasDeferred && !state.isPaused)
        #expect(state.close(flush: true, holdsOutput: false) == nil)
        #expect(!state.turnBegan())
        #expect(state.resumed(inputHeld: false, turn: 2) == [])
        #expect(!state.wantsFlushAfterRelease(congested: true))
    }

    @Test func aFlushingCloseWaitsForOutputHeldForACommit() {
        let state = Machine()
        #expect(state.close(flush: true, holdsOutput: true) == .afterHeldOutput)
        #expect(!state.outputReleased(holdsMore: true))
        #expect(state.outputReleased(holdsMore: false))
        let plain = Machine()
        #expect(plain.close(flush: true, holdsOutput: false) == .shutdownThenClose)
        #expect(!plain.outputReleased(holdsMore: false))
    }

    @Test func writtenOutputSetsTheAllowanceAndCongestsAfterTheSoftPeriod() {
        let state = Machine()
        #expect(state.outputQueued(0, now: 0) == (1000, false))
        #expect(state.outputQueued(300, now: 10) == (700, false))
        #expect(state.wantsFlushAfterRelease(congested: false), "over the soft limit: look again")
        #expect(state.outputQueued(300, now: 59) == (700, false))
        #expect(state.outputQueued(300, now: 60) == (700, true))
        #expect(state.outputQueued(0, now: 61) == (1000, false))
        #expect(!state.wantsFlushAfterRelease(congested: false))
    }

    // MARK: Flushing

    @Test func aFlushWritesTheEnginesOutputOrHoldsItForTheBatchToCommit() {
        let state = Machine()
        #expect(state.flushBegan(outputBytes: 10) == .write)
        #expect(state.flushBegan(outputBytes: 10, batch: 7) == .hold(batch: 7))
        #expect(state.flushBegan(outputBytes: 0, batch: 7) == .applyLimits, "no output: only the limits")
    }

    @Test func aFlushDisconnectsAClientTheEngineGaveUpOnWithoutWriting() {
        let state = Machine()
        #expect(state.flushBegan(disconnecting: true, outputBytes: 10) == .disconnect)
        #expect(state.flushBegan(disconnecting: true, outputBytes: 0) == .disconnect)
    }

    @Test func aClosingConnectionFlushesNothing() {
        let state = Machine()
        #expect(state.close(flush: false, holdsOutput: false) == .closeNow)
        #expect(state.flushBegan(disconnecting: true, outputBytes: 10) == .done)
        #expect(state.drained(outputBytes: 10) == .done)
    }

    @Test func aFlushDrainsOnceNothingWaitsIfEventsAreHeldOrReadingIsPaused() {
        let state = Machine()
        #expect(state.limitsApplied(queuedBytes: 0, congested: true) == .drain)
        #expect(state.limitsApplied(queuedBytes: 1, congested: true) == .done, "the socket's queue goes first")
        #expect(state.limitsApplied(queuedBytes: 0, congested: false) == .done, "nothing to drain")
        #expect(state.arrives("a"))
        #expect(state.frameHandled(inputHeld: true, turn: 1) == [.stopReading(logged: true)])
        #expect(state.limitsApplied(queuedBytes: 0, congested: false) == .drain, "paused: the lines put aside")
        #expect(state.limitsApplied(queuedBytes: 1, congested: false) == .done)
    }

    @Test func aDrainThatMadeOutputFlushesAgain() {
        let state = Machine()
        #expect(state.drained(outputBytes: 0) == .done)
        #expect(state.drained(outputBytes: 5) == .write)
        #expect(state.drained(outputBytes: 5, batch: 3) == .hold(batch: 3))
        #expect(state.drained(disconnecting: true, outputBytes: 5) == .disconnect)
    }

    @Test func anOutputBufferIsKeptWhenSmallOrWhenLargeOutputsComeInARow() {
        let state = Machine()
        #expect(state.outputTaken(bytes: 100, capacity: 4096), "small: kept")
        #expect(!state.outputTaken(bytes: 10_000, capacity: 16_384), "a first large burst gives it back")
        #expect(state.outputTaken(bytes: 10_000, capacity: 16_384), "a second in a row keeps it")
        #expect(!state.outputTaken(bytes: 100_000, capacity: 1 << 17), "never over 64 KiB")
        #expect(!state.outputTaken(bytes: 100, capacity: 8192), "small output, large buffer: given back")
        #expect(!state.outputTaken(bytes: 10_000, capacity: 16_384), "after a small one, large is a first again")
    }
}

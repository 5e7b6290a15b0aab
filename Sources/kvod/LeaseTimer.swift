import KVOEngine

/// Drives the engine's own deletions (ephemeral values whose owner left,
/// values whose `ttl` passed) from one libuv timer. Loop-confined.
///
/// Armed only while there is something to do: at 0 ms while deletions are
/// queued (each pass makes at most ``budget``, so other clients are served
/// between passes), else at the next deadline, at most a second away (a
/// deadline moves when a value is renewed: a late look costs nothing).
final class LeaseTimer {
    /// Deletions per pass: a few milliseconds of work at most.
    static let budget = 500
    private let engine: Engine
    private let timer: UVTimer
    private var armedFor: UInt64?
    /// Runs a pass and notes its time (``ConnectionHost/timed(_:_:)``).
    private let timed: (StaticString, () -> Void) -> Void

    init(engine: Engine, loop: UVLoop, timed: @escaping (StaticString, () -> Void) -> Void) {
        self.engine = engine
        self.timed = timed
        timer = UVTimer(loop: loop)
    }

    /// Arms the timer for what the engine holds now (after each loop pass).
    func schedule(now: UInt64) {
        let delay: UInt64
        if engine.hasPendingReleases {
            delay = 0
        } else if let deadline = engine.nextLeaseDeadline {
            let seconds = max(0, min(1, deadline - wallClockNow()))
            delay = UInt64((seconds * 1000).rounded(.up))
        } else {
            if armedFor != nil { timer.stop() }
            armedFor = nil
            return
        }
        let due = now + delay
        if let armedFor, armedFor <= due { return }
        armedFor = due
        timer.start(afterMilliseconds: delay) { [unowned self] in
            self.armedFor = nil
            self.timed("leased values released") { self.engine.releaseDueValues(budget: Self.budget) }
        }
    }

    func close() {
        timer.close()
    }
}

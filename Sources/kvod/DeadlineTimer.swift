/// Reaches the engine's deadlines from one libuv timer: the engine has no
/// clock of its own, it says when its next deadline is and is told when that
/// time is reached. One for throttled observations' intervals (`throttle` in
/// `observe`), one for writers' waits (`await` on a change), one for values'
/// lifetimes (on the loop's clock). Loop-confined.
///
/// Armed only while the engine holds a deadline, for the earliest one.
final class DeadlineTimer {
    private let clock: () -> UInt64
    private let nextDeadline: () -> UInt64?
    private let reached: (UInt64) -> Void
    private let timer: UVTimer
    /// The engine-clock time it is armed for.
    private var armedFor: UInt64?

    /// `nextDeadline` is read after each loop pass; `reached` is called with
    /// `clock`'s time when the earliest deadline has come.
    init(loop: UVLoop, clock: @escaping () -> UInt64, nextDeadline: @escaping () -> UInt64?,
         reached: @escaping (UInt64) -> Void) {
        self.clock = clock
        self.nextDeadline = nextDeadline
        self.reached = reached
        timer = UVTimer(loop: loop)
    }

    /// Arms the timer for what the engine holds now (after each loop pass).
    func schedule() {
        guard let deadline = nextDeadline() else {
            if armedFor != nil { timer.stop() }
            armedFor = nil
            return
        }
        if let armedFor, armedFor <= deadline { return }
        armedFor = deadline
        let now = clock()
        timer.start(afterMilliseconds: deadline > now ? deadline - now : 0) { [unowned self] in
            self.armedFor = nil
            self.reached(self.clock())
        }
    }

    func close() {
        timer.close()
    }
}

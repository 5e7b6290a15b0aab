import KVOEngine

/// Times out writers' waits (`await` on a change) from one libuv timer: the
/// engine has no clock of its own for them, it says when the next one ends
/// (``Engine/nextAwaitDeadline``) and is told when that time is reached.
/// Loop-confined.
///
/// Armed only while a writer waits, for the earliest deadline.
final class AwaitTimer {
    private let engine: Engine
    private let clock: @Sendable () -> UInt64
    private let timer: UVTimer
    /// The engine-clock time it is armed for.
    private var armedFor: UInt64?

    init(engine: Engine, loop: UVLoop) {
        self.engine = engine
        clock = engine.configuration.throttleClock
        timer = UVTimer(loop: loop)
    }

    /// Arms the timer for the waits the engine holds now (after each loop pass).
    func schedule() {
        guard let deadline = engine.nextAwaitDeadline else {
            if armedFor != nil { timer.stop() }
            armedFor = nil
            return
        }
        if let armedFor, armedFor <= deadline { return }
        armedFor = deadline
        let now = clock()
        timer.start(afterMilliseconds: deadline > now ? deadline - now : 0) { [unowned self] in
            self.armedFor = nil
            self.engine.expireAwaits(at: self.clock())
        }
    }

    func close() {
        timer.close()
    }
}

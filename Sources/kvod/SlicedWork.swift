import KVOEngine

/// Drives the engine's work in slices (``Engine/continueSlicedWork(budget:)``:
/// the observations of a client that unobserved everything or closed, initial
/// events over many objects): one slice per loop turn, from a zero-delay
/// timer armed in the prepare hook while work is left, so that the poll
/// serves every other client between two slices. Loop-confined.
///
/// Armed once per turn, from the prepare hook: libuv 1.44 runs a zero-delay
/// timer restarted from its own callback again at once (as ``TurnYield`` says).
final class SlicedWork {
    private let engine: Engine
    private let timer: UVTimer
    private var isArmed = false
    /// Runs a slice and notes its time (``ConnectionHost/timed(_:_:)``).
    private let timed: (StaticString, () -> Void) -> Void

    init(engine: Engine, loop: UVLoop, timed: @escaping (StaticString, () -> Void) -> Void) {
        self.engine = engine
        self.timed = timed
        timer = UVTimer(loop: loop)
    }

    /// Arms the timer if a slice waits (the loop's prepare hook).
    func armIfPending() {
        guard !isArmed, engine.hasSlicedWork else { return }
        isArmed = true
        timer.start(afterMilliseconds: 0) { [unowned self] in
            self.isArmed = false
            self.timed("a slice of long work") { self.engine.continueSlicedWork() }
        }
    }

    func close() {
        timer.close()
    }
}

import KVOCluster

/// A ``ClusterLoop`` whose clock only the test moves: timers fire in due
/// order from ``advance(by:)``, each after the backend's answers so far (the
/// order a loop turn gives them). No test sleeps.
final class ManualLoop: ClusterLoop {
    /// Milliseconds since the test began.
    private(set) var now: UInt64 = 0
    private var timers: [ManualTimer] = []
    /// Runs what is due besides timers (the backend's answers) until nothing is.
    var drain: () -> Void = {}

    func makeTimer() -> any ClusterTimer {
        let timer = ManualTimer(loop: self)
        timers.append(timer)
        return timer
    }

    var nanoseconds: UInt64 { now * 1_000_000 }

    /// Moves the clock `milliseconds` on, answering and firing whatever falls due on the way.
    func advance(by milliseconds: UInt64) {
        let target = now + milliseconds
        drain()
        while let timer = timers.filter({ $0.due != nil && $0.due! <= target }).min(by: { $0.due! < $1.due! }) {
            now = max(now, timer.due!)
            timer.fire()
            drain()
        }
        now = target
    }

    /// Answers and fires what is due now, without moving the clock.
    func settle() { advance(by: 0) }
}

final class ManualTimer: ClusterTimer {
    private unowned let loop: ManualLoop
    private(set) var due: UInt64?
    private var repeatMilliseconds: UInt64 = 0
    private var handler: (() -> Void)?
    private var isClosed = false

    init(loop: ManualLoop) {
        self.loop = loop
    }

    func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64, handler: @escaping () -> Void) {
        guard !isClosed else { return }
        due = loop.now + afterMilliseconds
        self.repeatMilliseconds = repeatMilliseconds
        self.handler = handler
    }

    func stop() {
        due = nil
        handler = nil
    }

    func close() {
        stop()
        isClosed = true
    }

    fileprivate func fire() {
        guard let handler, let due else { return }
        if repeatMilliseconds > 0 {
            self.due = due + repeatMilliseconds
        } else {
            self.due = nil
            self.handler = nil
        }
        handler()
    }
}

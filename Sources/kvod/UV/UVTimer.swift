import CLibUV

/// A libuv timer (`uv_timer_t`). Loop-confined.
///
/// Times are in milliseconds of loop time (`UVLoop.now`), which is cached per
/// iteration: a timer started from a long callback counts from the start of
/// the iteration.
final class UVTimer: UVCallbackHandle {
    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_TIMER) { raw in
            uv_timer_init(loop.uvLoop, uvCast(raw))
        }
    }

    private var timer: UnsafeMutablePointer<uv_timer_t> { uvCast(uvHandle) }

    /// Arms the timer: `handler` runs after `afterMilliseconds`, then every
    /// `repeatMilliseconds` if that is non-zero. Restarting replaces the
    /// handler. Ignored once the timer is closing (libuv's only failure case).
    func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64 = 0,
               handler: @escaping () -> Void) {
        loop.assertOnLoopThread()
        guard !isClosing, uv_timer_start(timer, onTimer, afterMilliseconds, repeatMilliseconds) == 0 else { return }
        self.handler = handler
    }

    /// Disarms the timer; it can be started again.
    func stop() {
        loop.assertOnLoopThread()
        guard !isClosed else { return }
        uv_timer_stop(timer)
        handler = nil
    }

    fileprivate func fire() {
        handler?()
        // A finished one-shot timer (not restarted by its handler) drops the
        // handler, so a closure capturing its owner does not outlive its use.
        if !isClosed, uv_is_active(uvHandle) == 0 { handler = nil }
    }
}

private func onTimer(_ handle: UnsafeMutablePointer<uv_timer_t>?) {
    UVHandle.owner(of: handle, as: UVTimer.self)?.fire()
}

import CLibUV

/// A signal watcher (`uv_signal_t`). libuv's own process-wide handler turns
/// the signal into a loop event, so `handler` runs on the loop thread like
/// any callback and may do anything (log, start a graceful shutdown...).
/// Loop-confined.
final class UVSignal: UVCallbackHandle {
    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_SIGNAL) { raw in
            uv_signal_init(loop.uvLoop, uvCast(raw))
        }
    }

    /// Watches `signal` (e.g. `SIGTERM`); replaces a previous watch. Throws
    /// (never calling `handler`) for a signal that cannot be caught (SIGKILL,
    /// SIGSTOP, out of range) or a closing handle.
    func start(signal: Int32, handler: @escaping () -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        guard !isClosing else { throw UVError.invalidArgument }
        try UVError.check(uv_signal_start(uvCast(uvHandle), onSignal, signal))
        self.handler = handler
    }

    /// Unblocks `signals` on the calling thread. A signal mask is inherited
    /// across exec, so a parent that blocks SIGTERM (a test runner's worker
    /// thread, some supervisors) would otherwise make kvod deaf to it.
    static func unblock(_ signals: [Int32]) {
        for signal in signals { _ = kvod_unblock_signal(signal) }
    }

    /// Ignores SIGPIPE for the whole process. libuv does not: writing to a
    /// connection whose peer is gone would kill the daemon instead of failing
    /// with EPIPE. Call once at startup.
    static func ignoreSIGPIPE() {
        _ = kvod_ignore_sigpipe()  // cannot fail for a valid signal number
    }
}

private func onSignal(_ handle: UnsafeMutablePointer<uv_signal_t>?, _: Int32) {
    UVHandle.owner(of: handle, as: UVSignal.self)?.handler?()
}

import CLibUV

/// A check handle (`uv_check_t`): its handler runs once per loop iteration,
/// right after the loop polled for I/O and ran the I/O callbacks. The daemon
/// times the loop's turns with it (``LoopLagMeter``). Loop-confined.
///
/// An active check handle keeps the loop alive; close it at shutdown.
final class UVCheck: UVHandle {
    private var handler: (() -> Void)?

    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_CHECK) { raw in
            uv_check_init(loop.uvLoop, uvCast(raw))
        }
    }

    private var check: UnsafeMutablePointer<uv_check_t> { uvCast(uvHandle) }

    /// Starts calling `handler` after each poll; replaces a previous handler.
    /// Ignored once the handle is closing.
    func start(handler: @escaping () -> Void) {
        loop.assertOnLoopThread()
        guard !isClosing, uv_check_start(check, onCheck) == 0 else { return }
        self.handler = handler
    }

    override func didClose() {
        handler = nil
        super.didClose()
    }

    fileprivate func fire() { handler?() }
}

private func onCheck(_ handle: UnsafeMutablePointer<uv_check_t>?) {
    UVHandle.owner(of: handle, as: UVCheck.self)?.fire()
}

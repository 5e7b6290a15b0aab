import CLibUV

/// A prepare handle (`uv_prepare_t`): its handler runs once per loop
/// iteration, right before the loop blocks for I/O. The daemon uses it like
/// Redis's `beforeSleep`: flush every connection with pending output once per
/// iteration instead of once per command. Loop-confined. An active prepare
/// handle keeps the loop alive.
final class UVPrepare: UVCallbackHandle {
    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_PREPARE) { raw in
            uv_prepare_init(loop.uvLoop, uvCast(raw))
        }
    }

    /// Starts calling `handler` before each poll; replaces a previous handler.
    /// Ignored once the handle is closing: libuv would not refuse, and a
    /// closing handle must not be started.
    func start(handler: @escaping () -> Void) {
        loop.assertOnLoopThread()
        guard !isClosing, uv_prepare_start(uvCast(uvHandle), onPrepare) == 0 else { return }
        self.handler = handler
    }
}

private func onPrepare(_ handle: UnsafeMutablePointer<uv_prepare_t>?) {
    UVHandle.owner(of: handle, as: UVPrepare.self)?.handler?()
}

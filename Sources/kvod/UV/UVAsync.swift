import CLibUV

/// An async handle (`uv_async_t`): the one way another thread may wake the
/// loop. The other thread gets a ``Waker`` and calls `wake()`; the handler
/// then runs on the loop thread. Wakes that come before the handler runs are
/// coalesced into one call, so the handler must read what it needs from
/// shared state rather than count calls. Loop-confined, except `Waker`.
///
/// An async handle is active from its creation and keeps the loop alive
/// until it is closed.
final class UVAsync: UVCallbackHandle {
    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_ASYNC) { raw in
            uv_async_init(loop.uvLoop, uvCast(raw), onAsync)
        }
    }

    /// What another thread holds to wake the loop.
    struct Waker: @unchecked Sendable {
        // @unchecked: `uv_async_send` is the one libuv call documented as
        // thread-safe. The pointer stays valid until the handle is closed, and
        // the owner stops every thread that holds a Waker before closing it.
        fileprivate let async: UnsafeMutablePointer<uv_async_t>

        /// Wakes the loop; the handler runs once on the loop thread.
        func wake() { _ = uv_async_send(async) }
    }

    /// A waker for another thread. Valid until this handle is closed.
    var waker: Waker { Waker(async: uvCast(uvHandle)) }
}

private func onAsync(_ handle: UnsafeMutablePointer<uv_async_t>?) {
    UVHandle.owner(of: handle, as: UVAsync.self)?.handler?()
}

import CLibUV

/// Reinterprets a pointer to libuv memory as another libuv struct type
/// (`uv_pipe_t*` → `uv_stream_t*` → `uv_handle_t*`, as C does). Swift never
/// dereferences these pointers itself: they are only handed back to libuv,
/// and `data` goes through `uv_handle_get_data`/`uv_handle_set_data`.
@inline(__always)
func uvCast<From, To>(_ pointer: UnsafeMutablePointer<From>) -> UnsafeMutablePointer<To> {
    UnsafeMutablePointer<To>(OpaquePointer(pointer))
}

@inline(__always)
func uvCast<To>(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutablePointer<To> {
    UnsafeMutablePointer<To>(OpaquePointer(pointer))
}

/// Base class of the handle wrappers (timer, signal, prepare, pipe server,
/// stream): owns the handle's memory and ties the Swift object's lifetime to
/// the handle's.
///
/// libuv allows freeing a handle's memory only in its close callback. So
/// `init` retains `self` into `handle->data` (`Unmanaged.passRetained`) and
/// only the close callback releases it, then frees the memory. A wrapper the
/// daemon drops without closing stays alive (and keeps its closures) until
/// `close()`; `UVLoop.closeAllHandles()` sweeps those at shutdown. After the
/// close callback every stored closure is dropped, so closures capturing the
/// wrapper cannot keep a retain cycle alive.
///
/// Loop-confined, like `UVLoop`.
class UVHandle {
    private enum State { case open, closing, closed }

    /// The loop the handle belongs to; kept alive by its handles.
    let loop: UVLoop
    /// The libuv handle. For the UV layer only; dangling once `isClosed`.
    let uvHandle: UnsafeMutablePointer<uv_handle_t>
    private var state = State.open
    private var closeHandler: (() -> Void)?

    /// Allocates `uv_handle_size(type)` bytes and lets `initialize` run the
    /// matching `uv_*_init` on them. Not throwing: for the handle types of
    /// this layer libuv 1.44 cannot fail here (`uv_timer_init`,
    /// `uv_prepare_init` and `uv_pipe_init` return 0 unconditionally, and
    /// `uv_signal_init` only fails setting up the loop's signal pipe, which
    /// `uv_loop_init` already did). A failure would be a libuv contract change.
    init(loop: UVLoop, type: uv_handle_type, initialize: (UnsafeMutableRawPointer) -> Int32) {
        loop.assertOnLoopThread()
        let raw = UnsafeMutableRawPointer.allocate(byteCount: uv_handle_size(type), alignment: 16)
        let rc = initialize(raw)
        precondition(rc == 0, "uv init of handle type \(type.rawValue) failed: \(UVError(code: rc))")
        self.loop = loop
        self.uvHandle = uvCast(raw)
        uv_handle_set_data(uvHandle, Unmanaged.passRetained(self).toOpaque())
        loop.ownHandles.insert(raw)
    }

    /// True from the moment `close` is called (for streams, also during
    /// `shutdownThenClose`).
    var isClosing: Bool { state != .open }

    /// True once the close callback ran: the handle memory is gone.
    var isClosed: Bool { state == .closed }

    /// Closes the handle; `onClosed` runs from the close callback, on a later
    /// loop iteration. Idempotent: a second call only adds its `onClosed`
    /// (run immediately if the handle is already closed).
    func close(onClosed: (() -> Void)? = nil) {
        loop.assertOnLoopThread()
        if let onClosed { whenClosed(onClosed) }
        guard state == .open else { return }
        state = .closing
        uv_close(uvHandle, onHandleClosed)
    }

    /// Adds a handler for the close callback without starting to close (runs
    /// it immediately if the handle is already closed). Handlers run in the
    /// order they were added.
    func whenClosed(_ handler: @escaping () -> Void) {
        loop.assertOnLoopThread()
        if state == .closed { handler(); return }
        let previous = closeHandler
        closeHandler = { previous?(); handler() }
    }

    /// Subclass hook, called from the close callback: drop every stored
    /// closure there. Subclasses call `super.didClose()`.
    func didClose() {}

    fileprivate func finishClose() {
        state = .closed
        didClose()
        let handler = closeHandler
        closeHandler = nil
        handler?()
    }

    /// The wrapper behind a handle of this layer, from `handle->data` (for
    /// handles of this layer only: H2O's keep their own data there; see
    /// ``UVLoop/ownHandles``).
    static func owner(of handle: UnsafeMutablePointer<uv_handle_t>) -> UVHandle? {
        guard let data = uv_handle_get_data(handle) else { return nil }
        return Unmanaged<UVHandle>.fromOpaque(data).takeUnretainedValue()
    }

    /// Typed variant for C callbacks receiving a `uv_timer_t*`, `uv_stream_t*`...
    static func owner<Owner: UVHandle, Handle>(of handle: UnsafeMutablePointer<Handle>?,
                                               as _: Owner.Type) -> Owner? {
        guard let handle else { return nil }
        return owner(of: uvCast(handle) as UnsafeMutablePointer<uv_handle_t>) as? Owner
    }
}

/// A handle with one callback (timer, signal, prepare, async), dropped at close.
class UVCallbackHandle: UVHandle {
    /// What runs on the loop thread when the handle fires; set on that thread only.
    var handler: (() -> Void)? {
        didSet { loop.assertOnLoopThread() }
    }

    override func didClose() {
        handler = nil
        super.didClose()
    }
}

/// close_cb of every handle: releases the retain taken at init, lets the
/// wrapper drop its closures, then frees the memory — in that order, since
/// `onClosed` may still ask the wrapper questions (`isClosed`...).
private func onHandleClosed(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let handle else { return }
    if let data = uv_handle_get_data(handle) {
        uv_handle_set_data(handle, nil)
        let owner = Unmanaged<UVHandle>.fromOpaque(data).takeRetainedValue()
        owner.loop.ownHandles.remove(UnsafeMutableRawPointer(handle))
        owner.finishClose()
    }
    UnsafeMutableRawPointer(handle).deallocate()
}

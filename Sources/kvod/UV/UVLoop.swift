import CLibUV

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one libuv event loop (a heap-allocated `uv_loop_t`).
///
/// Thread confinement: a loop, and every handle created on it, must only be
/// used from the thread that created the loop and runs it. libuv itself is
/// not thread-safe (only `uv_async_send` is), and none of these classes lock.
/// That is why they are not `Sendable`; debug builds assert the thread.
///
/// Shutdown sequence: `closeAllHandles()`, `run()` (lets the close callbacks
/// run), then `close()`.
final class UVLoop {
    /// The libuv loop. For the UV layer only: the rest of the daemon goes
    /// through the wrapper types.
    let uvLoop: UnsafeMutablePointer<uv_loop_t>
    /// The handles this layer made (``UVHandle``), open or closing: the loop
    /// also runs H2O's (`--http`), whose `data` is not a wrapper of ours.
    var ownHandles = Set<UnsafeMutableRawPointer>()

    /// One read buffer shared by every stream of the loop. libuv calls
    /// alloc_cb → read(2) → read_cb strictly in sequence on the loop thread,
    /// and `UVStream.onBytes` must consume the bytes before returning, so one
    /// buffer per loop is enough; a buffer per stream would cost 64 KiB per
    /// idle client.
    let readBuffer: UnsafeMutableRawBufferPointer
    static let readBufferSize = 64 * 1024

    private var isClosed = false
    private let ownerThread = pthread_self()

    /// How `run` drives the loop.
    enum RunMode {
        /// Until there are no active, referenced handles or `stop()` is called.
        case untilDone
        /// One iteration, blocking for I/O if there is nothing pending.
        case once
        /// One iteration, never blocking.
        case noWait
    }

    init() throws(UVError) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: uv_loop_size(), alignment: 16)
        uvLoop = raw.bindMemory(to: uv_loop_t.self, capacity: 1)
        let rc = uv_loop_init(uvLoop)
        if rc < 0 {
            raw.deallocate()
            throw UVError(code: rc)
        }
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
    }

    /// A loop that was not closed is leaked rather than freed: handles may
    /// still point into it (H2O's, at the end of a kvod with `--http`). Closing
    /// an idle one is the best we can do here. The read buffer goes either way:
    /// nothing runs the loop once its owner is gone.
    deinit {
        guard !isClosed else { return }
        if uv_loop_close(uvLoop) == 0 {
            UnsafeMutableRawPointer(uvLoop).deallocate()
        } else {
            // Kept where a leak checker sees it still held, with what it holds.
            loopsLeftOpen.append(UnsafeMutableRawPointer(uvLoop))
        }
        readBuffer.deallocate()
    }

    /// Runs the loop. Returns `true` if handles are still active (the loop was
    /// stopped, or `mode` is not `.untilDone`), `false` if it ran dry.
    @discardableResult
    func run(_ mode: RunMode = .untilDone) -> Bool {
        assertOnLoopThread()
        let uvMode: uv_run_mode = switch mode {
        case .untilDone: UV_RUN_DEFAULT
        case .once: UV_RUN_ONCE
        case .noWait: UV_RUN_NOWAIT
        }
        return uv_run(uvLoop, uvMode) != 0
    }

    /// Makes `run` return after the current iteration.
    func stop() {
        assertOnLoopThread()
        uv_stop(uvLoop)
    }

    /// The loop's cached time in milliseconds (updated at each iteration).
    var now: UInt64 { uv_now(uvLoop) }

    /// Starts counting the time the loop waits for I/O (``idleNanoseconds``).
    /// Call before `run`.
    func measureIdleTime() throws(UVError) {
        try UVError.check(kvod_loop_measure_idle_time(uvLoop))
    }

    /// How long the loop has waited for I/O in all, once ``measureIdleTime()`` was called.
    var idleNanoseconds: UInt64 { uv_metrics_idle_time(uvLoop) }

    /// A monotonic clock, in nanoseconds (not cached, unlike `now`).
    static var hrtime: UInt64 { uv_hrtime() }

    /// Starts closing every handle of this layer that is not already closing,
    /// through its wrapper, so its `onClosed` callbacks run and its memory is
    /// freed; streams are closed immediately (queued writes are dropped: shut
    /// them down first for a graceful exit). Run the loop afterwards so the
    /// close callbacks fire. Other handles (H2O's) are only unreferenced:
    /// ``close()`` then finds them open.
    func closeAllHandles() {
        assertOnLoopThread()
        uv_walk(uvLoop, closeWalkedHandle, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Closes the loop and frees it. Throws `EBUSY` (and keeps the loop) while
    /// handles or requests are still open.
    func close() throws(UVError) {
        assertOnLoopThread()
        guard !isClosed else { return }
        try UVError.check(uv_loop_close(uvLoop))
        isClosed = true
        UnsafeMutableRawPointer(uvLoop).deallocate()
        readBuffer.deallocate()
    }

    /// Traps in debug builds when called off the loop thread.
    func assertOnLoopThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(pthread_equal(ownerThread, pthread_self()) != 0,
               "UVLoop used off its thread", file: file, line: line)
    }
}

/// The loops that could not be closed, kept to the end of the process: their
/// handles' owners (H2O) still point into them. Loop-confined (one loop thread).
nonisolated(unsafe) private var loopsLeftOpen: [UnsafeMutableRawPointer] = []

/// uv_walk callback for `closeAllHandles`.
private func closeWalkedHandle(_ handle: UnsafeMutablePointer<uv_handle_t>?, _ loop: UnsafeMutableRawPointer?) {
    guard let handle, let loop, uv_is_closing(handle) == 0 else { return }
    let isOwn = Unmanaged<UVLoop>.fromOpaque(loop).takeUnretainedValue().ownHandles.contains(UnsafeMutableRawPointer(handle))
    if isOwn, let owner = UVHandle.owner(of: handle) {
        owner.close()
    } else {
        // H2O's (`--http`): closing them under H2O would make it close them
        // again later, which libuv asserts against. Unreferenced, they no
        // longer keep the loop running; the process ends with them.
        uv_unref(handle)
    }
}

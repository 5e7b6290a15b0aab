import CLibUV

/// A connected Unix-socket stream (`uv_pipe_t`): a client accepted by
/// `UVPipeServer.accept()`. Loop-confined.
///
/// Writes never block and never fail loudly: what the kernel takes at once
/// goes out through `uv_try_write`, the rest is copied and queued with
/// `uv_write`; while a queued write is in flight, later writes gather in one
/// request that goes when it completes; errors go to `onWriteError`. `close` drops queued writes (libuv
/// cancels them), so use `shutdownThenClose` to deliver a final reply.
final class UVStream: UVHandle {
    private var onBytes: ((UnsafeRawBufferPointer) -> Void)?
    private var onEnd: ((UVError?) -> Void)?
    private var shutdownRequested = false
    private var writeFailed = false

    /// Whether read callbacks are currently requested.
    private(set) var isReading = false
    /// Bytes handed to `uv_write` whose write callback has not run yet, and
    /// those gathered for the next one (what `uv_try_write` sent at once is
    /// never counted).
    private(set) var queuedBytes = 0
    /// Requests handed to `uv_write` whose callback has not run yet.
    private var writesInFlight = 0
    /// What was written while a request was in flight, gathered for the next
    /// one: a reader that lags gets one request, one allocation and one
    /// `write` for many flushes, not one each.
    private var gathering: UnsafeMutablePointer<kvod_write_req_t>?
    /// Called when `queuedBytes` falls back to 0 (not while closing): the
    /// place to resume producing output for a slow reader.
    var onDrained: (() -> Void)?
    /// Called after each queued write completed (not while closing): the
    /// kernel took those bytes.
    var onWritten: (() -> Void)?
    /// Called once, for the first write error (EPIPE, ECONNRESET...); later
    /// writes are dropped. May run from inside `write` when the error is
    /// immediate. Cancellations caused by `close` are not reported.
    var onWriteError: ((UVError) -> Void)?

    /// An unconnected pipe; `UVPipeServer.accept()` and `connect` use it.
    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_NAMED_PIPE) { raw in
            uv_pipe_init(loop.uvLoop, uvCast(raw), 0)
        }
    }

    var uvStream: UnsafeMutablePointer<uv_stream_t> { uvCast(uvHandle) }

    override var isClosing: Bool { shutdownRequested || super.isClosing }

    /// The socket descriptor, or nil once closed / if not connected.
    var fileDescriptor: Int32? {
        guard !isClosed else { return nil }
        var fd: uv_os_fd_t = -1
        return uv_fileno(uvHandle, &fd) == 0 ? fd : nil
    }

    /// The connected peer's process, user and group (SO_PEERCRED on Linux),
    /// as seen when it connected; nil if unavailable.
    func peerCredentials() -> (pid: Int32, uid: UInt32, gid: UInt32)? {
        guard let fd = fileDescriptor else { return nil }
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        guard kvod_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return (pid, uid, gid)
    }

    /// The peer's supplementary groups (SO_PEERGROUPS), as seen when it
    /// connected; empty if unavailable.
    func peerGroups() -> [UInt32] {
        guard let fd = fileDescriptor else { return [] }
        var groups = [UInt32](repeating: 0, count: 64)
        var count = kvod_peer_groups(fd, &groups, Int32(groups.count))
        if count > groups.count {
            groups = [UInt32](repeating: 0, count: Int(count))
            count = kvod_peer_groups(fd, &groups, Int32(groups.count))
        }
        return count > 0 ? Array(groups.prefix(Int(count))) : []
    }

    // MARK: Reading

    /// Delivers incoming bytes to `onBytes` until EOF (`onEnd(nil)`) or a read
    /// error (`onEnd(error)`), after which reading is over and both closures
    /// are dropped. The buffer passed to `onBytes` is the loop's shared read
    /// buffer: valid only during the call, so copy what you keep.
    /// Throws (never calling either closure) if the stream is closing or not
    /// readable.
    func startReading(onBytes: @escaping (UnsafeRawBufferPointer) -> Void,
                      onEnd: @escaping (UVError?) -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        guard !isClosing else { throw UVError.invalidArgument }
        try UVError.check(uv_read_start(uvStream, onAlloc, onRead))
        self.onBytes = onBytes
        self.onEnd = onEnd
        isReading = true
    }

    /// Stops reading, e.g. while a client's output is backed up; the closures
    /// are kept for `resumeReading`.
    func stopReading() {
        loop.assertOnLoopThread()
        guard isReading, !isClosed else { return }
        uv_read_stop(uvStream)
        isReading = false
    }

    /// Restarts reading with the closures given to `startReading`. Throws if
    /// reading already ended (EOF, error) or the stream is closing.
    func resumeReading() throws(UVError) {
        guard let onBytes, let onEnd else { throw UVError.invalidArgument }
        if !isReading { try startReading(onBytes: onBytes, onEnd: onEnd) }
    }

    fileprivate func deliver(_ bytes: UnsafeRawBufferPointer) { onBytes?(bytes) }

    fileprivate func endReading(_ error: UVError?) {
        let handler = onEnd
        (isReading, onBytes, onEnd) = (false, nil, nil)
        handler?(error)
    }

    // MARK: Writing

    /// Writes `bytes` (copied if they must wait): no-op while closing or after
    /// a write error.
    func write(_ bytes: UnsafeRawBufferPointer) {
        loop.assertOnLoopThread()
        guard !isClosing, !writeFailed, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var sent = 0
        if queuedBytes == 0 {
            // Only when nothing is queued: libuv 1.44 also refuses (EAGAIN) a
            // try_write behind queued writes, which keeps the byte order.
            var buf = uv_buf_init(UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)),
                                  UInt32(clamping: bytes.count))
            let n = uv_try_write(uvStream, &buf, 1)
            if n >= 0 { sent = Int(n) } else if n != UV_EAGAIN.rawValue { return failWrite(UVError(code: n)) }
        }
        var offset = sent
        while offset < bytes.count {
            // uv_buf_t lengths are 32-bit.
            let length = min(bytes.count - offset, Int(Int32.max))
            if writesInFlight > 0, (gathering.map { Int($0.pointee.length) } ?? 0) + length <= Int(Int32.max) {
                guard gather(base + offset, length) else { return failWrite(.outOfMemory) }
            } else {
                // What was gathered goes first: bytes leave in the order written.
                guard submitGathered(), let req = kvod_write_req_create(base + offset, length) else {
                    return failWrite(.outOfMemory)
                }
                guard submit(req) else { return }
            }
            queuedBytes += length
            offset += length
        }
    }

    private func gather(_ bytes: UnsafeRawPointer, _ length: Int) -> Bool {
        guard let gathering else {
            gathering = kvod_write_req_create(bytes, length)
            return gathering != nil
        }
        guard let grown = kvod_write_req_append(gathering, bytes, length) else { return false }
        self.gathering = grown
        return true
    }

    /// Hands `req` to libuv, which owns it from then on (freed in `afterWrite`).
    /// False (and the write failed) if libuv refused it.
    @discardableResult
    private func submit(_ req: UnsafeMutablePointer<kvod_write_req_t>) -> Bool {
        var buf = kvod_write_req_buf(req)
        let rc = uv_write(kvod_write_req_uv(req), uvStream, &buf, 1, afterWrite)
        if rc < 0 {
            kvod_write_req_free(req)
            failWrite(UVError(code: rc))
            return false
        }
        writesInFlight += 1
        return true
    }

    /// Sends what was gathered, behind the requests in flight; false if libuv refused it.
    @discardableResult
    private func submitGathered() -> Bool {
        guard let req = gathering else { return true }
        gathering = nil
        return submit(req)
    }

    private func failWrite(_ error: UVError) {
        guard !writeFailed else { return }
        writeFailed = true
        onWriteError?(error)
    }

    fileprivate func writeCompleted(length: Int, status: Int32) {
        queuedBytes -= length
        writesInFlight -= 1
        if status < 0, status != UV_ECANCELED.rawValue { failWrite(UVError(code: status)) }
        guard !isClosing, !writeFailed else { return }
        if writesInFlight == 0 { guard submitGathered() else { return } }
        onWritten?()
        if queuedBytes == 0, !isClosing, !writeFailed { onDrained?() }
    }

    // MARK: Closing

    /// Stops reading, lets queued writes reach the peer, half-closes
    /// (`uv_shutdown`) and then closes. If shutdown cannot start, closes at
    /// once. A peer that never reads keeps the stream open: pair this with
    /// a timeout that calls `close`, which cancels the shutdown.
    func shutdownThenClose(onClosed: (() -> Void)? = nil) {
        loop.assertOnLoopThread()
        if let onClosed { whenClosed(onClosed) }
        guard !isClosing else { return }
        // Before uv_shutdown, after which libuv takes no more writes.
        if !writeFailed { submitGathered() }
        shutdownRequested = true
        stopReading()
        let req = UnsafeMutableRawPointer.allocate(byteCount: uv_req_size(UV_SHUTDOWN), alignment: 16)
        uv_req_set_data(uvCast(req), Unmanaged.passUnretained(self).toOpaque())
        if uv_shutdown(uvCast(req), uvStream, afterShutdown) < 0 {
            req.deallocate()
            super.close()
        }
    }

    override func didClose() {
        if let gathering { kvod_write_req_free(gathering) }
        gathering = nil
        (onBytes, onEnd) = (nil, nil)
        (onDrained, onWriteError, isReading) = (nil, nil, false)
        onWritten = nil
        super.didClose()
    }
}

// The request callbacks reach the stream through `req->data`, unretained: the
// stream's own retain lasts until its close callback, which libuv runs after
// every pending request callback (cancelled ones included).

private func onAlloc(_ handle: UnsafeMutablePointer<uv_handle_t>?, _: Int,
                     _ buf: UnsafeMutablePointer<uv_buf_t>?) {
    guard let buf else { return }
    guard let stream = UVHandle.owner(of: handle, as: UVStream.self),
          let base = stream.loop.readBuffer.baseAddress else {
        buf.pointee = uv_buf_init(nil, 0)  // read_cb gets UV_ENOBUFS
        return
    }
    buf.pointee = uv_buf_init(base.assumingMemoryBound(to: CChar.self), UInt32(UVLoop.readBufferSize))
}

private func onRead(_ handle: UnsafeMutablePointer<uv_stream_t>?, _ nread: Int,
                    _ buf: UnsafePointer<uv_buf_t>?) {
    guard let stream = UVHandle.owner(of: handle, as: UVStream.self) else { return }
    if nread > 0, let base = buf?.pointee.base {
        stream.deliver(UnsafeRawBufferPointer(start: base, count: nread))
    } else if nread < 0 {
        stream.endReading(nread == Int(UV_EOF.rawValue) ? nil : UVError(code: Int32(nread)))
    }
}

private func afterWrite(_ req: UnsafeMutablePointer<uv_write_t>?, _ status: Int32) {
    guard let req else { return }
    let write = kvod_write_req_from_uv(req)
    let length = Int(kvod_write_req_length(write))
    let stream = UVHandle.owner(of: kvod_write_req_stream(req), as: UVStream.self)
    kvod_write_req_free(write)
    stream?.writeCompleted(length: length, status: status)
}

private func afterShutdown(_ req: UnsafeMutablePointer<uv_shutdown_t>?, _: Int32) {
    guard let req else { return }
    let data = uv_req_get_data(uvCast(req))
    UnsafeMutableRawPointer(req).deallocate()
    // Closes whether or not the shutdown worked; a no-op if already closing.
    if let data { Unmanaged<UVStream>.fromOpaque(data).takeUnretainedValue().close() }
}

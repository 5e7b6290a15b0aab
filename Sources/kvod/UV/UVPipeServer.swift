import CLibUV

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening Unix socket (`uv_pipe_t`). Loop-confined.
///
/// A bound socket file is unlinked when the server closes if it is still
/// the one bound (``BoundSocketFile``; libuv's own unlink, which removes
/// whatever is at the path, is disowned); adopted descriptors (`open(fd:)`,
/// systemd) are not.
///
/// EMFILE/ENFILE — what libuv 1.44 does (src/unix/stream.c): `uv__server_io`
/// accepts in a loop; on EMFILE/ENFILE it runs `uv__emfile_trick`: close the
/// loop's spare descriptor (`loop->emfile_fd`, /dev/null opened by
/// `uv__stream_init` whenever it is missing), accept and close every pending
/// connection until EAGAIN, reopen the spare, leave the loop. The connection
/// callback is not called and the level-triggered epoll is not left readable:
/// no busy loop, clients just see their connection closed. Only if the spare
/// is missing (the loop's first stream was created with the table full, or
/// another thread took the slot) does libuv call the connection callback with
/// the error — then `continue`s, and since accept(2) checks for a free
/// descriptor before looking at the backlog, it spins until a slot frees up.
/// This class covers that case with a reserve descriptor of its own: close it
/// and drain the backlog, but leave the slot free, so libuv's next accept
/// returns EAGAIN and its loop ends. The reserve is taken back at the next
/// connection, which is rejected (closed) if that is the only way to get it.
/// With no reserve and no free slot, the server closes itself (the only way
/// out of libuv's loop) and reports the error.
final class UVPipeServer: UVHandle {
    private var onConnection: ((UVPipeServer) -> Void)?
    private var reserveFD: Int32 = -1
    private var connectionPending = false

    /// Path given to `bind`, nil for adopted descriptors.
    private(set) var path: String?
    /// The socket file `bind` made, removed at close if it is still there.
    private(set) var boundFile: BoundSocketFile?
    /// Reports accept failures that libuv passes on (see the type comment);
    /// EMFILE/ENFILE with neither reserve nor free slot also closes the server.
    var onAcceptError: ((UVError) -> Void)?

    init(loop: UVLoop) {
        super.init(loop: loop, type: UV_NAMED_PIPE) { raw in
            uv_pipe_init(loop.uvLoop, uvCast(raw), 0)
        }
    }

    private var pipe: UnsafeMutablePointer<uv_pipe_t> { uvCast(uvHandle) }
    private var stream: UnsafeMutablePointer<uv_stream_t> { uvCast(uvHandle) }

    /// sun_path's capacity: 108 on Linux, 104 on Darwin.
    static let maxSocketPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// Refuses what libuv 1.44 would silently truncate (paths of
    /// `maxSocketPathBytes` bytes or more, counting none for the NUL) or
    /// misread (empty, embedded NUL: no abstract sockets here).
    static func validateSocketPath(_ path: String) throws(UVError) {
        let bytes = path.utf8
        if bytes.count >= maxSocketPathBytes { throw UVError.nameTooLong }
        if bytes.isEmpty || bytes.contains(0) { throw UVError.invalidArgument }
    }

    /// Creates the socket file at `path` (fails with EADDRINUSE if it exists:
    /// removing a stale one is the caller's decision). The umask is 0o177
    /// during bind(2), so the file is born srw------- and nobody else can
    /// connect before `chmod`; umask is per process, so bind before other
    /// threads create files.
    func bind(path: String) throws(UVError) {
        loop.assertOnLoopThread()
        try Self.validateSocketPath(path)
        guard !isClosing else { throw UVError.invalidArgument }
        let previous = umask(0o177)
        let rc = uv_pipe_bind(pipe, path)
        umask(previous)
        try UVError.check(rc)
        kvod_pipe_disown_path(pipe)
        self.path = path
        boundFile = BoundSocketFile(at: path)
    }

    /// Sets the socket file's exact mode (e.g. 0o660 for a group). Plain
    /// chmod(2) on the bound path: `uv_pipe_chmod` only knows READABLE and
    /// WRITABLE, each granting user, group and other alike.
    func chmod(mode: mode_t) throws(UVError) {
        loop.assertOnLoopThread()
        guard let path else { throw UVError.badFileDescriptor }
        if Glibc.chmod(path, mode) != 0 { throw UVError.fromErrno(errno) }
    }

    /// Adopts an already bound and listening descriptor (systemd socket
    /// activation, LISTEN_FDS). The server owns it from now on.
    func open(fd: Int32) throws(UVError) {
        loop.assertOnLoopThread()
        guard !isClosing else { throw UVError.invalidArgument }
        try UVError.check(uv_pipe_open(pipe, fd))
    }

    /// Starts listening; `onConnection` runs for each incoming connection and
    /// should call `accept()`. Throws (never calling `onConnection`) if not
    /// bound/opened or if the reserve descriptor cannot be opened.
    func listen(backlog: Int32 = 511, onConnection: @escaping (UVPipeServer) -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        guard !isClosing else { throw UVError.invalidArgument }
        if reserveFD < 0 { reserveFD = try UVError.check(kvod_open_reserve_fd()) }
        try UVError.check(uv_listen(stream, backlog, onConnectionCallback))
        self.onConnection = onConnection
    }

    /// Takes the pending connection. Call from `onConnection` (or later, for
    /// a deliberately delayed accept).
    func accept() throws(UVError) -> UVStream {
        loop.assertOnLoopThread()
        guard connectionPending, !isClosing else { throw UVError.again }
        let client = UVStream(loop: loop)
        let rc = uv_accept(stream, client.uvStream)
        connectionPending = false
        if rc < 0 {
            client.close()
            throw UVError(code: rc)
        }
        return client
    }

    override func didClose() {
        onConnection = nil
        onAcceptError = nil
        if reserveFD >= 0 { Glibc.close(reserveFD) }
        reserveFD = -1
        boundFile?.removeIfUnchanged()
        boundFile = nil
        super.didClose()
    }

    fileprivate func connectionArrived(status: Int32) {
        guard status >= 0 else { return acceptFailed(UVError(code: status)) }
        connectionPending = true
        if reserveFD < 0 { reserveFD = openReserve() }
        if reserveFD < 0 {
            // This connection took the slot the reserve needs: reject it.
            (try? accept())?.close()
            reserveFD = openReserve()
            return
        }
        onConnection?(self)
    }

    private func acceptFailed(_ error: UVError) {
        guard error == .tooManyOpenFiles || error == .fileTableOverflow else {
            onAcceptError?(error)
            return
        }
        if reserveFD < 0 { reserveFD = openReserve() }
        var listenFD: uv_os_fd_t = -1
        guard reserveFD >= 0, uv_fileno(uvHandle, &listenFD) == 0 else {
            let handler = onAcceptError
            close()
            handler?(error)
            return
        }
        Glibc.close(reserveFD)
        reserveFD = -1
        _ = kvod_drain_listener(listenFD)
        onAcceptError?(error)
    }

    private func openReserve() -> Int32 { max(kvod_open_reserve_fd(), -1) }
}

private func onConnectionCallback(_ server: UnsafeMutablePointer<uv_stream_t>?, _ status: Int32) {
    UVHandle.owner(of: server, as: UVPipeServer.self)?.connectionArrived(status: status)
}

import CLibUV

/// A libuv poll handle (`uv_poll_t`) on a socket another library owns (libcurl's):
/// tells when it is readable or writable. Loop-confined.
///
/// It must be stopped (or closed) before the socket is closed: libcurl says so
/// first (`CURL_POLL_REMOVE`), and the same descriptor may then come back for
/// a new socket, in a new handle.
final class UVPoll: UVHandle {
    /// What the socket is ready for; `failed`: an error or hang-up on it.
    typealias Handler = (_ readable: Bool, _ writable: Bool, _ failed: Bool) -> Void
    private var handler: Handler?

    init(loop: UVLoop, socket: Int32) {
        super.init(loop: loop, type: UV_POLL) { raw in
            uv_poll_init_socket(loop.uvLoop, uvCast(raw), socket)
        }
    }

    /// Watches for what is asked, replacing what was asked before.
    func start(readable: Bool, writable: Bool, handler: @escaping Handler) {
        loop.assertOnLoopThread()
        var events: Int32 = 0
        if readable { events |= Int32(UV_READABLE.rawValue) }
        if writable { events |= Int32(UV_WRITABLE.rawValue) }
        guard !isClosing, uv_poll_start(uvCast(uvHandle), events, onPoll) == 0 else { return }
        self.handler = handler
    }

    override func didClose() {
        handler = nil
        super.didClose()
    }

    fileprivate func fire(status: Int32, events: Int32) {
        handler?(events & Int32(UV_READABLE.rawValue) != 0, events & Int32(UV_WRITABLE.rawValue) != 0, status < 0)
    }
}

private func onPoll(_ handle: UnsafeMutablePointer<uv_poll_t>?, _ status: Int32, _ events: Int32) {
    UVHandle.owner(of: handle, as: UVPoll.self)?.fire(status: status, events: events)
}

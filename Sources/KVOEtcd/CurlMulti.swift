import CCurl

/// libcurl's multi interface driven from outside: libcurl says which sockets
/// and timeouts it waits for through the ``EtcdEventDriver``, and the driver's
/// events come back through ``socketReady(_:readable:writable:failed:)`` and
/// ``timerFired()`` into `curl_multi_socket_action` (the pattern of libcurl's
/// "multi_socket" documentation). One thread: the driver's.
final class CurlMulti {
    private let multi: UnsafeMutableRawPointer
    /// Kept: the multi tells it to forget its sockets when it goes (below).
    private let driver: any EtcdEventDriver
    /// Sockets the driver watches for libcurl.
    private var watchedSockets: Set<Int32> = []
    /// Transfers in flight, by easy handle. The multi keeps them alive.
    private(set) var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    /// libcurl's one-time global setup, done before the first handle.
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    init(driver: any EtcdEventDriver) {
        _ = Self.globalInit
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        self.driver = driver
        let context = Unmanaged.passUnretained(self).toOpaque()
        kvod_curl_multi_set_socket_function(multi, { _, socket, what, context, _ in
            guard let context else { return 0 }
            Unmanaged<CurlMulti>.fromOpaque(context).takeUnretainedValue().curlWatches(socket, what)
            return 0
        }, context)
        kvod_curl_multi_set_timer_function(multi, { _, milliseconds, context in
            guard let context else { return 0 }
            Unmanaged<CurlMulti>.fromOpaque(context).takeUnretainedValue()
                .driver.scheduleTimer(milliseconds: milliseconds < 0 ? nil : milliseconds)
            return 0
        }, context)
    }

    deinit {
        // Removing handles closes their sockets: the driver stops watching them first
        // (libuv's uv_poll must be stopped before its descriptor closes), and libcurl's
        // callbacks, which would reach back into this half-gone object, are turned off.
        for socket in watchedSockets { driver.watch(socket: socket, for: nil) }
        driver.scheduleTimer(milliseconds: nil)
        kvod_curl_multi_set_socket_function(multi, nil, nil)
        kvod_curl_multi_set_timer_function(multi, nil, nil)
        for transfer in transfers.values {
            curl_multi_remove_handle(multi, transfer.easy)
            // Their owners (a watch) may be held by these closures alone.
            transfer.onBytes = nil
            transfer.onDone = nil
        }
        curl_multi_cleanup(multi)
    }

    func add(_ transfer: CurlTransfer) {
        transfers[transfer.easy] = transfer
        curl_multi_add_handle(multi, transfer.easy)
    }

    /// Stops a transfer without calling its `onDone`.
    func cancel(_ transfer: CurlTransfer) {
        guard transfers.removeValue(forKey: transfer.easy) != nil else { return }
        curl_multi_remove_handle(multi, transfer.easy)
    }

    func socketReady(_ socket: Int32, readable: Bool, writable: Bool, failed: Bool) {
        var mask: Int32 = 0
        if readable { mask |= CURL_CSELECT_IN }
        if writable { mask |= CURL_CSELECT_OUT }
        if failed { mask |= CURL_CSELECT_ERR }
        var running: Int32 = 0
        curl_multi_socket_action(multi, curl_socket_t(socket), mask, &running)
        deliver()
    }

    func timerFired() {
        var running: Int32 = 0
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
        deliver()
    }

    private func curlWatches(_ socket: curl_socket_t, _ what: Int32) {
        if what == CURL_POLL_REMOVE { watchedSockets.remove(socket) } else { watchedSockets.insert(socket) }
        switch what {
        case CURL_POLL_IN: driver.watch(socket: socket, for: .readable)
        case CURL_POLL_OUT: driver.watch(socket: socket, for: .writable)
        case CURL_POLL_INOUT: driver.watch(socket: socket, for: .readableAndWritable)
        default: driver.watch(socket: socket, for: nil)
        }
    }

    /// Hands received bytes and finished transfers to their owners, outside of
    /// libcurl's callbacks, so that the owners may start or cancel transfers.
    private func deliver() {
        for transfer in Array(transfers.values) where transfer.hasNewBytes {
            transfer.hasNewBytes = false
            if transfers[transfer.easy] != nil { transfer.onBytes?(transfer) }
        }
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = transfers.removeValue(forKey: easy) else { continue }
            let result = kvod_curl_msg_result(message)
            curl_multi_remove_handle(multi, easy)
            let status = kvod_curl_easy_response_code(easy)
            if transfer.hasNewBytes {
                transfer.hasNewBytes = false
                transfer.onBytes?(transfer)
            }
            transfer.onDone?(result, status)
        }
    }
}

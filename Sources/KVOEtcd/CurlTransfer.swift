import CCurl

/// One HTTP POST on a ``CurlMulti``: a libcurl easy handle, its request body
/// and headers, and the bytes received so far, bounded by `maxBytes`.
final class CurlTransfer {
    let easy: UnsafeMutableRawPointer
    private var headers: UnsafeMutablePointer<curl_slist>?
    /// Bytes received and not yet taken: a unary request's whole answer, or a
    /// stream's bytes since its consumer last drained them.
    var received: [UInt8] = []
    /// Set when `received` would have grown past `maxBytes`: libcurl then ends
    /// the transfer with a write error, reported as ``EtcdError/responseTooLarge(limit:)``.
    private(set) var overflowed = false
    let maxBytes: Int
    /// Set by the write callback, cleared when ``CurlMulti`` hands the bytes on.
    var hasNewBytes = false
    /// A stream's consumer: called after each turn that brought bytes.
    var onBytes: ((CurlTransfer) -> Void)?
    /// Called once, when libcurl finishes the transfer (or it is cancelled:
    /// then never), with libcurl's result and the HTTP status.
    var onDone: ((CURLcode, Int) -> Void)?

    /// `timeoutMilliseconds` bounds the whole transfer (nil: a stream, unbounded).
    init(url: String, body: [UInt8], headers extraHeaders: [String], timeoutMilliseconds: Int?,
         connectTimeoutMilliseconds: Int, keepAlive: TCPKeepAlive, maxBytes: Int) throws(EtcdError) {
        guard let easy = curl_easy_init() else {
            throw EtcdError.unreachable(endpoint: url, detail: "curl_easy_init failed", mayHaveApplied: false)
        }
        self.easy = easy
        self.maxBytes = maxBytes
        // No "Expect: 100-continue": it would cost a round trip on larger bodies.
        for header in ["Content-Type: application/json", "Expect:"] + extraHeaders {
            headers = curl_slist_append(headers, header)
        }
        kvod_curl_easy_set_string(easy, CURLOPT_URL, url)
        kvod_curl_easy_set_long(easy, CURLOPT_POST, 1)
        kvod_curl_easy_set_long(easy, CURLOPT_POSTFIELDSIZE, body.count)
        body.withUnsafeBytes { bytes in
            // COPYPOSTFIELDS copies the body, so it need not outlive this call.
            _ = kvod_curl_easy_set_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        }
        kvod_curl_easy_set_slist(easy, CURLOPT_HTTPHEADER, headers)
        // No signals: libcurl runs inside a daemon that handles its own.
        kvod_curl_easy_set_long(easy, CURLOPT_NOSIGNAL, 1)
        kvod_curl_easy_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds)
        if let timeoutMilliseconds { kvod_curl_easy_set_long(easy, CURLOPT_TIMEOUT_MS, timeoutMilliseconds) }
        kvod_curl_easy_set_keepalive(easy, keepAlive.idleSeconds, keepAlive.intervalSeconds, Int32(keepAlive.probes))
        kvod_curl_easy_set_write_function(easy) { bytes, size, count, context in
            guard let context, let bytes else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.append(UnsafeRawBufferPointer(start: bytes, count: size * count))
        }
        kvod_curl_easy_set_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headers)
    }

    /// libcurl's write callback: keeps the bytes, or refuses them (0) past the bound.
    private func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard received.count + bytes.count <= maxBytes else {
            overflowed = true
            return 0
        }
        received.append(contentsOf: bytes)
        hasNewBytes = true
        return bytes.count
    }

    /// Stops (or starts again) reading the response: libcurl leaves the socket
    /// unread, so the sender is held back by TCP. Unpausing may hand libcurl's
    /// held bytes to the write callback at once; they wait in ``received`` for
    /// the next turn's ``CurlMulti`` delivery, as any others.
    func pauseReceiving(_ paused: Bool) {
        _ = curl_easy_pause(easy, paused ? CURLPAUSE_RECV : CURLPAUSE_RECV_CONT)
    }

    /// The received bytes, emptied.
    func takeReceived() -> [UInt8] {
        defer { received = [] }
        return received
    }
}

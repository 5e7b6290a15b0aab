import CH2O

/// An HTTP/1.1 server on the daemon's loop: H2O, through the C shim of
/// `Sources/CH2O`. Loop-confined, like every handle of this layer.
///
/// H2O parses requests, keeps connections alive, times out slow senders and
/// refuses bodies over the limit; each whole request comes to ``onRequest``
/// as an ``H2ORequest``, answered then or later.
final class H2OServer {
    private var server: OpaquePointer?
    /// Called on the loop for each request.
    var onRequest: (H2ORequest) -> Void = { $0.respond(status: 503, body: []) }
    /// Called when a request's memory goes (answered, or its connection closed
    /// first), for the keys given to ``H2ORequest/watchGone(on:key:)``.
    var onGone: (UInt64) -> Void = { _ in }
    /// Called when a streamed response's last part went to the socket and the
    /// next may be sent, for the key given to ``H2ORequest/startStream(status:contentType:headers:on:key:)``.
    var onProceed: (UInt64) -> Void = { _ in }

    /// `requestTimeoutMilliseconds`: how long a request may take to arrive;
    /// `maxBodyBytes`: longer bodies get 413 from H2O; connections past
    /// `maxConnections` are closed as soon as they are accepted.
    init(loop: UVLoop, requestTimeoutMilliseconds: UInt64, maxBodyBytes: Int, maxConnections: Int) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        server = kvod_http_server_create(UnsafeMutableRawPointer(loop.uvLoop), context, { context, request in
            guard let request else { return }
            H2OServer.of(context)?.onRequest(H2ORequest(raw: request))
        }, requestTimeoutMilliseconds, maxBodyBytes, maxConnections)
    }

    /// Listens on `host` (a numeric IPv4 or IPv6 address) and `port` (0: any
    /// free one); returns the port bound.
    func listen(host: String, port: UInt16) throws(UVError) -> UInt16 {
        guard let server else { throw UVError(code: -12) }  // ENOMEM: create failed
        var bound: UInt16 = 0
        try UVError.check(kvod_http_server_listen(server, host, port, &bound))
        return bound
    }

    /// Serves TLS with the PEM certificate chain and key of these files;
    /// throws OpenSSL's reason.
    func useTLS(certificateFile: String, keyFile: String) throws(H2OTLSError) {
        guard let server else { throw H2OTLSError(description: "the HTTP server could not be made") }
        var error = [CChar](repeating: 0, count: 256)
        guard kvod_http_server_use_tls(server, certificateFile, keyFile, &error, error.count) == 0 else {
            throw H2OTLSError(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// Stops accepting; idle keep-alive connections close, open ones finish
    /// their request. The loop closes what is left at shutdown.
    func stop() {
        guard let server else { return }
        kvod_http_server_stop(server)
    }

    fileprivate static let goneCallback: kvod_http_gone_cb = { context, key in H2OServer.of(context)?.onGone(key) }
    fileprivate static let proceedCallback: kvod_http_proceed_cb = { context, key in H2OServer.of(context)?.onProceed(key) }

    /// The server whose ``context`` a C callback got.
    private static func of(_ context: UnsafeMutableRawPointer?) -> H2OServer? {
        context.map { Unmanaged<H2OServer>.fromOpaque($0).takeUnretainedValue() }
    }

    fileprivate var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// One request: H2O's memory, valid until it is answered or its connection
/// goes (``H2OServer/onGone``). Read what is needed before answering.
struct H2ORequest {
    let raw: OpaquePointer

    var method: String { Self.string(kvod_http_method(raw)) }
    /// The path with its query, as sent (not yet percent-decoded).
    var target: String { Self.string(kvod_http_path(raw)) }
    var body: UnsafeRawBufferPointer {
        let text = kvod_http_body(raw)
        return UnsafeRawBufferPointer(start: text.base, count: text.len)
    }

    /// The first header of that name (lower case), if any.
    func header(_ lowercaseName: String) -> String? {
        let text = kvod_http_header(raw, lowercaseName)
        return text.base == nil ? nil : Self.string(text)
    }

    /// Sends the whole response; `headers` besides Content-Type and Content-Length.
    func respond(status: Int, contentType: String? = nil, headers: [(String, String)] = [], body: [UInt8]) {
        for (name, value) in headers {
            var value = value
            value.withUTF8 { kvod_http_add_header(raw, name, $0.baseAddress, $0.count) }
        }
        body.withUnsafeBytes { bytes in
            if let contentType {
                kvod_http_respond(raw, Int32(status), HTTPStatusReason.text(status), contentType, bytes.baseAddress, bytes.count)
            } else {
                kvod_http_respond(raw, Int32(status), HTTPStatusReason.text(status), nil, bytes.baseAddress, bytes.count)
            }
        }
    }

    /// Starts a streamed response; its parts go with ``send(_:final:)``, one
    /// after each ``H2OServer/onProceed`` with `key`.
    func startStream(status: Int, contentType: String, headers: [(String, String)], on server: H2OServer, key: UInt64) {
        for (name, value) in headers {
            var value = value
            value.withUTF8 { kvod_http_add_header(raw, name, $0.baseAddress, $0.count) }
        }
        kvod_http_stream_start(raw, Int32(status), HTTPStatusReason.text(status), contentType, H2OServer.proceedCallback,
                               server.context, key)
    }

    /// Sends a part of a streamed response; `final` ends it.
    func send(_ bytes: [UInt8], final: Bool) {
        bytes.withUnsafeBytes { kvod_http_stream_send(raw, $0.baseAddress, $0.count, final ? 1 : 0) }
    }

    /// Sends a part of a streamed response without copying it: `bytes` must
    /// stay as they are until the ``H2OServer/onProceed`` that follows.
    func send(borrowing bytes: UnsafeRawBufferPointer) {
        kvod_http_stream_send_unowned(raw, bytes.baseAddress, bytes.count)
    }

    /// Asks `server` to call its ``H2OServer/onGone`` with `key` when this request's memory goes.
    func watchGone(on server: H2OServer, key: UInt64) {
        kvod_http_on_gone(raw, H2OServer.goneCallback, server.context, key)
    }

    private static func string(_ text: kvod_http_text) -> String {
        guard let base = text.base else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: base, count: text.len), as: UTF8.self)
    }
}

/// Why TLS could not be set up (OpenSSL's reason).
struct H2OTLSError: Error, CustomStringConvertible {
    let description: String
}

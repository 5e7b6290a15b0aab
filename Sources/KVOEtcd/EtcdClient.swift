import CCurl
import KVOValues

/// An etcd v3 client over etcd's JSON gateway (HTTP/1.1, `/v3/…`), through
/// libcurl's multi interface, driven by an event loop the caller owns (see
/// ``EtcdEventDriver``). One thread: every call, and every completion, on the
/// driver's. Completions run from ``socketReady(_:readable:writable:failed:)``
/// or ``timerFired()`` (only a request libcurl cannot allocate a handle for
/// fails at once, from the call that started it).
///
/// Endpoints: requests go to one endpoint at a time. When it cannot be
/// connected to, the request moves to the next one at once (nothing was sent);
/// when a sent request fails on the way, the next request goes to the next
/// endpoint and this one fails with `mayHaveApplied`, since etcd may have
/// applied it: the caller decides whether retrying is safe.
public final class EtcdClient {
    /// Where etcd is and how long the client waits for it.
    public struct Configuration: Sendable {
        /// Base URLs of etcd members, e.g. `http://10.0.0.1:2379`.
        public var endpoints: [String]
        /// The whole of one request, connection included.
        public var requestTimeoutMilliseconds = 5_000
        /// Connecting to one endpoint.
        public var connectTimeoutMilliseconds = 1_000
        /// The largest response, or watch message, the client accepts: memory is
        /// bounded in bytes. etcd's own requests are limited to 1.5 MiB
        /// (`--max-request-bytes`), but a range over a prefix can answer more.
        public var maxResponseBytes = 64 << 20
        /// Probes that find a peer gone without a word, on every connection:
        /// the watch's, which has no timeout, above all.
        public var keepAlive = TCPKeepAlive()

        public init(endpoints: [String]) {
            self.endpoints = endpoints
        }
    }

    public let configuration: Configuration
    /// The endpoint the next request goes to.
    public private(set) var currentEndpoint: String
    private var currentIndex = 0
    let multi: CurlMulti

    /// A client of the endpoints in `configuration`, driven by `driver` (which it keeps).
    public init(_ configuration: Configuration, driver: any EtcdEventDriver) throws(EtcdError) {
        let endpoints = configuration.endpoints.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        guard let first = endpoints.first,
              endpoints.allSatisfy({ $0.hasPrefix("http://") || $0.hasPrefix("https://") }) else {
            throw .invalidConfiguration("etcd endpoints must be http:// or https:// URLs, at least one: \(configuration.endpoints)")
        }
        var configuration = configuration
        configuration.endpoints = endpoints
        self.configuration = configuration
        currentEndpoint = first
        multi = CurlMulti(driver: driver)
    }

    // MARK: Driven by the event loop

    /// The driver saw `socket` ready for what the client asked.
    public func socketReady(_ socket: Int32, readable: Bool, writable: Bool, failed: Bool = false) {
        multi.socketReady(socket, readable: readable, writable: writable, failed: failed)
    }

    /// The timer the client scheduled is due.
    public func timerFired() { multi.timerFired() }

    // MARK: Key-value

    public func range(_ request: EtcdRangeRequest, _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void) {
        call("/kv/range", request.json.jsonBytes, retriesWhatMayHaveApplied: true, parse: EtcdRangeResponse.init, done)
    }

    /// A linearizable read of `request` at `endpoint` that must answer within
    /// `timeoutMilliseconds`, not retried elsewhere: whether that member (and
    /// through it the cluster's leader) answers now, and the revision it is at.
    /// A stopped member's kernel still takes the connection, so only an
    /// answer tells that it is alive.
    public func probe(_ request: EtcdRangeRequest, at endpoint: String, timeoutMilliseconds: Int,
                      _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void) {
        call("/kv/range", request.json.jsonBytes, pinned: endpoint, timeoutMilliseconds: timeoutMilliseconds,
             parse: EtcdRangeResponse.init, done)
    }

    /// The next requests, and watches started from now, go to another
    /// endpoint than `endpoint` (one that did not answer in time).
    public func avoid(_ endpoint: String) {
        moveOn(from: endpoint)
    }

    /// `idempotent`: applying the request twice does what applying it once
    /// does (a create-if-absent that reads the key otherwise), so an attempt
    /// whose outcome is unknown (a hung endpoint) is made again on the next one.
    /// The handle tells where it went and lets the caller stop waiting for it.
    @discardableResult
    public func txn(_ request: EtcdTxnRequest, idempotent: Bool = false,
                    _ done: @escaping (Result<EtcdTxnResponse, EtcdError>) -> Void) -> EtcdRequest {
        let handle = EtcdRequest(endpoint: currentEndpoint)
        call("/kv/txn", request.body, handle: handle, retriesWhatMayHaveApplied: idempotent, parse: EtcdTxnResponse.init,
             done)
        return handle
    }

    // MARK: Leases

    /// A new lease that ends `ttl` seconds after its last renewal.
    public func grantLease(ttl: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void) {
        call("/lease/grant", JSONValue.object(["TTL": .int64(ttl)]).jsonBytes, parse: EtcdLease.init, done)
    }

    /// Renews a lease once (the gateway's keepalive stream, one message long).
    /// A lease that no longer exists answers a ttl of 0 or less.
    public func keepAlive(lease: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void) {
        call("/lease/keepalive", JSONValue.object(["ID": .int64(lease)]).jsonBytes, retriesWhatMayHaveApplied: true, parse: { json throws(EtcdError) in
            guard let result = json.member("result") else {
                throw .malformedResponse("a keepalive answer without result")
            }
            return try EtcdLease(result)
        }, done)
    }

    /// Ends a lease now: etcd deletes every key attached to it, in one revision.
    public func revokeLease(_ lease: Int64, _ done: @escaping (Result<EtcdResponseHeader, EtcdError>) -> Void) {
        call("/lease/revoke", JSONValue.object(["ID": .int64(lease)]).jsonBytes, retriesWhatMayHaveApplied: true, parse: { json throws(EtcdError) in
            try EtcdResponseHeader(json.member("header"))
        }, done)
    }

    // MARK: Cluster

    /// What `endpoint` (by default the current one) says of itself, the leader among it;
    /// within `timeoutMilliseconds` (nil: the configuration's request timeout).
    public func status(of endpoint: String? = nil, timeoutMilliseconds: Int? = nil,
                       _ done: @escaping (Result<EtcdStatus, EtcdError>) -> Void) {
        call("/maintenance/status", JSONValue.object([:]).jsonBytes, pinned: endpoint, timeoutMilliseconds: timeoutMilliseconds,
             parse: EtcdStatus.init, done)
    }

    // MARK: Watches

    /// Starts a watch on the current endpoint. Its updates go to `handler` until
    /// it ends (``EtcdWatchUpdate/compacted(compactRevision:)``, `cancelled`,
    /// `ended`) or ``EtcdWatch/cancel()`` is called. The watch asks that the
    /// member have a leader (`Grpc-Metadata-hasleader: true`), so a member cut
    /// off from the cluster ends the watch rather than leaving it silent.
    @discardableResult
    public func watch(_ request: EtcdWatchRequest, _ handler: @escaping (EtcdWatchUpdate) -> Void) -> EtcdWatch {
        let endpoint = currentEndpoint
        let watch = EtcdWatch(request: request, endpoint: endpoint, maxMessageBytes: configuration.maxResponseBytes,
                              multi: multi, handler: handler)
        do {
            let transfer = try CurlTransfer(url: endpoint + "/v3/watch", body: request.json.jsonBytes,
                                            headers: ["Grpc-Metadata-hasleader: true"], timeoutMilliseconds: nil,
                                            connectTimeoutMilliseconds: configuration.connectTimeoutMilliseconds, keepAlive: configuration.keepAlive,
                                            maxBytes: configuration.maxResponseBytes)
            watch.start(transfer) { [weak self] error in
                if case .unreachable? = error { self?.moveOn(from: endpoint) }
            }
        } catch {
            watch.fail(error)
        }
        return watch
    }

    // MARK: Requests

    /// `retriesWhatMayHaveApplied`: the request may be made again whatever
    /// became of an attempt (a read, a renewal, a revocation), so a hung
    /// endpoint's timeout moves it to the next endpoint, as a refused
    /// connection does; a change is retried only when it was surely not sent.
    /// `handle`: told each attempt, and finished before `done` is told.
    func call<T>(_ path: String, _ body: [UInt8], pinned: String? = nil, handle: EtcdRequest? = nil,
                         attempt: Int = 0, retriesWhatMayHaveApplied: Bool = false, timeoutMilliseconds: Int? = nil,
                         parse: @escaping (JSONValue) throws(EtcdError) -> T,
                         _ done: @escaping (Result<T, EtcdError>) -> Void) {
        let endpoint = pinned ?? currentEndpoint
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(url: endpoint + "/v3" + path, body: body, headers: [],
                                        timeoutMilliseconds: timeoutMilliseconds ?? configuration.requestTimeoutMilliseconds,
                                        connectTimeoutMilliseconds: configuration.connectTimeoutMilliseconds, keepAlive: configuration.keepAlive,
                                        maxBytes: configuration.maxResponseBytes)
        } catch {
            handle?.finish()
            done(.failure(error))
            return
        }
        let done: (Result<T, EtcdError>) -> Void = { [weak handle] result in
            handle?.finish()
            done(result)
        }
        handle?.attempt(transfer, to: endpoint, on: multi) { done(.failure($0)) }
        transfer.onDone = { [unowned self, unowned transfer] code, status in
            switch Self.outcome(of: transfer, code: code, status: status, endpoint: endpoint) {
            case .success(let json):
                done(Result { () throws(EtcdError) in try parse(json) })
            case .failure(let error):
                guard case .unreachable(_, _, let mayHaveApplied) = error, pinned == nil else {
                    return done(.failure(error))
                }
                moveOn(from: endpoint)
                if (!mayHaveApplied || retriesWhatMayHaveApplied) && attempt + 1 < configuration.endpoints.count {
                    call(path, body, handle: handle, attempt: attempt + 1, retriesWhatMayHaveApplied: retriesWhatMayHaveApplied,
                         parse: parse, done)
                } else {
                    done(.failure(error))
                }
            }
        }
        multi.add(transfer)
    }

    /// The next request goes to the endpoint after `endpoint`, unless another
    /// failure already moved on from it.
    private func moveOn(from endpoint: String) {
        guard endpoint == currentEndpoint else { return }
        currentIndex = (currentIndex + 1) % configuration.endpoints.count
        currentEndpoint = configuration.endpoints[currentIndex]
    }

    /// A finished unary transfer's JSON answer, or why there is none.
    static func outcome(of transfer: CurlTransfer, code: CURLcode, status: Int, endpoint: String)
        -> Result<JSONValue, EtcdError> {
        if code == CURLE_WRITE_ERROR && transfer.overflowed { return .failure(.responseTooLarge(limit: transfer.maxBytes)) }
        guard code == CURLE_OK else {
            // Nothing was sent when the connection itself failed.
            let unsent = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST
            return .failure(.unreachable(endpoint: endpoint, detail: String(cString: curl_easy_strerror(code)),
                                         mayHaveApplied: !unsent))
        }
        let json: JSONValue
        do {
            json = try JSONReader.parse(transfer.received)
        } catch {
            return .failure(.malformedResponse("HTTP \(status): \(error.message)"))
        }
        if status != 200 || json.member("error") != nil { return .failure(gatewayError(json, status: status)) }
        return .success(json)
    }

    /// The gateway's error object: `{"error": text, "message": text, "code": n}`,
    /// or within a stream `{"error": {"grpc_code": n, "message": text, …}}`.
    static func gatewayError(_ json: JSONValue, status: Int) -> EtcdError {
        let error = json.member("error")
        let detail = error?.member("grpc_code") != nil ? error! : json
        let code = (try? detail.int64(detail.member("grpc_code") != nil ? "grpc_code" : "code")) ?? 0
        var message = "HTTP \(status)"
        if case .string(let text)? = detail.member("message") { message = text }
        return .server(code: Int(code), message: message)
    }
}

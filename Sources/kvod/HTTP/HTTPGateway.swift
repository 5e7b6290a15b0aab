import KVODCore
import KVOEngine

/// kvod's HTTP door (`--http`, docs/HTTP.md): H2O on the daemon's loop. An API
/// request becomes the request line a socket client would send (``HTTPRoute``)
/// and is served by a ``ClientConnection`` (``HTTPExchange``) with the
/// credentials of its token: one an earlier request of the same subject left
/// with nothing of its own (``HTTPIdleConnections``), or a new one; its reply
/// becomes the response (``HTTPAnswer``). A watch has a connection of its
/// own. `/healthz` and `/readyz` are answered here, without a token.
/// Loop-confined.
final class HTTPGateway {
    private unowned let daemon: Daemon
    private let server: H2OServer
    private var tokens: HTTPTokens?
    /// Where it listens, as `host:port` with the port bound.
    private(set) var address = ""
    /// Requests handed to a connection and not gone yet, by key; `exchange`: nil for a watch.
    private var exchanges: [UInt64: (request: H2ORequest, connection: ClientConnection,
                                     exchange: HTTPExchange?)] = [:]
    /// Connections of answered requests, kept for the next ones.
    private var idle = HTTPIdleConnections()
    /// The watches among them.
    private var watches: [UInt64: HTTPEventStream] = [:]
    /// The frames of the event lines written last, which the watches share.
    private let frames = HTTPFrameCache()
    private var nextKey: UInt64 = 0
    /// Sends the watches that said nothing a comment every ``heartbeatMilliseconds``.
    private let heartbeat: UVTimer
    static let heartbeatMilliseconds: UInt64 = 15_000

    /// `/metrics` without a token (`--http-metrics-open`).
    private let metricsAreOpen: Bool
    /// The web origin whose pages may call the API (`--http-cors-origin`).
    private let crossOrigin: HTTPCrossOrigin?

    init(daemon: Daemon, tokens: HTTPTokens?, metricsAreOpen: Bool, crossOrigin: HTTPCrossOrigin?) {
        self.daemon = daemon
        self.tokens = tokens
        self.metricsAreOpen = metricsAreOpen
        self.crossOrigin = crossOrigin
        // A body is one value of a request line: no longer than a line may be. HTTP's
        // sockets take at most a quarter of --max-connections' descriptors, so that
        // HTTP clients cannot take the socket's, and at most 1,024: H2O holds up to
        // about 417 KB of headers for each while they arrive (docs/HTTP.md).
        server = H2OServer(loop: daemon.loop, requestTimeoutMilliseconds: daemon.configuration.httpRequestTimeoutMilliseconds,
                           maxBodyBytes: daemon.configuration.maxLineBytes,
                           maxConnections: Self.maxSockets(maxConnections: daemon.maxConnections))
        heartbeat = UVTimer(loop: daemon.loop)
        server.onRequest = { [unowned self] request in self.handle(request) }
        server.onGone = { [unowned self] key in self.requestGone(key) }
        server.onProceed = { [unowned self] key in self.watches[key]?.proceeded() }
        heartbeat.start(afterMilliseconds: Self.heartbeatMilliseconds, repeatMilliseconds: Self.heartbeatMilliseconds) {
            [unowned self] in
            for watch in self.watches.values { watch.sendHeartbeat() }
        }
    }

    /// Takes the tokens of a reloaded `--http-tokens` file (SIGHUP), for the
    /// requests that come next; the connections kept for the old tokens' subjects close.
    func replaceTokens(_ tokens: HTTPTokens) {
        self.tokens = tokens
        for kept in idle.takeAll() { daemon.closeSetAside(kept.connection) }
    }

    /// How many HTTP connections may be open at once.
    static func maxSockets(maxConnections: Int) -> Int { min(1_024, max(1, maxConnections / 4)) }

    /// Serves TLS with these PEM files (`--http-cert`, `--http-key`).
    func useTLS(certificateFile: String, keyFile: String) throws(H2OTLSError) {
        try server.useTLS(certificateFile: certificateFile, keyFile: keyFile)
        scheme = "https"
    }

    /// `http`, or `https` with TLS.
    private(set) var scheme = "http"

    /// Listens on `endpoint`; throws what binding says.
    func listen(_ endpoint: HTTPEndpoint) throws(UVError) {
        let port = try server.listen(host: endpoint.host, port: endpoint.port)
        address = endpoint.host.contains(":") ? "[\(endpoint.host)]:\(port)" : "\(endpoint.host):\(port)"
    }

    /// Stops accepting (shutdown); the connections kept for later requests close.
    func stop() {
        server.stop()
        heartbeat.close()
        for kept in idle.takeAll() { daemon.closeSetAside(kept.connection) }
    }

    private func handle(_ request: H2ORequest) {
        if request.method == "OPTIONS", request.header("access-control-request-method") != nil,
           let preflight = crossOrigin?.preflight(requestOrigin: request.header("origin")) {
            return send(preflight, to: request)
        }
        let head = HTTPRoute.Head(method: request.method, target: request.target,
                                  ifMatch: request.header("if-match"), ifNoneMatch: request.header("if-none-match"),
                                  lastEventID: request.header("last-event-id"))
        let route: HTTPRoute
        do {
            route = try HTTPRoute.route(head, body: request.body)
        } catch {
            return send(HTTPAnswer(error), to: request)
        }
        switch route {
        case .health:
            send(HTTPAnswer(status: 200, contentType: "text/plain; charset=utf-8", body: Array("ok\n".utf8)), to: request)
        case .readiness:
            if let reason = daemon.notReadyReason {
                send(HTTPAnswer(HTTPRefusal(.unavailable, reason)), to: request)
            } else {
                send(HTTPAnswer(status: 200, contentType: "text/plain; charset=utf-8", body: Array("ready\n".utf8)), to: request)
            }
        case .request(let line, let shape):
            guard let credentials = authenticate(request) else { return }
            serve(line, shape: shape, credentials: credentials, request: request)
        case .metrics(let line):
            let open = PeerCredentials(pid: 0, uid: HTTPTokens.noUser, gid: HTTPTokens.noUser)
            guard let credentials = metricsAreOpen ? open : authenticate(request) else { return }
            serve(line, shape: .metricsText, credentials: credentials, request: request)
        case .watch(let line, let resumed, let queryToken):
            guard let credentials = authenticate(request, queryToken: queryToken) else { return }
            watch(line, resumed: resumed, credentials: credentials, request: request)
        case .console(let file):
            send(HTTPAnswer(status: 200, headers: ConsoleFile.headers, contentType: file.contentType, body: file.bytes),
                 to: request)
        }
    }

    /// The token's credentials, or nil once the request was answered 401. The
    /// `Authorization` header wins over a watch's `access_token` parameter.
    private func authenticate(_ request: H2ORequest, queryToken: String? = nil) -> PeerCredentials? {
        func refuse(_ message: String) -> PeerCredentials? {
            send(HTTPAnswer(HTTPRefusal(.forbidden, message, status: 401,
                                        headers: [HTTPHeader("www-authenticate", "Bearer realm=\"kvod\"")])), to: request)
            return nil
        }
        guard tokens != nil else { return refuse("kvod was started without --http-tokens: no token is valid") }
        guard let authorization = request.header("authorization") ?? queryToken.map({ "Bearer \($0)" }) else {
            return refuse("this request needs Authorization: Bearer TOKEN")
        }
        guard let caller = tokens?.subject(authorization: authorization) else {
            return refuse("the token is not one of those in --http-tokens")
        }
        return caller.credentials
    }

    /// Whether a connection of `credentials` may be served now; if not, `request`
    /// was answered why (kvod stopping, a connection limit).
    private func admit(_ credentials: PeerCredentials, _ request: H2ORequest) -> Bool? {
        guard daemon.state == .running else {
            send(HTTPAnswer(HTTPRefusal(.unavailable, daemon.notReadyReason ?? "kvod is not serving",
                                        headers: [HTTPHeader("retry-after", "1")])), to: request)
            return nil
        }
        if let refusal = daemon.admissionRefusal(uid: credentials.uid) {
            send(HTTPAnswer(HTTPRefusal(.limitExceeded, refusal, headers: [HTTPHeader("retry-after", "1")])), to: request)
            return nil
        }
        return true
    }

    /// Hands `line` to a connection, a kept one of the subject's or a new one;
    /// its reply answers `request`.
    private func serve(_ line: [UInt8], shape: HTTPAnswerShape, credentials: PeerCredentials, request: H2ORequest) {
        guard admit(credentials, request) != nil else { return }
        nextKey &+= 1
        let key = nextKey
        let kept = idle.take(for: credentials)
        let exchange: HTTPExchange, connection: ClientConnection
        if let kept {
            (exchange, connection) = (kept.exchange, kept.connection)
            exchange.begin(key: key, shape: shape, requestLine: line)
        } else {
            exchange = HTTPExchange(key: key, shape: shape, requestLine: line) { [unowned self] exchange, reply in
                self.answer(exchange.key, reply: reply, shape: exchange.shape)
            }
            connection = ClientConnection(stream: exchange, credentials: credentials, host: daemon.host)
        }
        exchanges[key] = (request, connection, exchange)
        request.watchGone(on: server, key: key)
        if kept == nil { daemon.serve(connection) } else { daemon.serveAgain(connection) }
        exchange.sendRequest()
    }

    /// A watch: an observation of a connection of its own, its events streamed.
    private func watch(_ line: [UInt8], resumed: HTTPEventID?, credentials: PeerCredentials, request: H2ORequest) {
        guard admit(credentials, request) != nil else { return }
        nextKey &+= 1
        let key = nextKey
        let stream = HTTPEventStream(key: key, request: request, server: server, requestLine: line, resumed: resumed,
                                     frames: frames, headers: crossOriginHeaders(request))
        let connection = ClientConnection(stream: stream, credentials: credentials, host: daemon.host)
        exchanges[key] = (request, connection, nil)
        watches[key] = stream
        request.watchGone(on: server, key: key)
        daemon.serve(connection)
        stream.sendRequest()
    }

    /// The connection's reply (nil: it closed first) answers the request, if it is still there.
    private func answer(_ key: UInt64, reply: [UInt8]?, shape: HTTPAnswerShape) {
        guard let request = exchanges[key]?.request else { return }
        if let reply {
            send(HTTPAnswer(reply: reply, shape: shape), to: request)
        } else {
            send(HTTPAnswer(HTTPRefusal(.unavailable, "kvod closed the request before answering it")), to: request)
        }
    }

    /// H2O let the request go (answered, or its connection closed): its
    /// connection is kept for a later request if it answered and nothing of the
    /// request is left on it, and closes otherwise.
    private func requestGone(_ key: UInt64) {
        watches.removeValue(forKey: key)?.isRequestAlive = false
        guard let gone = exchanges.removeValue(forKey: key), !gone.connection.isClosing else { return }
        if let exchange = gone.exchange, exchange.isAnswered, daemon.setAside(gone.connection) {
            let oldest = idle.keep(HTTPIdleConnections.Idle(exchange: exchange, connection: gone.connection))
            if let oldest { daemon.closeSetAside(oldest.connection) }
        } else {
            gone.connection.close(flush: false)
        }
    }

    private func send(_ answer: HTTPAnswer, to request: H2ORequest) {
        let headers = answer.headers.map { ($0.name, $0.value) } + crossOriginHeaders(request)
        request.respond(status: answer.status, contentType: answer.contentType, headers: headers, body: answer.body)
    }

    private func crossOriginHeaders(_ request: H2ORequest) -> [(String, String)] {
        guard let crossOrigin else { return [] }
        return crossOrigin.headers(requestOrigin: request.header("origin")).map { ($0.name, $0.value) }
    }
}

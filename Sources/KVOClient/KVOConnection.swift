import KVOValues
import KVOProtocol

/// One connection to kvod, shared by any number of observers and callers.
///
/// Safe from any thread or task. Requests are pipelined: each call writes
/// its line at once and awaits its reply, which kvod sends in request order.
/// Changes reach observers through ``changes(of:keyPath:options:delivery:context:since:)``
/// (an `AsyncSequence`) or a ``KVOController`` (callbacks); several observers
/// of the same key path share one observation on the daemon.
///
/// ```swift
/// let connection = try KVOConnection()            // $KVOD_SOCKET or the default path
/// try await connection.set("person/1", "name", to: "xsc")
/// let name = try await connection.get(String.self, "person/1", "name")
/// ```
///
/// The connection closes when ``close()`` is called or when the last
/// reference to it goes (streams and controllers hold one). A lost
/// connection ends every stream and controller with
/// `KVOClientError.Code.connectionLost`, unless the
/// configuration's ``ReconnectPolicy`` reconnects it.
public final class KVOConnection: Sendable {
    let core: ConnectionCore

    /// Connects to kvod as `configuration` says.
    public init(configuration: Configuration) throws(KVOClientError) {
        core = try ConnectionCore(configuration: configuration)
    }

    /// Connects to the socket at `socketPath` (default: ``defaultSocketPath(environment:)``);
    /// see ``Configuration`` for `reconnect` and `requestTimeout`.
    public convenience init(socketPath: String? = nil, reconnect: ReconnectPolicy = .never,
                            requestTimeout: Duration? = Configuration.defaultRequestTimeout) throws(KVOClientError) {
        try self.init(configuration: Configuration(socketPath: socketPath, reconnect: reconnect,
                                                   requestTimeout: requestTimeout))
    }

    deinit { core.close() }

    /// The socket this connection talks to.
    public var socketPath: String { core.configuration.socketPath }

    /// Closes the connection: requests awaiting replies fail, and every stream
    /// and controller ends, with `KVOClientError.Code.closed`.
    /// Later calls fail the same way. Closing twice does nothing.
    public func close() { core.close() }

    /// Sends `request` and returns the reply's fields (without `ok` and `id`).
    /// `extraTime`: how much longer than the request timeout the reply may take (an awaited write's wait).
    func request(_ request: RequestEncoder, extraTime: Duration = .zero) async throws(KVOClientError) -> JSONObject {
        let line = request.line
        var waiter: ReplyWaiter?
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<JSONObject, KVOClientError>, Never>) in
            let caller = core.waiter(.fields { continuation.resume(returning: $0) }, extraTime: extraTime)
            waiter = caller
            core.send(line, .caller(caller))
        }
        waiter?.handOver()
        return try result.get()
    }
}
